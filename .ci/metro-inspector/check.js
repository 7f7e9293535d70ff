'use strict';
// The check behind .ci/metro-inspector.sh: devtools-mcp against Metro's real
// inspector proxy (@react-native/dev-middleware) and an app stand-in whose
// page is Node's own V8 inspector (device.js, runtime.js).
//
//   node check.js <devtools-mcp binary>   every scenario below
//   node check.js --harness               the parts alone, with a debugger of
//                                         our own instead of devtools-mcp
//
// Scenarios, each with its own proxy, app and devtools-mcp:
//   beside   the proxy's defaults (pages keep supportsMultipleDebuggers):
//            listed within 3 s, console and exception in debug_get_logs,
//            React Native DevTools on the same page keeps working, a
//            relaunched app (same page id) and a reloaded one (new page id)
//            stay one session, nothing sent runs code.
//   single   a proxy that allows one debugger per page: devtools-mcp does
//            not attach, says why in debug_health_check, and React Native
//            DevTools keeps the page.
//   takeover the same proxy with METRO_ATTACH_EXCLUSIVE=true: devtools-mcp
//            attaches (closing DevTools, as that setting says); when
//            DevTools comes back, devtools-mcp leaves it the page.
//   flood    5 000 console calls in one go: devtools-mcp keeps answering,
//            keeps the newest, and stays under 100 MB.
//   twins    two devices of one name (two emulators of one image) run the
//            app: two sessions told apart by the proxy's logicalDeviceId,
//            both attached, each with its own logs; one relaunching stays
//            its session and the other is untouched.
//
// With RECORD_DIR set, the frames the proxy delivered (/json/list, console
// calls, the exception) are written there as JSON for Go tests to replay.
//
// Prints one PASS or FAIL line per step; exits 1 on the first failure.
const fs = require('node:fs');
const path = require('node:path');
const { startProxy } = require('./proxy.js');
const { startDevice } = require('./device.js');
const { attach } = require('./debugger.js');
const lib = require('../lib/mcp.js');

const APP_ID = 'com.example.metrocheck';
const DEVICE_ID = 'metro-check-device';
const LISTED_WITHIN_MS = 3000; // the issue's goal
const STEP_MS = 10000; // how long any other step may take before it fails
const POLL_MS = 100;
// How long a debugger that must be left alone is watched: over two of the
// link's one-second polls of /json/list.
const LEFT_ALONE_MS = 2500;
// Methods that run code in the app, pause it or change it: a read-only link
// never sends them.
const FORBIDDEN = /^(Debugger\.|Runtime\.(evaluate|callFunctionOn|runScript|compileScript|setCustomObjectFormatterEnabled|terminateExecution)|Page\.|HeapProfiler\.|Profiler\.|Overlay\.|Emulation\.)/;
// The flood: console calls in one go, each a string, a number and an
// object, and the bound on devtools-mcp's peak resident size meanwhile.
const FLOOD = 5000;
const MAX_RSS_KB = 100 * 1024;
// What dev-middleware takes to force supportsMultipleDebuggers off.
const ONE_DEBUGGER = { enableStandaloneFuseboxShell: false };

let cleanups = [];

const { pass, fail, failed, untilOrFail } = require('../lib/steps.js');
const { sleep } = lib;
const until = (what, ms, fn) => untilOrFail(what, ms, fn, POLL_MS);

// devtools-mcp over stdio pointed at the proxy, initialized; ended with the
// scenario.
async function startMCP(binary, base, env = {}) {
  const server = await lib.startMCP(binary, { METRO_URL: base, ...env }, { name: 'metro-inspector-check', answerMs: STEP_MS, fail });
  cleanups.push(() => server.stop(1000));
  return server;
}

function record(dir, name, value) {
  if (!dir) return;
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, name), JSON.stringify(value, null, 2) + '\n');
}

async function listPages(base) {
  try {
    const res = await fetch(`${base}/json/list`);
    return await res.json();
  } catch {
    return [];
  }
}

// startApp starts a proxy and an app under it, and waits for its page.
async function startApp(experiments) {
  const proxy = await startProxy({ experiments });
  cleanups.push(() => proxy.server.close());
  const base = proxy.serverBaseUrl;
  const lines = [];
  const device = startDevice({ port: proxy.port, deviceId: DEVICE_ID, appId: APP_ID, out: (l) => lines.push(l) });
  cleanups.push(() => device.stop());
  const pages = await until('the page is in the proxy\'s /json/list', STEP_MS, async () => {
    const list = await listPages(base);
    return list.length ? list : null;
  });
  return { proxy, base, device, lines, pages, page: pages[0], enabledCount: () => lines.filter((l) => l.startsWith('enabled ')).length };
}

