'use strict';
// The check behind .ci/reactotron.sh: devtools-mcp's Reactotron bridge
// against the real Reactotron client (reactotron-core-client) and state
// plugins, in apps that start as real ones do: Reactotron connects first,
// the store comes later or never.
//
//   node check.js <devtools-mcp binary>
//
// Apps, each a real reactotron-core-client in this process:
//   late-redux   reactotron-redux; the store is created 600 ms after connect
//   no-store     reactotron-redux; the store is never created
//   late-mst     reactotron-mst; trackMstNode 600 ms after connect
//   zustand      reactotron-plugin-zustand with one store (not harmed: the
//                stores stream names it)
// Asserted through MCP over stdio (JSON-RPC lines): no app throws (an
// exception in the client's message handler is an uncaught exception here,
// a red screen in a React Native app); every read answers within 3 s, with
// the "no store yet" error before the store exists and with the state once
// it does; a dispatch after the store exists completes.
const { startMCP, freePort, sleep } = require('../lib/mcp.js');
const { pass, fail, failed, untilOrFail } = require('../lib/steps.js');
const { WebSocket } = require('ws');
const { createClient } = require('reactotron-core-client');
const { reactotronRedux } = require('reactotron-redux');
const { legacy_createStore: createReduxStore, combineReducers } = require('redux');
const mstPlugin = require('reactotron-mst').default ?? require('reactotron-mst').mst;
const { types } = require('mobx-state-tree');
const zustandPlugin = require('reactotron-plugin-zustand').default;
const { createStore } = require('zustand/vanilla');

const READ_MS = 3000; // every read answers within this
const STORE_AFTER_MS = 600;
const thrown = [];
process.on('uncaughtException', (err) => {
  thrown.push(String(err && err.stack ? err.stack.split('\n').slice(0, 3).join(' | ') : err));
});

let mainFailed = false;
const cleanups = [];
const until = (what, ms, fn) => untilOrFail(what, ms, fn, 50);

function connectApp(port, name, plugins) {
  const tron = createClient({
    createSocket: (p) => new WebSocket(p),
    host: '127.0.0.1',
    port,
    name,
    environment: 'development',
    getClientId: async () => `ci-${name}`,
  });
  for (const p of plugins) tron.use(p);
  tron.connect();
  cleanups.push(() => tron.close());
  return tron;
}

// read asks debug_get_snapshot of an app's redux stream and checks it
// answered within READ_MS.
async function read(server, app, stream = 'redux') {
  const got = await server.tool('debug_get_snapshot', { session: `ci-${app}`, stream });
  if (got.ms > READ_MS) fail(`${app}: debug_get_snapshot ${stream} took ${got.ms} ms, over ${READ_MS}`);
  return got;
}

function expectNoStore(app, got) {
  if (got.ok || got.value.details?.noStoreYet !== true || !/no store yet/.test(got.value.message)) {
    fail(`${app}: a read before the store exists = ${JSON.stringify(got.value)}, want the "no store yet" error`);
  }
  pass(`${app}: a read before the store exists says so in ${got.ms} ms: ${got.value.message}`);
}

