'use strict';
// A minimal MCP client over stdio for the adb check: it starts devtools-mcp,
// writes JSON-RPC lines, and matches the answers to the requests.
const { spawn } = require('node:child_process');
const readline = require('node:readline');

// startServer starts binary with env added to this process's environment;
// cleanups gets what ends it, and stepMs is how long a request waits for
// its answer unless told.
function startServer(binary, env, { cleanups, stepMs }) {
  const child = spawn(binary, [], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const pending = new Map();
  const stderr = [];
  let nextId = 1;
  let exited = null;
  const exitWaiters = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.id !== undefined && pending.has(msg.id)) {
      pending.get(msg.id)(msg);
      pending.delete(msg.id);
    }
  });
  readline.createInterface({ input: child.stderr }).on('line', (l) => {
    stderr.push(l);
    if (stderr.length > 300) stderr.shift();
  });
  child.on('exit', (code, signal) => {
    exited = { code, signal, at: Date.now() };
    for (const res of pending.values()) res({ error: { message: `server exited (${code ?? signal})` } });
    pending.clear();
    for (const w of exitWaiters) w(exited);
  });
  const server = {
    child,
    stderr,
    exited: () => exited,
    waitExit: (ms) => new Promise((resolve) => {
      if (exited) return resolve(exited);
      exitWaiters.push(resolve);
      setTimeout(() => resolve(exited), ms);
    }),
    request(method, params, ms = stepMs) {
      const id = nextId++;
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
      return new Promise((resolve) => {
        pending.set(id, resolve);
        setTimeout(() => {
          if (pending.delete(id)) resolve({ error: { message: `no answer to ${method} within ${ms} ms` } });
        }, ms);
      });
    },
    notify(method, params) {
      child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method, params }) + '\n');
    },
    // call answers a tool's result object (structuredContent or the JSON of
    // its text), or throws with what went wrong.
    async call(name, args = {}, ms = stepMs) {
      if (exited) throw new Error(`devtools-mcp exited (${JSON.stringify(exited)})`);
      const answer = await server.request('tools/call', { name, arguments: args }, ms);
      if (answer.error) throw new Error(`${name}: ${answer.error.message}`);
      const r = answer.result;
      if (r.isError) throw new Error(`${name}: ${r.content?.map((c) => c.text).join(' ')}`);
      if (r.structuredContent) return r.structuredContent;
      return JSON.parse(r.content[0].text);
    },
  };
  cleanups.push(() => {
    if (!exited) {
      child.stdin.end();
      setTimeout(() => exited || child.kill('SIGKILL'), 1000).unref();
    }
  });
  return server;
}

module.exports = { startServer };