// A debugger standing for React Native DevTools: attached with the proxy's
// own origin, Runtime enabled, as DevTools does on opening.
async function openDevTools(app) {
  const devtools = await attach(app.page.webSocketDebuggerUrl, app.base);
  cleanups.push(() => devtools.close());
  await devtools.send('Runtime.enable');
  return devtools;
}

async function answered(devtools) {
  if (devtools.closed) return false;
  const answer = await Promise.race([devtools.send('Runtime.evaluate', { expression: '6 * 7', returnByValue: true }).catch(() => null), sleep(STEP_MS).then(() => null)]);
  return answer?.result?.value === 42;
}

function appSessions(health) {
  return (health.sessions || []).filter((s) => s.via === 'metro' && JSON.stringify(s).includes(APP_ID));
}

function metroPages(health) {
  return health.server?.metro?.pages || [];
}

async function besideDevTools(binary, recordDir) {
  console.log('--- beside: a page that takes several debuggers (the proxy\'s defaults)');
  const app = await startApp(undefined);
  const { page, base, device, lines } = app;
  if (!page.reactNative?.capabilities?.supportsMultipleDebuggers) fail(`the proxy does not pass supportsMultipleDebuggers through: ${JSON.stringify(page.reactNative)}`);
  pass(`proxy on ${base} lists the page ${page.id} (${page.title}), supportsMultipleDebuggers true`);
  record(recordDir, 'json_list.json', app.pages);

  // React Native DevTools, attached before devtools-mcp comes.
  const devtools = await openDevTools(app);
  pass('a second debugger (React Native DevTools stand-in) attached with Origin and enabled Runtime');

  let server = null;
  let own = null;
  let session = null;
  if (!binary) {
    own = await attach(page.webSocketDebuggerUrl, 'http://localhost:8081');
    cleanups.push(() => own.close());
    await own.send('Runtime.enable');
  } else {
    const started = Date.now();
    server = await startMCP(binary, base);
    let lastHealth = null;
    session = await until('devtools-mcp lists the app in debug_health_check', STEP_MS, async () => {
      lastHealth = await server.call('debug_health_check');
      return appSessions(lastHealth)[0];
    }).catch((e) => {
      if (lastHealth) console.log(`last debug_health_check: ${JSON.stringify(lastHealth).slice(0, 2000)}`);
      throw e;
    });
    const listedMs = Date.now() - started;
    console.log(`measured: app listed in debug_health_check ${listedMs} ms after devtools-mcp started (goal ${LISTED_WITHIN_MS} ms)`);
    if (listedMs > LISTED_WITHIN_MS) fail(`app listed after ${listedMs} ms, over the ${LISTED_WITHIN_MS} ms goal`);
    pass(`devtools-mcp lists the app as session ${session.id} via metro in ${listedMs} ms`);
  }

  // The link's Runtime.enable reaches the page; then the app logs.
  await until('the second debugger\'s Runtime.enable reaches the page (devtools-mcp attached and enabled Runtime)', STEP_MS, async () => app.enabledCount() >= 2);
  pass('both debuggers enabled Runtime on the one page');
  device.command('log');
  await until('the app logged', STEP_MS, async () => lines.includes('logged'));
  const consoleCalls = await until('React Native DevTools got the three console calls', STEP_MS, async () => {
    const calls = devtools.events.filter((e) => e.method === 'Runtime.consoleAPICalled' && JSON.stringify(e.params.args).includes('metro-check:'));
    return calls.length >= 3 ? calls : null;
  });
  record(recordDir, 'console_log_string.json', consoleCalls.find((e) => e.params.type === 'log'));
  record(recordDir, 'console_error_object.json', consoleCalls.find((e) => e.params.type === 'error'));

  const wantLogs = ['metro-check: cart loaded with 3 items', 'metro-check: slow render of CartScreen', 'metro-check: payment failed', 'E_CARD_DECLINED'];
  if (server) {
    let lastLogs = null;
    await until('debug_get_logs returns the console output (log, warn, error with its object)', STEP_MS, async () => {
      lastLogs = await server.call('debug_get_logs', { session: session.id, contains: 'metro-check' });
      const text = JSON.stringify(lastLogs);
      return wantLogs.every((w) => text.includes(w));
    }).catch((e) => {
      console.log(`last debug_get_logs: ${JSON.stringify(lastLogs).slice(0, 3000)}`);
      throw e;
    });
    const levels = (lastLogs.entries || []).map((e) => e.level).join(',');
    pass(`debug_get_logs has the console output (levels ${levels})`);
  } else {
    await until('our debugger got the console calls', STEP_MS, async () =>
      own.events.filter((e) => e.method === 'Runtime.consoleAPICalled' && JSON.stringify(e.params.args).includes('metro-check:')).length >= 3);
    pass('our own debugger got the three console calls');
  }

  // React Native DevTools still works beside the other debugger.
  if (devtools.closed) fail(`React Native DevTools' socket was closed: ${JSON.stringify(devtools.closed)}`);
  if (!(await answered(devtools))) fail('React Native DevTools\' request went unanswered or wrong');
  pass('React Native DevTools stays connected and is answered beside the other debugger');

  // An uncaught exception: the runtime dies, the app relaunches.
  const before = lines.length;
  device.command('crash');
  const exception = await devtools.waitFor((e) => e.method === 'Runtime.exceptionThrown', STEP_MS, 'Runtime.exceptionThrown at React Native DevTools');
  record(recordDir, 'exception_thrown.json', exception);
  pass('the page reported Runtime.exceptionThrown (real, from V8) and died');
  if (server) {
    let lastLogs = null;
    await until('debug_get_logs returns the uncaught exception with its stack', STEP_MS, async () => {
      lastLogs = await server.call('debug_get_logs', { session: session.id, level: 'error' });
      const text = JSON.stringify(lastLogs);
      return text.includes("reading 'total'") && text.includes('onPressCheckout');
    }).catch((e) => {
      console.log(`last debug_get_logs: ${JSON.stringify(lastLogs).slice(0, 3000)}`);
      throw e;
    });
    pass('debug_get_logs has the uncaught exception, with onPressCheckout in its stack');
  }

  // The relaunched app (same device, and its page numbered from 1 again,
  // so the same page id) is the same session.
  await until('the relaunched app\'s page is listed', STEP_MS, async () => lines.slice(before).includes('device connected') &&
    (await listPages(base)).find((p) => p.reactNative?.logicalDeviceId === DEVICE_ID));
  if (!server) {
    pass('the relaunched app is listed again');
    return;
  }
  const relaunched = Date.now();
  await until('devtools-mcp attached to the relaunched app\'s page and enabled Runtime', STEP_MS, async () =>
    lines.slice(before).some((l) => l.startsWith('enabled ')));
  console.log(`measured: devtools-mcp enabled Runtime on the relaunched app's page ${Date.now() - relaunched} ms after it was listed`);
  device.command('log');
  const mine = appSessions(await server.call('debug_health_check'));
  if (mine.length !== 1) fail(`after the relaunch the app is ${mine.length} sessions, want 1: ${JSON.stringify(mine)}`);
  await until('debug_get_logs has the relaunched app\'s logs in the same session', STEP_MS, async () => {
    const logs = await server.call('debug_get_logs', { session: mine[0].id, contains: 'cart loaded' });
    return (logs.entries || []).length >= 2;
  });
  pass(`the relaunched app (same page id, new connection) is still session ${mine[0].id}, and its new logs arrive there`);

  // A reload that makes a new page id on the same device connection (as
  // React Native did before pages survived reloads): the old page's
  // debugger sockets stay open and silent, the new page must be attached.
  const beforeReload = lines.length;
  device.command('reload');
  const reloaded = Date.now();
  await until('devtools-mcp attached to the reloaded app\'s new page and enabled Runtime', STEP_MS, async () =>
    lines.slice(beforeReload).some((l) => l.startsWith('enabled ')));
  console.log(`measured: devtools-mcp enabled Runtime on the new page ${Date.now() - reloaded} ms after the reload`);
  device.command('log');
  await until('debug_get_logs has the reloaded app\'s logs in the same session', STEP_MS, async () => {
    const logs = await server.call('debug_get_logs', { session: mine[0].id, contains: 'cart loaded' });
    return (logs.entries || []).length >= 3;
  });
  const afterReload = appSessions(await server.call('debug_health_check'));
  if (afterReload.length !== 1 || afterReload[0].id !== mine[0].id) fail(`after the reload the app is ${JSON.stringify(afterReload)}, want the one session ${mine[0].id}`);
  pass(`after a reload with a new page id (${device.pageId()}) the app is still session ${mine[0].id}, and its new logs arrive there`);

  // devtools-mcp asked nothing that runs code or pauses the app.
  const sessions = [...device.requests.entries()];
  const devtoolsSession = sessions[0][0];
  const sent = new Set();
  for (const [sid, methods] of sessions) if (sid !== devtoolsSession) methods.forEach((m) => sent.add(m));
  const bad = [...sent].filter((m) => FORBIDDEN.test(m));
  if (bad.length) fail(`devtools-mcp sent methods that run code or pause the app: ${bad.join(', ')}`);
  pass(`devtools-mcp sent only: ${[...sent].sort().join(', ')}`);
}

