// Copied to the project's node_modules/exceptions-manager/index.js: React
// Native's exception handler stand-in. React Native reports an uncaught
// error from its ExceptionsManager (in node_modules, a frame Expo collapses)
// with console.error(e), so the throw site is only in the Error's own stack.
function handleException(e, isFatal) {
  console.error(e);
  return isFatal;
}

function guard(fn) {
  try {
    return fn();
  } catch (e) {
    handleException(e, false);
  }
}

module.exports = { guard, handleException };
