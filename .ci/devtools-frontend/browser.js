'use strict';
// Headless Chromium driven over the DevTools protocol, with nothing but a
// WebSocket: launch() starts /usr/bin/chromium (CHROMIUM overrides) with a
// fresh profile on a debugging port it picks itself, and answers a client
// whose open(url) makes a tab and attaches to it (flattened sessions).
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
// ws from .ci/metro-inspector's lockfile, which this check shares.
const WebSocket = require(require.resolve('ws', { paths: [path.join(__dirname, '..', 'metro-inspector')] }));
const { until } = require('../lib/mcp.js');

const FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--disable-default-apps', '--disable-extensions', '--mute-audio'];

async function launch() {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'chromium-check-'));
  const binary = process.env.CHROMIUM || '/usr/bin/chromium';
  const child = spawn(binary, [...FLAGS, `--user-data-dir=${profile}`, '--remote-debugging-address=127.0.0.1', '--remote-debugging-port=0', 'about:blank'], { stdio: ['ignore', 'ignore', 'pipe'] });
  const stderr = [];
  child.stderr.on('data', (d) => {
    stderr.push(String(d));
    if (stderr.length > 100) stderr.shift();
  });
  let exited = null;
  child.on('exit', (code, signal) => { exited = { code, signal }; });
  // Chromium writes the port it bound and the browser's path here.
  const portFile = path.join(profile, 'DevToolsActivePort');
  const [port, browserPath] = await until('Chromium writes DevToolsActivePort', 30000, async () => {
    if (exited) throw new Error(`chromium exited (${JSON.stringify(exited)}): ${stderr.join('')}`);
    try {
      const lines = fs.readFileSync(portFile, 'utf8').split('\n');
      return lines[1] ? lines : null;
    } catch {
      return null;
    }
  });
  const version = await (await fetch(`http://127.0.0.1:${port}/json/version`)).json();
  const cdp = await connect(`ws://127.0.0.1:${port}${browserPath}`);
  return {
    version: version.Browser,
    cdp,
    // open makes a tab showing url and answers a session on it, with
    // Runtime, Network and Log enabled before it navigates.
    async open(url) {
      const { targetId } = await cdp.send('Target.createTarget', { url: 'about:blank' });
      const { sessionId } = await cdp.send('Target.attachToTarget', { targetId, flatten: true });
      const tab = cdp.session(sessionId);
      tab.targetId = targetId;
      await Promise.all([tab.send('Runtime.enable'), tab.send('Network.enable'), tab.send('Log.enable'), tab.send('Page.enable')]);
      await tab.send('Page.navigate', { url });
      return tab;
    },
    close(tab) {
      return cdp.send('Target.closeTarget', { targetId: tab.targetId });
    },
    stop() {
      return new Promise((resolve) => {
        const done = () => {
          // Chromium's helpers may still be writing to the profile.
          try {
            fs.rmSync(profile, { recursive: true, force: true, maxRetries: 5, retryDelay: 200 });
          } catch {}
          resolve();
        };
        if (exited) return done();
        child.once('exit', done);
        cdp.ws.close();
        child.kill('SIGTERM');
        setTimeout(() => exited || child.kill('SIGKILL'), 3000).unref();
      });
    },
  };
}

// connect opens the browser's DevTools socket: send(method, params) answers
// by promise; session(id) is the same for one attached target, whose
// events it keeps in order.
function connect(url) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { perMessageDeflate: false, maxPayload: 256 * 1024 * 1024 });
    const pending = new Map();
    const sessions = new Map();
    let nextId = 1;
    function send(method, params = {}, sessionId) {
      const id = nextId++;
      ws.send(JSON.stringify({ id, method, params, ...(sessionId ? { sessionId } : {}) }));
      return new Promise((res, rej) => pending.set(id, { res, rej, method }));
    }
    const client = {
      ws,
      send: (m, p) => send(m, p),
      session(sessionId) {
        const s = { sessionId, events: [], send: (m, p) => send(m, p, sessionId) };
        sessions.set(sessionId, s);
        return s;
      },
    };
    ws.on('open', () => resolve(client));
    ws.on('error', reject);
    ws.on('close', () => {
      for (const p of pending.values()) p.rej(new Error(`browser socket closed before ${p.method} was answered`));
      pending.clear();
    });
    ws.on('message', (data) => {
      let msg;
      try {
        msg = JSON.parse(String(data));
      } catch {
        return;
      }
      if (msg.id !== undefined && pending.has(msg.id)) {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) p.rej(new Error(`${p.method}: ${msg.error.message}`));
        else p.res(msg.result);
        return;
      }
      if (msg.method && msg.sessionId && sessions.has(msg.sessionId)) {
        const s = sessions.get(msg.sessionId);
        s.events.push(msg);
        if (s.events.length > 20000) s.events.splice(0, 10000);
      }
    });
  });
}

module.exports = { launch };
