'use strict';
// A Wire Protocol adapter for a web page (docs/protocol.md): one `console`
// stream fed by console.log/info/warn/error, kept in a bounded ring,
// answered on `streams.list` and `events.query`, pushed as it happens.
// The page's status (window.adapterStatus) says how the connection went:
// "connecting", "connected" (handshake_ack), "refused: …" or "closed: …".
function startAdapter(url) {
  const MAX = 500;
  const events = [];
  let seq = 0;
  let ws = null;
  const startedAt = new Date().toISOString();
  const sessionId = 'web-' + Math.random().toString(36).slice(2) + Date.now().toString(36);

  function setStatus(s) {
    window.adapterStatus = s;
    const el = document.getElementById('status');
    if (el) el.textContent = s;
  }

  function send(obj) {
    if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(obj));
  }

  function record(level, args) {
    const message = args.map((a) => (typeof a === 'string' ? a : (() => { try { return JSON.stringify(a); } catch { return String(a); } })())).join(' ');
    const event = { stream: 'console', seq: ++seq, type: 'log', timestamp: new Date().toISOString(), payload: { level, message } };
    if (level === 'error' || level === 'warn') event.payload.stack = new Error().stack.split('\n').slice(2).join('\n');
    events.push(event);
    if (events.length > MAX) events.shift();
    if (window.adapterStatus === 'connected') send({ type: 'event', event });
  }

  for (const [method, level] of [['log', 'info'], ['info', 'info'], ['warn', 'warn'], ['error', 'error'], ['debug', 'debug']]) {
    const original = console[method].bind(console);
    console[method] = (...args) => {
      record(level, args);
      original(...args);
    };
  }

  function answer(req) {
    const p = req.params || {};
    if (req.method === 'streams.list') {
      return { streams: [{ name: 'console', active: true, eventCount: events.length, oldestSeq: events.length ? events[0].seq : 0, latestSeq: events.length ? events[events.length - 1].seq : 0, hasSnapshot: false, lastEventAt: events.length ? events[events.length - 1].timestamp : null }] };
    }
    if (req.method === 'events.query') {
      const limit = Math.max(1, Math.min(200, Number(p.limit) || 50));
      let match = p.stream === 'console' ? events.filter((e) => !p.event_type || e.type === p.event_type) : [];
      let hasMore;
      if (typeof p.since_seq === 'number') {
        match = match.filter((e) => e.seq > p.since_seq);
        hasMore = match.length > limit;
        match = match.slice(0, limit);
      } else {
        hasMore = match.length > limit;
        match = match.slice(-limit);
      }
      const all = p.stream === 'console' ? events : [];
      return { events: match, hasMore, oldestSeq: all.length ? all[0].seq : 0, latestSeq: all.length ? all[all.length - 1].seq : 0 };
    }
    if (req.method === 'snapshot.get') {
      return { error: { code: 'NO_SNAPSHOT', message: 'the console stream has no snapshot' } };
    }
    return { error: { code: 'UNKNOWN_METHOD', message: 'unknown method ' + req.method } };
  }

  setStatus('connecting');
  ws = new WebSocket(url);
  ws.onopen = () => {
    send({ type: 'handshake', protocolVersion: 1, sessionId, adapterVersion: '0.0.1', startedAt,
      app: { name: 'WebShop', version: '1.0.0', url: location.origin },
      device: { platform: 'web', userAgent: navigator.userAgent },
      streams: [{ name: 'console', active: true }] });
  };
  ws.onmessage = (m) => {
    let msg;
    try { msg = JSON.parse(m.data); } catch { return; }
    if (msg.type === 'handshake_ack') setStatus('connected');
    else if (msg.type === 'handshake_error') setStatus('refused: ' + msg.message);
    else if (msg.type === 'request') {
      const r = answer(msg);
      send(r.error ? { type: 'response', id: msg.id, error: r.error } : { type: 'response', id: msg.id, result: r });
    }
  };
  // A refused upgrade (HTTP 403) reaches a page only as a close with 1006:
  // the reason is in devtools-mcp's log and in the browser's console.
  ws.onclose = (e) => {
    if (!String(window.adapterStatus).startsWith('refused')) setStatus('closed: ' + e.code);
  };
  return { record };
}
