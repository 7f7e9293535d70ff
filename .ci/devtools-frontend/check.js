'use strict';
// The check behind .ci/devtools-frontend.sh: devtools-mcp beside the real
// React Native DevTools frontend (@react-native/debugger-frontend, served by
// the real @react-native/dev-middleware from .ci/metro-inspector's lockfile)
// in headless Chromium, and a web app in the same browser.
//
//   node check.js <devtools-mcp binary>
//
// Steps (each prints PASS or FAIL; all run, the exit status is 1 if any
// failed):
//   frontend  DevTools opened on the app's page (its devtoolsFrontendUrl,
//             as "Open DevTools" does) connects beside devtools-mcp's link
//             and its requests are answered
//   console   an app's console line reaches both the frontend and
//             debug_get_logs
//   reopen    closing the frontend and opening it again leaves
//             devtools-mcp's session attached, and the next line reaches
//             both
//   refused   a web page served from its own dev-server origin, whose
//             adapter dials devtools-mcp's adapter port and whose Reactotron
//             client dials its Reactotron port, is refused on both while
//             that origin is not in WS_ALLOWED_ORIGINS, with log lines
//             naming the setting
//   webapp    the same page connects on both once WS_ALLOWED_ORIGINS names
//             it, and its console lines reach debug_get_logs
const fs = require('node:fs');
const http = require('node:http');
const path = require('node:path');
const { startProxy } = require('../metro-inspector/proxy.js');
const { startDevice } = require('../metro-inspector/device.js');
const { launch } = require('./browser.js');
const lib = require('../lib/mcp.js');
const { freePort, until, sleep } = lib;
const { cleanups, step, check, run } = require('../lib/steps.js');
// devtools-mcp over stdio, initialized; a tool answers within 15 s.
const startMCP = (binary, env) => lib.startMCP(binary, env, { answerMs: 15000 });

const STEP_MS = 20000;
const APP_ID = 'com.example.metrocheck';

// The frontend asks for a few files its package does not ship (images,
// an injected script); the proxy's static server prints each miss as an
// error. They are counted, and named once at the end.
const missingFrontendFiles = new Set();
const consoleError = console.error;
console.error = (...args) => {
  const m = /ENOENT: no such file or directory, stat '.*debugger-frontend\/dist\/third-party\/front_end\/(.*)'/.exec(String(args[0]?.message ?? args[0]));
  if (m) missingFrontendFiles.add(m[1]);
  else consoleError(...args);
};

// The frontend's own WebSocket traffic, as the browser saw it: frames it
// sent and received on its connection to the dev server.
function frames(tab, kind) {
  return tab.events.filter((e) => e.method === `Network.webSocketFrame${kind}`).map((e) => {
    try {
      return JSON.parse(e.params.response.payloadData);
    } catch {
      return null;
    }
  }).filter(Boolean);
}

function attachedPage(health) {
  return (health.server?.metro?.pages || []).find((p) => p.attached && p.session);
}

async function openFrontend(browser, base) {
  const [page] = await (await fetch(`${base}/json/list`)).json();
  const url = new URL(page.devtoolsFrontendUrl, base).href;
  const tab = await browser.open(url);
  return { tab, url };
}

// waitAnswered waits until the frontend has sent at least min requests and
// every one it sent up to then has its answer, and returns the counts.
async function waitAnswered(tab, min, what) {
  let sent = [];
  let unanswered = [];
  try {
    return await until(what, STEP_MS, async () => {
      sent = frames(tab, 'Sent').filter((f) => f.id !== undefined);
      const answered = new Set(frames(tab, 'Received').filter((f) => f.id !== undefined).map((f) => f.id));
      unanswered = sent.filter((f) => !answered.has(f.id));
      if (sent.length < min || unanswered.length) return null;
      const methods = new Set(sent.map((f) => f.method));
      return { sent: sent.length, methods };
    });
  } catch (e) {
    e.message += `; ${sent.length} sent, unanswered: ${unanswered.map((f) => f.method).join(', ')}`;
    throw e;
  }
}

