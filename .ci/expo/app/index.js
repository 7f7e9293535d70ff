// The app's entry. On a phone React Native would render it; here the device
// stand-in runs the bundle in Node's V8 and drives it through globalThis.app.
const { guard } = require('exceptions-manager');
const { loadCart } = require('./src/cart');
const { onCheckout } = require('./src/screens/Checkout');

globalThis.app = {
  // Three console calls with their levels, as the app's own code makes them.
  log() {
    loadCart();
  },
  // A tap on "Checkout" that throws: React Native's exception handler
  // catches it and logs it with console.error(e).
  fail() {
    guard(() => onCheckout({ id: 'order-7', items: [] }));
  },
};
