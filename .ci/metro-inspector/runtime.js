'use strict';
// The app's JavaScript runtime behind one page: Node's own V8 with its
// inspector (node:inspector), so what debuggers get is real CDP from V8.
// device.js starts it as a child process, one per page.
//
// In (stdin, JSON lines): {op:"connect"|"disconnect", sessionId},
// {op:"cdp", sessionId, message:"<CDP request text>"}, {op:"log"},
// {op:"flood", n} (n console.log calls, then "flood done"), {op:"crash"},
// {op:"fail"} (a bundle's error that its exception handler logs).
// Out (fd 3, JSON lines, written synchronously so that frames sent while the
// process dies on an uncaught exception still get out):
// {op:"cdp", sessionId, message:"<CDP text>"}, {op:"enabled", sessionId},
// {op:"logged"}.
//
// V8 reports an uncaught exception to its inspector (Runtime.exceptionThrown)
// only when it is fatal and the inspector is open (node_errors.cc), so the
// inspector is opened on a loopback port nobody uses and `crash` throws from
// a timer: the runtime dies, as an app's JS does on a fatal error, and the
// device starts a new one.
const inspector = require('node:inspector');
const fs = require('node:fs');
const readline = require('node:readline');

inspector.open(0, '127.0.0.1', false);

const OUT = 3;
function send(obj) {
  fs.writeSync(OUT, JSON.stringify(obj) + '\n');
}

const sessions = new Map();

function connect(sessionId) {
  if (sessions.has(sessionId)) return;
  const session = new inspector.Session();
  session.connect();
  session.on('inspectorNotification', (note) => {
    send({ op: 'cdp', sessionId, message: JSON.stringify(note) });
  });
  sessions.set(sessionId, session);
}

// Inspector errors come as "Inspector error <code>: <message>".
function cdpError(err) {
  const m = /Inspector error (-?\d+): (.*)$/s.exec(err.message || '');
  return m ? { code: Number(m[1]), message: m[2] } : { code: -32603, message: String(err.message || err) };
}

function request(sessionId, text) {
  const session = sessions.get(sessionId);
  let req;
  try {
    req = JSON.parse(text);
  } catch {
    return;
  }
  if (!session || typeof req.method !== 'string') {
    if (req && req.id !== undefined) send({ op: 'cdp', sessionId, message: JSON.stringify({ id: req.id, error: { code: -32000, message: 'no session' } }) });
    return;
  }
  session.post(req.method, req.params || {}, (err, result) => {
    const reply = err ? { id: req.id, error: cdpError(err) } : { id: req.id, result: result || {} };
    send({ op: 'cdp', sessionId, message: JSON.stringify(reply) });
    if (!err && req.method === 'Runtime.enable') send({ op: 'enabled', sessionId });
  });
}

// The app's own code, compiled under the URL Metro serves its bundle at
// (BUNDLE_URL), so that its frames in console and exception stacks name the
// bundle as a React Native app's do: what /symbolicate takes.
const vm = require('node:vm');
const bundleUrl = process.env.BUNDLE_URL || 'http://127.0.0.1:8081/index.bundle?platform=ios&dev=true&minify=false';
const report = () => send({ op: 'logged' });
// With BUNDLE_FILE, the app is a real bundle a dev server built (the check
// fetched it there), run under the URL in its own `//# sourceURL=`, as an
// engine names it. The bundle sets globalThis.app to {log, fail}: `log`
// and `fail` call those; `crash` and `flood` are the built-in app's only.
const app = process.env.BUNDLE_FILE ? runBundle(process.env.BUNDLE_FILE) : vm.runInThisContext(`(function (report) {
  function loadCart() {
    console.log('metro-check: cart loaded with 3 items');
  }
  function renderCart() {
    console.warn('metro-check: slow render of CartScreen');
  }
  function pay() {
    console.error('metro-check: payment failed', { code: 'E_CARD_DECLINED', amount: 42.5, retry: { after: 3, unit: 's' } });
  }
  return {
    log() {
      loadCart();
      renderCart();
      pay();
      report();
    },
    crash() {
      setTimeout(function onPressCheckout() {
        const order = undefined;
        return order.total;
      }, 0);
    },
    flood(n) {
      for (let i = 0; i < n; i++) {
        console.log('metro-check: flood', i, { i, pad: 'x'.repeat(100) });
      }
      console.log('metro-check: flood done');
      report();
    },
  };
})`, { filename: bundleUrl })(report);

function runBundle(file) {
  const code = fs.readFileSync(file, 'utf8');
  const m = /\/\/# sourceURL=(\S+)\s*$/.exec(code);
  // Metro's prelude redefines properties of process.env, which Node's own
  // process.env refuses: give the bundle a plain copy.
  process.env = { ...process.env };
  vm.runInThisContext(code, { filename: m ? m[1] : bundleUrl });
  const bundled = globalThis.app || {};
  const call = (name) => () => {
    if (typeof bundled[name] === 'function') bundled[name]();
    report();
  };
  return { log: call('log'), fail: call('fail'), crash: call('crash'), flood: call('flood') };
}

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch {
    return;
  }
  switch (cmd.op) {
    case 'connect': connect(cmd.sessionId); break;
    case 'disconnect': {
      const s = sessions.get(cmd.sessionId);
      if (s) s.disconnect();
      sessions.delete(cmd.sessionId);
      break;
    }
    case 'cdp': request(cmd.sessionId, cmd.message); break;
    case 'log': app.log(); break;
    case 'fail': app.fail?.(); break;
    case 'crash': app.crash(); break;
    case 'flood': app.flood(Number(cmd.n) || 1000); break;
  }
});
// The device closing stdin ends the runtime.
rl.on('close', () => process.exit(0));
