// A cart whose add fails: the line below that throws is what a mapped
// stack must name.
function handleAdd(item) {
  if (!item.price) {
    throw new Error('add failed: ' + item.id + ' has no price'); // THROWS HERE
  }
  return item;
}

module.exports = { handleAdd };