async function frontendScenario(binary, browser) {
  console.log('--- frontend: React Native DevTools beside devtools-mcp');
  const proxy = await startProxy();
  cleanups.push(() => proxy.close());
  const lines = [];
  const device = startDevice({ port: proxy.port, appId: APP_ID, out: (l) => lines.push(l) });
  cleanups.push(() => device.stop());
  await until('the page is in /json/list', STEP_MS, async () => (await (await fetch(`${proxy.serverBaseUrl}/json/list`)).json()).length > 0);

  const mcp = await startMCP(binary, { METRO_URL: proxy.serverBaseUrl });
  cleanups.push(() => mcp.stop());
  const ours = await until('devtools-mcp attaches to the app', STEP_MS, async () => attachedPage(await mcp.call('debug_health_check')));
  await until('devtools-mcp enabled Runtime', STEP_MS, async () => lines.some((l) => l.startsWith('enabled ')));
  const ourSessions = new Set(device.requests.keys());

  let tab = null;
  const ok = await step('frontend', async () => {
    const opened = await openFrontend(browser, proxy.serverBaseUrl);
    tab = opened.tab;
    const frontendSession = await until('the frontend connects to the page', STEP_MS, async () => [...device.requests.keys()].find((s) => !ourSessions.has(s)));
    await until('the frontend enables Runtime on the page', STEP_MS, async () => device.requests.get(frontendSession).includes('Runtime.enable'));
    const { sent, methods } = await waitAnswered(tab, 5, 'every request the frontend sent is answered');
    check(methods.has('Runtime.enable') && methods.has('Debugger.enable'), `the frontend did not ask for Runtime and Debugger: ${[...methods]}`);
    const health = await mcp.call('debug_health_check');
    check(attachedPage(health)?.session === ours.session, `devtools-mcp's page is no longer attached: ${JSON.stringify(health.server?.metro)}`);
    return `${opened.url.replace(proxy.serverBaseUrl, '')} connected beside devtools-mcp (session ${ours.session}); its ${sent} requests (${[...methods].slice(0, 8).join(', ')}, …) are all answered`;
  });
  if (!ok) return;

  const say = async (n) => {
    const before = lines.filter((l) => l === 'logged').length;
    device.command('log');
    await until('the app logged', STEP_MS, async () => lines.filter((l) => l === 'logged').length > before);
    const wantFrontend = (t) => until(`the frontend receives the app's console line (${n})`, STEP_MS, async () =>
      frames(t, 'Received').filter((f) => f.method === 'Runtime.consoleAPICalled' && JSON.stringify(f.params.args).includes('cart loaded')).length >= 1);
    const wantOurs = until(`debug_get_logs has the app's console line (${n})`, STEP_MS, async () => {
      const logs = await mcp.call('debug_get_logs', { session: ours.session, contains: 'cart loaded' });
      return (logs.entries || []).length >= n;
    });
    return { wantFrontend, wantOurs };
  };

  await step('console', async () => {
    const { wantFrontend, wantOurs } = await say(1);
    await Promise.all([wantFrontend(tab), wantOurs]);
    // What the developer sees: the line in the frontend's Console, read
    // from its DOM (the panels live in shadow roots).
    const shown = await until('the frontend\'s Console shows the line', STEP_MS, async () => {
      const { result } = await tab.send('Runtime.evaluate', { expression: `(() => {
        const seen = new Set();
        const walk = (n) => { if (!n || seen.has(n)) return ''; seen.add(n); let t = ''; if (n.shadowRoot) t += walk(n.shadowRoot);
          for (const c of n.childNodes || []) t += c.nodeType === 3 ? c.textContent : walk(c); return t; };
        return walk(document.body).includes('metro-check: cart loaded with 3 items');
      })()`, returnByValue: true });
      return result.value === true;
    }).then(() => true, () => false);
    return `"metro-check: cart loaded with 3 items" reached the frontend's socket${shown ? ' and its Console' : ' (its Console panel was not open)'} and debug_get_logs`;
  });

  await step('reopen', async () => {
    const frontendSessions = () => [...device.requests.keys()].filter((s) => !ourSessions.has(s));
    const before = frontendSessions().length;
    await browser.close(tab);
    // The proxy tells the page the frontend left; devtools-mcp stays.
    await sleep(1500);
    let health = await mcp.call('debug_health_check');
    check(attachedPage(health)?.session === ours.session, `after DevTools closed, devtools-mcp's page is not attached: ${JSON.stringify(health.server?.metro)}`);
    const reopened = await openFrontend(browser, proxy.serverBaseUrl);
    tab = reopened.tab;
    await until('the reopened frontend connects to the page', STEP_MS, async () => frontendSessions().length > before);
    await waitAnswered(tab, 5, 'every request the reopened frontend sent is answered');
    const { wantFrontend, wantOurs } = await say(2);
    await Promise.all([wantFrontend(tab), wantOurs]);
    health = await mcp.call('debug_health_check');
    const page = attachedPage(health);
    check(page?.session === ours.session, `after DevTools reopened, devtools-mcp's page is not attached to session ${ours.session}: ${JSON.stringify(health.server?.metro)}`);
    const mine = (health.sessions || []).filter((s) => s.via === 'metro');
    check(mine.length === 1 && mine[0].connected, `want one connected Metro session, got ${JSON.stringify(mine)}`);
    return `DevTools closed and reopened: devtools-mcp's session ${ours.session} stayed attached, and the next line reached both`;
  });
  await browser.close(tab).catch(() => {});
}