async function main() {
  const binary = process.argv[2];
  if (!binary) fail('usage: node check.js <devtools-mcp binary>');
  const port = await freePort();
  // server.tool answers {ok, value, ms}: the result object (or the error
  // object of an isError result) and how long the call took.
  const server = await startMCP(binary, { REACTOTRON_PORT: String(port), METRO_URL: 'off' }, { name: 'reactotron-check', answerMs: 10000, fail });
  cleanups.push(() => server.stop(1000));
  await until('the Reactotron bridge to listen', 5000, async () => (await server.tool('debug_health_check')).value.server?.reactotron?.listening);

  // The apps connect at once; their stores come later or never.
  const lateRedux = connectApp(port, 'late-redux', [reactotronRedux()]);
  connectApp(port, 'no-store', [reactotronRedux()]);
  const lateMst = connectApp(port, 'late-mst', [mstPlugin()]);
  const prefs = createStore(() => ({ theme: 'light' }));
  connectApp(port, 'zustand', [zustandPlugin({ stores: [{ name: 'prefs', store: prefs }] })]);
  const connectedAt = Date.now();
  const cart = (s = { items: [], total: 0 }, a) => (a.type === 'cart/add' ? { items: [...s.items, a.sku], total: s.total + a.price } : s);
  setTimeout(() => createReduxStore(combineReducers({ cart }), lateRedux.createEnhancer()), STORE_AFTER_MS);
  const Todo = types.model('Todo', { title: types.string, done: false }).actions((self) => ({ toggle() { self.done = !self.done; } }));
  const RootStore = types.model('RootStore', { todos: types.array(Todo) });
  setTimeout(() => lateMst.trackMstNode(RootStore.create({ todos: [{ title: 'milk' }] })), STORE_AFTER_MS);

  await until('the four apps to be sessions', 5000, async () => {
    const sessions = (await server.tool('debug_health_check')).value.sessions ?? [];
    return ['late-redux', 'no-store', 'late-mst', 'zustand'].every((a) => sessions.some((s) => s.id === `ci-${a}` && s.connected));
  });
  // Reads before the stores exist: no-store and late-mst (late-redux's store
  // may already be there on a slow machine: it is read after).
  if (Date.now() - connectedAt < STORE_AFTER_MS) {
    const [noStore, mst] = await Promise.all([read(server, 'no-store'), read(server, 'late-mst')]);
    expectNoStore('no-store', noStore);
    if (mst.ok) pass('late-mst: the tree was tracked before the first read');
    else expectNoStore('late-mst', mst);
  }
  await sleep(Math.max(0, STORE_AFTER_MS + 200 - (Date.now() - connectedAt)));

  // The first read after the store exists answers with it.
  const redux = await read(server, 'late-redux');
  if (!redux.ok || JSON.stringify(redux.value.state) !== '{"cart":{"items":[],"total":0}}') {
    fail(`late-redux: the first read after the store exists = ${JSON.stringify(redux.value)}, want the state`);
  }
  pass(`late-redux: the first read after the store exists answers with it in ${redux.ms} ms`);
  const mst = await read(server, 'late-mst');
  if (!mst.ok || JSON.stringify(mst.value.state) !== '{"todos":[{"title":"milk","done":false}]}') {
    fail(`late-mst: the first read after trackMstNode = ${JSON.stringify(mst.value)}, want the tree`);
  }
  pass(`late-mst: the first read after trackMstNode answers with the tree in ${mst.ms} ms`);
  expectNoStore('no-store', await read(server, 'no-store'));
  const dispatched = await server.tool('debug_dispatch_action', { session: 'ci-late-redux', action: { type: 'cart/add', sku: 'A-1', price: 9.5 } });
  if (!dispatched.ok) fail(`late-redux: dispatch = ${JSON.stringify(dispatched.value)}`);
  const after = await read(server, 'late-redux');
  if (JSON.stringify(after.value.state) !== '{"cart":{"items":["A-1"],"total":9.5}}') fail(`late-redux: state after the dispatch = ${JSON.stringify(after.value)}`);
  pass('late-redux: a dispatch completes and the next read shows it');
  const dispatchNoStore = await server.tool('debug_dispatch_action', { session: 'ci-no-store', action: { type: 'x' } });
  if (dispatchNoStore.ok || dispatchNoStore.value.details?.noStoreYet !== true) fail(`no-store: dispatch = ${JSON.stringify(dispatchNoStore.value)}, want the "no store yet" error`);
  pass('no-store: a dispatch is refused without reaching the app');

  // Zustand's stores, learned from the probe on connect.
  const stores = await until('the zustand app\'s stores stream', 5000, async () => {
    const got = await server.tool('debug_get_snapshot', { session: 'ci-zustand', stream: 'stores' });
    return got.ok && got.value.state?.prefs ? got : null;
  });
  if (stores.value.state.prefs.theme !== 'light') fail(`zustand: stores = ${JSON.stringify(stores.value.state)}`);
  pass('zustand: the stores stream holds the named store');

  await sleep(200); // frames in flight reach the apps
  if (thrown.length > 0) fail(`an app threw: ${thrown.join('\n')}`);
  pass('no app threw');
}

main()
  .catch((err) => {
    if (!err.reported) console.log(`FAIL: ${err.stack || err}`);
    mainFailed = true;
  })
  .finally(() => {
    for (const c of cleanups.reverse()) {
      try {
        c();
      } catch {}
    }
    setTimeout(() => process.exit(mainFailed || failed() ? 1 : 0), 300);
  });
