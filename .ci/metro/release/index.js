// A release build's app whose JavaScript throws on start: the orders
// screen reads the answer of an API call that never came.
const { showOrders } = require('./src/orders/screen');

showOrders({ userId: 7 });
