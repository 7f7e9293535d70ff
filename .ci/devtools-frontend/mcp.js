'use strict';
// devtools-mcp as an agent's client sees it, for the checks against real
// parts (.ci/devtools-frontend, .ci/expo): the binary started over stdio,
// JSON-RPC lines in and out, initialized, and tools called by name.
const { spawn } = require('node:child_process');
const net = require('node:net');
const readline = require('node:readline');

const ANSWER_MS = 15000;

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// startMCP starts the binary with env (over free ports of its own unless
// env names them), initializes it and resolves with a client: call(name,
// args) answers a tool's structured result or throws with the tool's
// message; stderr holds its last log lines; stop() ends it through stdin.
async function startMCP(binary, env = {}) {
  const child = spawn(binary, [], {
    env: { ...process.env, WS_PORT: String(await freePort()), REACTOTRON_PORT: '0', MCP_TRANSPORT: 'stdio', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const pending = new Map();
  const stderr = [];
  let nextId = 1;
  let exited = null;
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
    if (stderr.length > 400) stderr.shift();
  });
  child.on('exit', (code, signal) => {
    exited = { code, signal };
    for (const res of pending.values()) res({ error: { message: `devtools-mcp exited (${code ?? signal})` } });
    pending.clear();
  });
  function request(method, params, ms = ANSWER_MS) {
    const id = nextId++;
    child.stdin.write(JSON.stringify({ jsonrpc: '2.0', id, method, params }) + '\n');
    return new Promise((resolve) => {
      pending.set(id, resolve);
      setTimeout(() => {
        if (pending.delete(id)) resolve({ error: { message: `no answer to ${method} within ${ms} ms` } });
      }, ms).unref();
    });
  }
  const client = {
    child,
    stderr,
    exited: () => exited,
    async call(name, args = {}) {
      if (exited) throw new Error(`devtools-mcp exited (${JSON.stringify(exited)}):\n${stderr.join('\n')}`);
      const answer = await request('tools/call', { name, arguments: args });
      if (answer.error) throw new Error(`${name}: ${answer.error.message}`);
      const r = answer.result;
      if (r.isError) throw new Error(`${name}: ${r.content?.map((c) => c.text).join(' ')}`);
      if (r.structuredContent) return r.structuredContent;
      return JSON.parse(r.content[0].text);
    },
    stop() {
      if (exited) return Promise.resolve();
      return new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.stdin.end();
        setTimeout(() => exited || child.kill('SIGKILL'), 3000).unref();
      });
    },
  };
  const init = await request('initialize', { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'real-parts-check', version: '1' } });
  if (init.error) throw new Error(`initialize: ${init.error.message}\n${stderr.join('\n')}`);
  child.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized', params: {} }) + '\n');
  return client;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// until polls fn every 100 ms until it answers something truthy, and
// throws naming what after ms (fn's last answer is kept for the message).
async function until(what, ms, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) throw Object.assign(new Error(`${what} (waited ${ms} ms)`), { step: what });
    await sleep(100);
  }
}

module.exports = { startMCP, freePort, until, sleep };
