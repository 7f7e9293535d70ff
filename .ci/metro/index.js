// The app: a tap on "add to cart" that fails, as a stack in Metro's bundle.
const { handleAdd } = require('./src/cart');

try {
  handleAdd({ id: 'sku-1' });
} catch (e) {
  globalThis.__fixtureStack = e.stack;
}
