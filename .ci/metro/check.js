// The real Metro against devtools-mcp: Metro serves this folder's small
// app, the app's bundle runs here and throws, an adapter speaking the Wire
// Protocol logs the error with the stack the engine printed (frames in the
// bundle), and debug_get_logs, read from the devtools-mcp binary over
// stdio, must name the line that threw in src/cart.js, mapped by Metro's
// own /symbolicate, in the log's stack and in the Error's stack its
// message holds.
//
// usage: node check.js <path to the devtools-mcp binary>
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const vm = require('node:vm');
const Metro = require('metro');
const WebSocket = require('ws');
const { startServer, freePort, sleep } = require('../lib/mcp.js');

const binary = process.argv[2];
if (!binary) {
  console.error('usage: node check.js <devtools-mcp binary>');
  process.exit(2);
}
const deadline = setTimeout(() => fail('did not finish within 4 minutes'), 4 * 60 * 1000);
const cleanups = [];

function fail(msg) {
  console.error('FAIL: ' + msg);
  for (const c of cleanups.reverse()) {
    try { c(); } catch {}
  }
  process.exit(1);
}

// Where src/cart.js throws: the line, and the column of `new Error`, both
// 1-based as engines print them (Metro counts columns from 0: an answer
// off by one shows here).
function throwingAt() {
  const lines = fs.readFileSync(path.join(__dirname, 'src', 'cart.js'), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes('THROWS HERE'));
  if (i < 0) fail('src/cart.js has no THROWS HERE line');
  return `${i + 1}:${lines[i].indexOf('new Error') + 1}`;
}

// A Wire Protocol adapter whose console holds one error log with stack,
// and the Error's own stack in its message too, as a console prints
// console.error('add failed:', e).
function connectAdapter(port, stack) {
  const event = {
    stream: 'console', seq: 1, type: 'log', timestamp: new Date().toISOString(),
    payload: { level: 'error', message: 'add failed: ' + stack, stack },
  };
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/`);
    ws.on('error', reject);
    ws.on('open', () => {
      ws.send(JSON.stringify({
        type: 'handshake', protocolVersion: 1, sessionId: 'metro-fixture', adapterVersion: '0.0.1',
        startedAt: new Date().toISOString(), app: { name: 'MetroFixture', version: '1.0.0' },
        device: { platform: 'ios', isEmulator: true }, streams: [{ name: 'console', active: true }],
      }));
    });
    ws.on('message', (data) => {
      const msg = JSON.parse(String(data));
      if (msg.type === 'handshake_ack') return resolve(ws);
      if (msg.type === 'handshake_error') return reject(new Error('handshake refused: ' + JSON.stringify(msg)));
      if (msg.type !== 'request') return;
      let result;
      if (msg.method === 'events.query') {
        result = { events: msg.params.stream === 'console' ? [event] : [], hasMore: false, oldestSeq: 1, latestSeq: 1 };
      } else if (msg.method === 'streams.list') {
        result = { streams: [{ name: 'console', active: true, eventCount: 1, latestSeq: 1, oldestSeq: 1, hasSnapshot: false, lastEventAt: event.timestamp }] };
      } else {
        ws.send(JSON.stringify({ type: 'response', id: msg.id, error: { code: 'UNKNOWN_METHOD', message: msg.method } }));
        return;
      }
      ws.send(JSON.stringify({ type: 'response', id: msg.id, result }));
    });
  });
}

async function main() {
  // 1. Metro, serving this folder.
  const metroPort = await freePort();
  const config = await Metro.loadConfig({ config: require.resolve('./metro.config.js'), port: metroPort });
  const { httpServer } = await Metro.runServer(config, { host: '127.0.0.1' });
  cleanups.push(() => httpServer.close());
  const origin = `http://127.0.0.1:${metroPort}`;

  // 2. The app's bundle, run here: its stack names the bundle's URL (the
  // JavaScriptCore-safe form Metro writes in sourceURL).
  const bundleURL = `${origin}/index.bundle?platform=ios&dev=true&minify=false`;
  const res = await fetch(bundleURL);
  if (!res.ok) fail(`bundle: ${res.status} ${await res.text()}`);
  const ctx = vm.createContext({});
  vm.runInContext(await res.text(), ctx, { filename: bundleURL });
  const stack = ctx.__fixtureStack;
  if (typeof stack !== 'string' || !stack.includes(`${origin}/index.bundle`)) fail('the bundle threw no stack in the bundle: ' + stack);
  console.log('stack the engine printed:\n' + stack);

  // 3. devtools-mcp, with Metro there, and the adapter.
  const wsPort = await freePort();
  const mcp = startServer(binary, { WS_PORT: String(wsPort), METRO_URL: origin, REACTOTRON_PORT: '0', LOG_LEVEL: 'warn' },
    { name: 'metro-check', answerMs: 30000, stderr: 'inherit', fail });
  cleanups.push(() => mcp.child.kill());
  mcp.child.on('exit', (code) => { if (code !== 0 && code !== null) fail('devtools-mcp exited with ' + code); });
  await mcp.initialize();
  let ws;
  for (let i = 0; !ws; i++) {
    try {
      ws = await connectAdapter(wsPort, stack);
    } catch (e) {
      if (i > 100) fail('adapter could not connect: ' + e.message);
      await sleep(100);
    }
  }
  cleanups.push(() => ws.terminate());

  // 4. debug_get_logs: the frame that threw, in source. Metro may take
  // longer than an answer waits the first time: read again, as an agent would.
  const at = throwingAt();
  let out;
  for (let i = 0; i < 20; i++) {
    const reply = await mcp.request('tools/call', { name: 'debug_get_logs', arguments: {} });
    if (!reply.result || reply.result.isError) fail('debug_get_logs: ' + JSON.stringify(reply));
    out = reply.result.structuredContent;
    if (out.entries.length === 1 && out.entries[0].symbolicated) break;
    console.log('not mapped yet: ' + JSON.stringify(out.symbolication));
    await sleep(500);
  }
  const entry = out.entries[0];
  console.log('stack debug_get_logs answered:\n' + entry.stack);
  const want = `\n    at handleAdd (src/cart.js:${at})\n`;
  if (!entry.symbolicated || !entry.stack.includes(want)) {
    fail(`want a frame "at handleAdd (src/cart.js:${at})"; got ${JSON.stringify(out)}`);
  }
  console.log('message debug_get_logs answered:\n' + entry.message);
  if (!entry.message.includes(want.trimEnd())) {
    fail(`want the stack in the message mapped, with "at handleAdd (src/cart.js:${at})"; got ${JSON.stringify(entry.message)}`);
  }
  console.log(`ok: the frame that threw maps to src/cart.js:${at} through the real Metro ${require('metro/package.json').version}`);
  await mcp.stop();
  ws.terminate();
  httpServer.close();
  clearTimeout(deadline);
  process.exit(0);
}

main().catch((e) => fail(e && e.stack || String(e)));
