// The cart screen's data: what it logs is what the check reads back.
function loadCart() {
  console.log('expo-check: cart loaded with 3 items');
  console.warn('expo-check: slow render of CartScreen');
  console.error('expo-check: payment failed', { code: 'E_CARD_DECLINED', amount: 42.5 });
}

module.exports = { loadCart };