// serveStatic serves webapp/ on a loopback port: the web app's own dev
// server, an origin of its own.
function serveStatic() {
  const root = path.join(__dirname, 'webapp');
  const types = { '.html': 'text/html; charset=utf-8', '.js': 'text/javascript; charset=utf-8' };
  const server = http.createServer((req, res) => {
    const name = new URL(req.url, 'http://x').pathname.replace(/^\/$/, '/index.html');
    const file = path.join(root, path.normalize(name));
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file)) {
      res.writeHead(404).end('not found');
      return;
    }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    res.end(fs.readFileSync(file));
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => {
    cleanups.push(() => server.close());
    resolve({ server, origin: `http://127.0.0.1:${server.address().port}` });
  }));
}

async function status(tab, which = 'adapterStatus') {
  const { result } = await tab.send('Runtime.evaluate', { expression: `window.${which}`, returnByValue: true });
  return result.value;
}

// openPage opens the web app, its adapter dialling the adapter port and its
// Reactotron client the Reactotron port of devtools-mcp.
function openPage(browser, site, wsPort, rtPort) {
  return browser.open(`${site.origin}/?ws=${encodeURIComponent(`ws://127.0.0.1:${wsPort}/`)}&rt=${encodeURIComponent(`ws://127.0.0.1:${rtPort}/`)}`);
}

async function webappScenario(binary, browser) {
  console.log('--- webapp: a web page\'s adapter, from its own origin');
  const site = await serveStatic();

  await step('refused', async () => {
    const [wsPort, rtPort] = [await freePort(), await freePort()];
    const mcp = await startMCP(binary, { WS_PORT: String(wsPort), REACTOTRON_PORT: String(rtPort), METRO_URL: 'off' });
    cleanups.push(() => mcp.stop());
    await until('devtools-mcp listens', STEP_MS, async () => (await mcp.call('debug_health_check')).server?.reactotron?.listening);
    const tab = await openPage(browser, site, wsPort, rtPort);
    const s = await until('the page\'s adapter gives up', STEP_MS, async () => {
      const v = await status(tab);
      return v && v !== 'connecting' && v !== 'starting' ? v : null;
    });
    check(s !== 'connected', 'the page connected without WS_ALLOWED_ORIGINS');
    const rt = await until('the page\'s Reactotron client gives up', STEP_MS, async () => {
      const v = await status(tab, 'reactotronStatus');
      return v && v !== 'connecting' ? v : null;
    });
    check(rt.startsWith('closed'), `the page's Reactotron client connected without WS_ALLOWED_ORIGINS: ${rt}`);
    const logged = await until('devtools-mcp logs why it refused the page', STEP_MS, async () => mcp.stderr.find((l) => l.includes('refused adapter upgrade') && l.includes(site.origin) && l.includes('WS_ALLOWED_ORIGINS')));
    await until('devtools-mcp logs why it refused the page\'s Reactotron client', STEP_MS, async () => mcp.stderr.find((l) => l.includes('refused Reactotron upgrade') && l.includes(site.origin) && l.includes('WS_ALLOWED_ORIGINS')));
    const health = await mcp.call('debug_health_check');
    check(!(health.sessions || []).length, `a session appeared: ${JSON.stringify(health.sessions)}`);
    const shown = tab.events.filter((e) => e.method === 'Log.entryAdded' || e.method === 'Runtime.exceptionThrown').map((e) => e.params.entry?.text || e.params.exceptionDetails?.text).filter((t) => t && t.includes('WebSocket'));
    await browser.close(tab);
    await mcp.stop();
    return `from ${site.origin} the page's adapter and its Reactotron client are refused (page: "${s}", "${rt}"${shown.length ? `; browser: "${shown[0]}"` : ''}); devtools-mcp logs: ${logged.trim()}`;
  });

  await step('webapp', async () => {
    const [wsPort, rtPort] = [await freePort(), await freePort()];
    const mcp = await startMCP(binary, { WS_PORT: String(wsPort), REACTOTRON_PORT: String(rtPort), METRO_URL: 'off', WS_ALLOWED_ORIGINS: site.origin });
    cleanups.push(() => mcp.stop());
    await until('devtools-mcp listens', STEP_MS, async () => (await mcp.call('debug_health_check')).server?.reactotron?.listening);
    const tab = await openPage(browser, site, wsPort, rtPort);
    await until('the page\'s adapter is connected', STEP_MS, async () => (await status(tab)) === 'connected');
    const session = await until('debug_health_check lists the web app\'s adapter', STEP_MS, async () => (await mcp.call('debug_health_check')).sessions?.find((x) => x.via !== 'reactotron' && JSON.stringify(x.app).includes('WebShop')));
    await tab.send('Runtime.evaluate', { expression: 'document.getElementById("pay").click()' });
    let last = null;
    await until('debug_get_logs has the page\'s console lines', STEP_MS, async () => {
      last = await mcp.call('debug_get_logs', { session: session.id, contains: 'web-check' });
      const text = JSON.stringify(last);
      return text.includes('web-check: page loaded') && text.includes('web-check: payment failed');
    }).catch((e) => {
      e.message += `; last debug_get_logs: ${JSON.stringify(last)?.slice(0, 2000)}`;
      throw e;
    });
    const rtSession = await until('debug_health_check lists the page\'s Reactotron client', STEP_MS, async () => (await mcp.call('debug_health_check')).sessions?.find((x) => x.via === 'reactotron'));
    await until('debug_get_logs has the Reactotron client\'s log', STEP_MS, async () => JSON.stringify(await mcp.call('debug_get_logs', { session: rtSession.id })).includes('web-check: hello from the Reactotron client'));
    await browser.close(tab);
    await mcp.stop();
    return `with WS_ALLOWED_ORIGINS=${site.origin} the page connects on both ports (sessions ${session.id} and ${rtSession.id}) and its console lines reach debug_get_logs`;
  });
}

async function main() {
  const binary = process.argv[2];
  if (!binary) {
    console.error('usage: node check.js <devtools-mcp binary>');
    process.exit(2);
  }
  const browser = await launch();
  cleanups.push(() => browser.stop());
  console.log(`${browser.version}; @react-native/dev-middleware ${require('../metro-inspector/node_modules/@react-native/dev-middleware/package.json').version}, @react-native/debugger-frontend ${require('../metro-inspector/node_modules/@react-native/debugger-frontend/package.json').version}`);
  await frontendScenario(binary, browser);
  await webappScenario(binary, browser);
}

run(main, {
  label: 'devtools-frontend',
  what: 'the check',
  minutes: 4,
  beforeSummary: () => {
    if (missingFrontendFiles.size) console.log(`the frontend asked for ${missingFrontendFiles.size} files its package does not ship (${[...missingFrontendFiles].slice(0, 3).join(', ')}, …)`);
  },
});
