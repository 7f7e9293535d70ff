'use strict';
// devtools-mcp as an agent's client sees it, for every check against real
// parts (.ci/*/check.js): the binary started over stdio, JSON-RPC lines in
// and out, answers matched to requests by id, initialized, and tools called
// by name. Node.js with no packages.
//
//   startServer(binary, env, opts)  the binary started, not initialized
//   startMCP(binary, env, opts)     started over free ports of its own
//                                   (unless env names them), initialized
//
// opts (all optional):
//   name      clientInfo.name sent in initialize ('real-parts-check')
//   answerMs  how long a request waits for its answer unless told (10000)
//   fail      called with a message where the check cannot go on (initialize
//             refused, a tool called after the binary exited, a tool call
//             answered with a JSON-RPC error by tool()); it must throw. By
//             default an Error is thrown with that message.
//   stderr    'inherit' passes the binary's stderr through; otherwise its
//             last lines are kept in server.stderr.
//
// The server answered:
//   child, stderr (last lines), exited() ({code, signal, at} or null),
//   waitExit(ms) (exited() once it exits, null after ms),
//   request(method, params, ms) (the answer; a timeout or the exit answers
//   {error: {message}}), notify(method, params), initialize(name),
//   call(name, args, ms) (a tool's structured result, or throws with its
//   message), tool(name, args, ms) ({ok, value, ms}: an isError result is
//   value with ok false), stop(killAfterMs) (stdin closed, SIGKILL after
//   killAfterMs, 3000 by default; resolves once it exited).
//
// Also: freePort() (a free loopback port), sleep(ms), and until(what, ms,
// fn), which polls fn every 100 ms until it answers something truthy and
// throws naming what after ms (the error's step is what).
const { spawn } = require('node:child_process');
const net = require('node:net');
const readline = require('node:readline');

const PROTOCOL_VERSION = '2025-11-25';
const STDERR_LINES = 400;

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

function startServer(binary, env = {}, opts = {}) {
  const answerMs = opts.answerMs ?? 10000;
  const fail = opts.fail ?? ((msg) => {
    throw new Error(msg);
  });
  const child = spawn(binary, [], {
    env: { ...process.env, ...env },
    stdio: ['pipe', 'pipe', opts.stderr === 'inherit' ? 'inherit' : 'pipe'],
  });
  const pending = new Map(); // id → resolve
  const stderr = [];
  const exitWaiters = [];
  let nextId = 1;
  let exited = null;
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg && msg.id !== undefined && pending.has(msg.id)) {
      const resolve = pending.get(msg.id);
      pending.delete(msg.id);
      resolve(msg);
    }
  });
  if (child.stderr) {
    readline.createInterface({ input: child.stderr }).on('line', (l) => {
      stderr.push(l);
      if (stderr.length > STDERR_LINES) stderr.shift();
    });
  }
  // stdin closes with the binary: a write after it exited must not throw.
  child.stdin.on('error', () => {});
  child.on('exit', (code, signal) => {
    exited = { code, signal, at: Date.now() };
    for (const resolve of pending.values()) resolve({ error: { message: `devtools-mcp exited (${code ?? signal})` } });
    pending.clear();
    for (const w of exitWaiters.splice(0)) w(exited);
  });
  const exitedMessage = () => `devtools-mcp exited (${JSON.stringify({ code: exited.code, signal: exited.signal })}):\n${stderr.join('\n')}`;
  const write = (msg) => child.stdin.write(JSON.stringify({ jsonrpc: '2.0', ...msg }) + '\n');

  const server = {
    child,
    stderr,
    exited: () => exited,
    waitExit(ms) {
      return new Promise((resolve) => {
        if (exited) return resolve(exited);
        exitWaiters.push(resolve);
        setTimeout(() => resolve(exited), ms).unref();
      });
    },
    request(method, params, ms = answerMs) {
      const id = nextId++;
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          if (pending.delete(id)) resolve({ error: { message: `no answer to ${method} within ${ms} ms` } });
        }, ms);
        timer.unref();
        pending.set(id, (msg) => {
          clearTimeout(timer);
          resolve(msg);
        });
        write({ id, method, params });
      });
    },
    notify(method, params) {
      write({ method, params });
    },
    async initialize(name = opts.name ?? 'real-parts-check') {
      const init = await server.request('initialize', { protocolVersion: PROTOCOL_VERSION, capabilities: {}, clientInfo: { name, version: '1' } });
      if (init.error) fail(`initialize: ${init.error.message}\n${stderr.join('\n')}`);
      server.notify('notifications/initialized', {});
      return init.result;
    },
    async call(name, args = {}, ms = answerMs) {
      if (exited) fail(exitedMessage());
      const answer = await server.request('tools/call', { name, arguments: args }, ms);
      if (answer.error) throw new Error(`${name}: ${answer.error.message}`);
      const r = answer.result;
      if (r.isError) throw new Error(`${name}: ${r.content?.map((c) => c.text).join(' ')}`);
      if (r.structuredContent) return r.structuredContent;
      return JSON.parse(r.content[0].text);
    },
    async tool(name, args = {}, ms = answerMs) {
      if (exited) fail(exitedMessage());
      const start = Date.now();
      const answer = await server.request('tools/call', { name, arguments: args }, ms);
      const took = Date.now() - start;
      if (answer.error) fail(`${name}: ${answer.error.message}`);
      const r = answer.result;
      const value = r.structuredContent ?? JSON.parse(r.content[0].text);
      return { ok: !r.isError, value, ms: took };
    },
    stop(killAfterMs = 3000) {
      if (exited) return Promise.resolve();
      return new Promise((resolve) => {
        exitWaiters.push(() => resolve());
        child.stdin.end();
        setTimeout(() => exited || child.kill('SIGKILL'), killAfterMs).unref();
      });
    },
  };
  return server;
}

async function startMCP(binary, env = {}, opts = {}) {
  const server = startServer(binary, { WS_PORT: String(await freePort()), REACTOTRON_PORT: '0', MCP_TRANSPORT: 'stdio', ...env }, opts);
  try {
    await server.initialize();
  } catch (err) {
    await server.stop(1000);
    throw err;
  }
  return server;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function until(what, ms, fn) {
  const deadline = Date.now() + ms;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline) throw Object.assign(new Error(`${what} (waited ${ms} ms)`), { step: what });
    await sleep(100);
  }
}

module.exports = { startServer, startMCP, freePort, sleep, until };