async function singleDebugger(binary) {
  console.log('--- single: a proxy that allows one debugger per page');
  const app = await startApp(ONE_DEBUGGER);
  if (app.page.reactNative?.capabilities?.supportsMultipleDebuggers !== false) fail(`want supportsMultipleDebuggers false from this proxy: ${JSON.stringify(app.page.reactNative)}`);
  const devtools = await openDevTools(app);
  const server = await startMCP(binary, app.base);
  let lastHealth = null;
  const why = await until('debug_health_check says why the page is not attached', STEP_MS, async () => {
    lastHealth = await server.call('debug_health_check');
    return metroPages(lastHealth).find((p) => !p.attached && p.notAttached);
  }).catch((e) => {
    if (lastHealth) console.log(`last debug_health_check: ${JSON.stringify(lastHealth).slice(0, 2000)}`);
    throw e;
  });
  if (!why.notAttached.includes('METRO_ATTACH_EXCLUSIVE')) fail(`the reason does not name the setting that attaches anyway: ${why.notAttached}`);
  pass(`devtools-mcp does not attach, and says: ${why.notAttached}`);
  await sleep(LEFT_ALONE_MS);
  if (app.device.requests.size !== 1) fail(`the page had ${app.device.requests.size} debugger sessions, want only React Native DevTools'`);
  if (!(await answered(devtools))) fail(`React Native DevTools lost the page: ${JSON.stringify(devtools.closed)}`);
  pass(`React Native DevTools keeps the page ${LEFT_ALONE_MS} ms on, alone, and is answered`);
}

