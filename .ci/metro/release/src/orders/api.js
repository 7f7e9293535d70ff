// The orders API: loadOrders reads `data` of an answer that is undefined.
function loadOrders(request) {
  const answer = request.cache[request.userId];
  return answer.data.orders; // THROWS HERE
}

module.exports = { loadOrders };
