// The checkout screen: the line below that throws is the throw site a
// mapped stack must name.
function onCheckout(order) {
  if (order.items.length === 0) {
    throw new Error('expo-check: checkout of an empty order ' + order.id); // THROWS HERE
  }
  return order;
}

module.exports = { onCheckout };
