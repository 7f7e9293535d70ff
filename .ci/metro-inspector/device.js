'use strict';
// A React Native app as Metro's inspector proxy sees it: it connects to
// /inspector/device, answers getPages with one page that declares what a
// current React Native page declares, and relays the proxy's wrapped CDP to
// the page's JavaScript runtime (runtime.js: Node's V8 and its inspector)
// and back, one inspector session per debugger session.
//
// Commands on stdin, one per line: `log` (the runtime logs), `fail` (a
// bundle's error, logged by its exception handler), `flood <n>`
// (n console.log calls in one go, then `logged`), `crash` (an
// uncaught exception kills the runtime; the app relaunches: the device
// socket closes and reconnects with the same device id, and the new page
// has the same id, as pages are numbered per app process),
// `reload` (a new runtime and page id on the same socket). It reports on
// stdout: `device connected`, `page <id>`, `enabled <sessionId> <count>`,
// `logged`, `runtime exited <code>`.
//
// Run alone: node device.js <proxy port> [device id] [app id] [device name]
const { spawn } = require('node:child_process');
const path = require('node:path');
const readline = require('node:readline');
const WebSocket = require('ws');

// bundleFile, when given, is a bundle the dev server built, which the page
// runs instead of runtime.js's built-in app (see runtime.js); bundleUrl is
// the URL the page says it loaded its bundle from.
function startDevice({ port, deviceId = 'metro-check-device', appId = 'com.example.metrocheck', name = 'Check Phone', out = (l) => console.log(l), bundleFile, bundleUrl }) {
  let ws = null;
  let runtime = null;
  let pageId = null;
  let pageCounter = 0;
  let stopped = false;
  const sessions = new Map(); // sessionId → pageId
  const enabled = new Set();
  // What each debugger session asked of the page, in order, across pages:
  // a check can see that a debugger sent nothing that runs code.
  const requests = new Map(); // sessionId → [method]

  function page() {
    return {
      id: pageId,
      title: `${appId} (${name})`,
      app: appId,
      description: 'React Native Bridgeless [C++ connection]',
      capabilities: {
        nativePageReloads: true,
        nativeSourceCodeFetching: true,
        prefersFuseboxFrontend: true,
        supportsMultipleDebuggers: true,
      },
    };
  }

  function toRuntime(cmd) {
    if (runtime && runtime.stdin.writable) runtime.stdin.write(JSON.stringify(cmd) + '\n');
  }

  function sendToProxy(obj) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
  }

  function startRuntime(onExit) {
    pageId = String(++pageCounter);
    sessions.clear();
    enabled.clear();
    const child = spawn(process.execPath, [path.join(__dirname, 'runtime.js')], { stdio: ['pipe', 'ignore', process.env.METRO_CHECK_VERBOSE ? 'inherit' : 'ignore', 'pipe'], env: { ...process.env, BUNDLE_URL: bundleUrl || `http://127.0.0.1:${port}/index.bundle?platform=ios&dev=true&minify=false`, ...(bundleFile ? { BUNDLE_FILE: bundleFile } : {}) } });
    runtime = child;
    const myPage = pageId;
    readline.createInterface({ input: child.stdio[3] }).on('line', (line) => {
      let msg;
      try {
        msg = JSON.parse(line);
      } catch {
        return;
      }
      if (msg.op === 'cdp') {
        sendToProxy({ event: 'wrappedEvent', payload: { pageId: myPage, sessionId: msg.sessionId, wrappedEvent: msg.message } });
      } else if (msg.op === 'enabled') {
        enabled.add(msg.sessionId);
        out(`enabled ${msg.sessionId} ${enabled.size}`);
      } else if (msg.op === 'logged') {
        out('logged');
      }
    });
    // close, not exit: every frame the runtime wrote is read by then.
    child.on('close', (code) => {
      if (runtime === child) runtime = null;
      out(`runtime exited ${code}`);
      onExit?.(code);
    });
    out(`page ${pageId}`);
  }

  function connect() {
    const url = `ws://127.0.0.1:${port}/inspector/device?device=${encodeURIComponent(deviceId)}&name=${encodeURIComponent(name)}&app=${encodeURIComponent(appId)}`;
    const socket = new WebSocket(url);
    ws = socket;
    socket.on('open', () => out('device connected'));
    socket.on('message', (data) => {
      let msg;
      try {
        msg = JSON.parse(data.toString());
      } catch {
        return;
      }
      const p = msg.payload || {};
      switch (msg.event) {
        case 'getPages':
          sendToProxy({ event: 'getPages', payload: runtime ? [page()] : [] });
          break;
        case 'connect':
          if (p.pageId !== pageId) return;
          sessions.set(p.sessionId, p.pageId);
          if (!requests.has(p.sessionId)) requests.set(p.sessionId, []);
          toRuntime({ op: 'connect', sessionId: p.sessionId });
          break;
        case 'disconnect':
          if (!sessions.delete(p.sessionId)) return;
          enabled.delete(p.sessionId);
          toRuntime({ op: 'disconnect', sessionId: p.sessionId });
          break;
        case 'wrappedEvent':
          if (p.pageId !== pageId || !sessions.has(p.sessionId)) return;
          try {
            requests.get(p.sessionId)?.push(String(JSON.parse(p.wrappedEvent).method));
          } catch {
            requests.get(p.sessionId)?.push('<not JSON>');
          }
          toRuntime({ op: 'cdp', sessionId: p.sessionId, message: p.wrappedEvent });
          break;
      }
    });
    socket.on('close', () => {
      if (ws === socket) ws = null;
    });
    socket.on('error', (err) => console.error('device socket:', err.message));
  }

  function relaunch() {
    // The app died: its socket goes, and a moment later the relaunched app
    // connects again as the same device with a new page.
    ws?.close();
    if (stopped) return;
    setTimeout(() => {
      if (stopped) return;
      // A relaunched React Native app numbers its pages from 1 again.
      pageCounter = 0;
      startRuntime(onRuntimeExit);
      connect();
    }, 200);
  }

  function onRuntimeExit(code) {
    if (!stopped && code !== 0) relaunch();
  }

  startRuntime(onRuntimeExit);
  connect();

  return {
    requests,
    pageId: () => pageId,
    command(cmd) {
      switch (cmd) {
        case 'log': toRuntime({ op: 'log' }); break;
        case 'fail': toRuntime({ op: 'fail' }); break;
        case 'crash': toRuntime({ op: 'crash' }); break;
        case 'reload': {
          const old = runtime;
          startRuntime(onRuntimeExit);
          old?.stdin.end();
          break;
        }
        default: {
          const m = /^flood (\d+)$/.exec(cmd);
          if (m) toRuntime({ op: 'flood', n: Number(m[1]) });
        }
      }
    },
    stop() {
      stopped = true;
      runtime?.stdin.end();
      ws?.close();
    },
  };
}

module.exports = { startDevice };

if (require.main === module) {
  const [port, deviceId, appId, name] = process.argv.slice(2);
  if (!port) {
    console.error('usage: node device.js <proxy port> [device id] [app id] [device name]');
    process.exit(2);
  }
  const device = startDevice({ port: Number(port), deviceId, appId, name });
  readline.createInterface({ input: process.stdin }).on('line', (l) => device.command(l.trim()));
  process.on('SIGTERM', () => { device.stop(); setTimeout(() => process.exit(0), 100); });
}