async function takeover(binary) {
  console.log('--- takeover: one debugger per page, METRO_ATTACH_EXCLUSIVE=true');
  const app = await startApp(ONE_DEBUGGER);
  const first = await openDevTools(app);
  const server = await startMCP(binary, app.base, { METRO_ATTACH_EXCLUSIVE: 'true' });
  await until('devtools-mcp attaches and enables Runtime', STEP_MS, async () => app.enabledCount() >= 2 || null);
  await until('the proxy closes React Native DevTools for devtools-mcp, as METRO_ATTACH_EXCLUSIVE warns', STEP_MS, async () => first.closed);
  if (!first.closed.reason.includes('[NEW_DEBUGGER_OPENED]')) fail(`DevTools closed for another reason: ${JSON.stringify(first.closed)}`);
  pass('with METRO_ATTACH_EXCLUSIVE devtools-mcp attaches, and the proxy closes DevTools with [NEW_DEBUGGER_OPENED]');

  // The developer opens DevTools again: the proxy closes devtools-mcp's
  // connection, and devtools-mcp leaves the page to DevTools.
  const again = await openDevTools(app);
  let lastHealth = null;
  const why = await until('debug_health_check says another debugger has the page', STEP_MS, async () => {
    lastHealth = await server.call('debug_health_check');
    return metroPages(lastHealth).find((p) => !p.attached && p.notAttached);
  }).catch((e) => {
    if (lastHealth) console.log(`last debug_health_check: ${JSON.stringify(lastHealth).slice(0, 2000)}`);
    throw e;
  });
  if (!why.notAttached.includes('NEW_DEBUGGER_OPENED')) fail(`the reason does not say another debugger opened the page: ${why.notAttached}`);
  pass(`closed by the proxy, devtools-mcp says: ${why.notAttached}`);
  const sessionsBefore = app.device.requests.size;
  await sleep(LEFT_ALONE_MS);
  if (app.device.requests.size !== sessionsBefore) fail('devtools-mcp connected to the page again while DevTools has it');
  if (!(await answered(again))) fail(`devtools-mcp took the page back from React Native DevTools: ${JSON.stringify(again.closed)}`);
  pass(`devtools-mcp leaves the page to React Native DevTools (${LEFT_ALONE_MS} ms watched), which is answered`);
}

