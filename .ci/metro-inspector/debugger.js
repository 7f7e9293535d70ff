'use strict';
// A debugger as React Native DevTools is one to Metro's proxy: a WebSocket
// to a page's webSocketDebuggerUrl with an Origin the proxy accepts, plain
// CDP over it. Requests are answered by promise; events are kept in order.
const WebSocket = require('ws');

function attach(webSocketDebuggerUrl, origin) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(webSocketDebuggerUrl, { headers: { Origin: origin } });
    const pending = new Map();
    const events = [];
    const waiters = [];
    let nextId = 1;
    const client = {
      ws,
      events,
      closed: null, // {code, reason} once closed
      send(method, params = {}) {
        const id = nextId++;
        ws.send(JSON.stringify({ id, method, params }));
        return new Promise((res, rej) => pending.set(id, { res, rej, method }));
      },
      // waitFor resolves with the first event (seen or to come) that pred
      // accepts, or rejects after ms.
      waitFor(pred, ms, what) {
        const seen = events.find(pred);
        if (seen) return Promise.resolve(seen);
        return new Promise((res, rej) => {
          const w = { pred, res };
          waiters.push(w);
          setTimeout(() => {
            const i = waiters.indexOf(w);
            if (i >= 0) {
              waiters.splice(i, 1);
              rej(new Error(`no ${what} within ${ms} ms`));
            }
          }, ms);
        });
      },
      close() {
        ws.close();
      },
    };
    ws.on('open', () => resolve(client));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`upgrade refused: HTTP ${res.statusCode}`)));
    ws.on('error', reject);
    ws.on('close', (code, reason) => {
      client.closed = { code, reason: reason.toString() };
      for (const p of pending.values()) p.rej(new Error(`socket closed (${code} ${reason}) before ${p.method} was answered`));
      pending.clear();
    });
    ws.on('message', (data) => {
      let msg;
      try {
        msg = JSON.parse(data.toString());
      } catch {
        return;
      }
      if (msg.id !== undefined && pending.has(msg.id)) {
        const p = pending.get(msg.id);
        pending.delete(msg.id);
        if (msg.error) p.rej(Object.assign(new Error(`${p.method}: ${msg.error.message}`), { cdp: msg.error }));
        else p.res(msg.result);
        return;
      }
      if (msg.method) {
        events.push(msg);
        for (let i = waiters.length - 1; i >= 0; i--) {
          if (waiters[i].pred(msg)) {
            waiters[i].res(msg);
            waiters.splice(i, 1);
          }
        }
      }
    });
  });
}

module.exports = { attach };