// peakRSSkB is a process's peak resident size, where Linux tells it.
function peakRSSkB(pid) {
  try {
    const m = /^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

async function flood(binary) {
  console.log(`--- flood: the app logs ${FLOOD} times in one go`);
  const app = await startApp(undefined);
  const server = await startMCP(binary, app.base);
  await until('devtools-mcp attaches and enables Runtime', STEP_MS, async () => app.enabledCount() >= 1);
  const started = Date.now();
  app.device.command(`flood ${FLOOD}`);
  await until('the app logged', STEP_MS * 3, async () => app.lines.includes('logged'));
  const session = appSessions(await server.call('debug_health_check'))[0];
  if (!session) fail('the app is not listed after the flood');
  let last = null;
  await until('debug_get_logs has the line logged after the flood', STEP_MS * 3, async () => {
    last = await server.call('debug_get_logs', { session: session.id, contains: 'flood done' });
    return (last.entries || []).length === 1;
  }).catch(async (e) => {
    console.log(`last debug_get_logs: ${JSON.stringify(last).slice(0, 1000)}`);
    console.log(`debug_health_check: ${JSON.stringify(await server.call('debug_health_check')).slice(0, 3000)}`);
    console.log(`newest logs: ${JSON.stringify(await server.call('debug_get_logs', { session: session.id, limit: 2 })).slice(0, 1500)}`);
    console.log(`device: ${app.lines.join(' | ')}`);
    throw e;
  });
  const tookMs = Date.now() - started;
  const health = await server.call('debug_health_check');
  const rss = peakRSSkB(server.child.pid);
  console.log(`measured: ${FLOOD} console events through the proxy into debug_get_logs in ${tookMs} ms; devtools-mcp peak RSS ${rss ?? '?'} kB; dropped ${JSON.stringify(health.server?.metro?.dropped ?? {})}`);
  if (rss !== null && rss > MAX_RSS_KB) fail(`devtools-mcp peak RSS ${rss} kB over ${MAX_RSS_KB} kB after the flood`);
  pass(`after ${FLOOD} console events devtools-mcp answers, has the newest line${rss !== null ? `, and stayed under ${MAX_RSS_KB / 1024} MB` : ''}`);
}

// Two emulators of one image report the same device name; React Native
// gives each its own device id (a hash of the app and the device), which
// the proxy lists as reactNative.logicalDeviceId.
const TWIN_NAME = 'sdk_gphone64_arm64';
const TWIN_IDS = ['3f9a2c71d0e4b5a6c7d8e9f0a1b2c3d4e5f6a7b8', 'b71c0e55aa0123456789abcdef0123456789abcd'];

async function twins(binary) {
  console.log(`--- twins: two devices named ${TWIN_NAME} run the app`);
  const proxy = await startProxy({});
  cleanups.push(() => proxy.server.close());
  const base = proxy.serverBaseUrl;
  const devices = TWIN_IDS.map((deviceId) => {
    const lines = [];
    const device = startDevice({ port: proxy.port, deviceId, appId: APP_ID, name: TWIN_NAME, out: (l) => lines.push(l) });
    cleanups.push(() => device.stop());
    return { deviceId, device, lines };
  });
  const list = await until('both devices\' pages are listed', STEP_MS, async () => {
    const l = await listPages(base);
    return l.length === 2 ? l : null;
  });
  const names = new Set(list.map((p) => p.deviceName));
  const logical = new Set(list.map((p) => p.reactNative?.logicalDeviceId));
  if (names.size !== 1 || logical.size !== 2 || !TWIN_IDS.every((id) => logical.has(id))) {
    fail(`want one device name and the two device ids as logicalDeviceId: ${JSON.stringify(list.map((p) => [p.id, p.deviceName, p.reactNative]))}`);
  }
  pass(`the proxy lists two pages named ${[...names][0]}, logicalDeviceId ${[...logical].map((id) => id.slice(0, 6)).join(' and ')}`);

  const server = await startMCP(binary, base);
  let lastHealth = null;
  const sessions = await until('devtools-mcp lists two sessions, both attached', STEP_MS, async () => {
    lastHealth = await server.call('debug_health_check');
    const mine = appSessions(lastHealth);
    const attached = metroPages(lastHealth).filter((p) => p.attached);
    return mine.length === 2 && attached.length === 2 ? mine : null;
  }).catch((e) => {
    if (lastHealth) console.log(`last debug_health_check: ${JSON.stringify(lastHealth).slice(0, 3000)}`);
    throw e;
  });
  const ids = sessions.map((s) => s.id).sort();
  if (ids[0] === ids[1]) fail(`the two devices share session ${ids[0]}`);
  pass(`two sessions, both attached: ${ids.join(' and ')}`);
  // Which session is which device: the health check's pages name both.
  const sessionOf = {};
  for (const p of metroPages(lastHealth)) {
    const d = devices.find((d) => String(p.id).startsWith(d.deviceId));
    if (d) sessionOf[d.deviceId] = p.session;
  }
  if (Object.keys(sessionOf).length !== 2) fail(`the health check's pages do not name each device's session: ${JSON.stringify(metroPages(lastHealth))}`);

  // Each logs its own number of lines: each session holds only its own.
  const counts = [3, 5];
  devices.forEach((d, i) => d.device.command(`flood ${counts[i]}`));
  for (const [i, d] of devices.entries()) {
    let last = null;
    await until(`session ${sessionOf[d.deviceId]} holds its device's ${counts[i]} lines`, STEP_MS, async () => {
      last = await server.call('debug_get_logs', { session: sessionOf[d.deviceId], contains: 'metro-check: flood', limit: 50 });
      return (last.entries || []).length === counts[i] + 1;
    }).catch((e) => {
      console.log(`last debug_get_logs: ${JSON.stringify(last).slice(0, 2000)}`);
      throw e;
    });
  }
  pass(`each session holds its own device's logs (${counts[0]} + 1 and ${counts[1]} + 1 lines)`);

  // The second device's app crashes and relaunches (same device id).
  const [a, b] = devices;
  const before = b.lines.length;
  b.device.command('crash');
  await until('the second device relaunched and devtools-mcp enabled Runtime on its page', STEP_MS, async () =>
    b.lines.slice(before).includes('device connected') && b.lines.slice(before).some((l) => l.startsWith('enabled ')));
  b.device.command('flood 2');
  await until('the relaunched device\'s lines arrive in its session', STEP_MS, async () => {
    const logs = await server.call('debug_get_logs', { session: sessionOf[b.deviceId], contains: 'metro-check: flood done', limit: 50 });
    return (logs.entries || []).length === 2;
  });
  const health = await server.call('debug_health_check');
  const after = appSessions(health).map((s) => s.id).sort();
  if (JSON.stringify(after) !== JSON.stringify(ids)) fail(`after the relaunch the sessions are ${after.join(', ')}, want ${ids.join(', ')}`);
  const aLogs = await server.call('debug_get_logs', { session: sessionOf[a.deviceId], contains: 'metro-check: flood', limit: 50 });
  if ((aLogs.entries || []).length !== counts[0] + 1) fail(`the first device's session holds ${(aLogs.entries || []).length} flood lines after the other relaunched, want ${counts[0] + 1}`);
  pass(`the second device relaunched into its own session ${sessionOf[b.deviceId]}; the first (${sessionOf[a.deviceId]}) is untouched`);
}

async function runScenario(fn, ...args) {
  cleanups = [];
  try {
    await fn(...args);
  } finally {
    for (const c of cleanups.reverse()) {
      try {
        c();
      } catch {}
    }
    cleanups = [];
  }
}

async function main() {
  const arg = process.argv[2];
  if (!arg) {
    console.error('usage: node check.js <devtools-mcp binary> | --harness');
    process.exit(2);
  }
  const binary = arg === '--harness' ? null : path.resolve(arg);
  await runScenario(besideDevTools, binary, process.env.RECORD_DIR || '');
  if (binary) {
    await runScenario(singleDebugger, binary);
    await runScenario(takeover, binary);
    await runScenario(flood, binary);
    await runScenario(twins, binary);
  }
}

let exitCode = 0;
main()
  .catch((err) => {
    if (!err.reported) console.log(`FAIL: ${err.stack || err}`);
    exitCode = 1;
  })
  .finally(() => {
    console.log(`metro-inspector check: ${failed() || exitCode ? 'FAIL' : 'PASS'}`);
    setTimeout(() => process.exit(exitCode), 300);
  });
