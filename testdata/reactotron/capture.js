// Records testdata/reactotron/*.jsonl. It plays reactotron-core-server's
// role on a loopback port and drives a real reactotron-core-client +
// reactotron-redux + redux app (and the real reactotron-react-native-mmkv
// plugin over a stand-in storage) against it, logging every frame in both
// directions as JSON lines: {"dir":"app"|"server","frame":<frame as sent>}.
//
// Not part of the tests, which are Go only. To record again, in a folder
// outside the repository:
//   npm install reactotron-core-client@2.10.0 reactotron-redux@3.2.1 \
//     reactotron-react-native-mmkv@0.2.9 redux@5.0.1 ws@8.23.0
//   node capture.js OUTDIR
// then copy OUTDIR/*.jsonl here and refresh the goldens with
// go test -run TestReactotronReplay -update.
const fs = require("fs")
const path = require("path")
const { WebSocketServer, WebSocket } = require("ws")
const { createClient } = require("reactotron-core-client")
const { reactotronRedux } = require("reactotron-redux")
const mmkvPlugin = require("reactotron-react-native-mmkv").default
const { legacy_createStore: createStore, combineReducers } = require("redux")

const outDir = process.argv[2] || "."
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// ---- the server side, as reactotron-core-server does it ----
let log = []
let pending = [] // resolvers waiting for an app frame of a type
const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" })
let serverSocket = null
function guid() {
  const s4 = () => Math.floor((1 + Math.random()) * 0x10000).toString(16).substring(1)
  return s4() + s4() + "-" + s4() + "-" + s4() + "-" + s4() + "-" + s4() + s4() + s4()
}
let fixedIds = ["3b6f1e2a-9c4d-4e1f-8a7b-5d2c0e9f1a34"]
function send(type, payload) {
  const text = JSON.stringify({ type, payload })
  log.push(`{"dir":"server","frame":${text}}`)
  serverSocket.send(text)
}
wss.on("connection", (socket) => {
  serverSocket = socket
  socket.on("message", (data) => {
    const text = data.toString()
    log.push(`{"dir":"app","frame":${text}}`)
    const msg = JSON.parse(text)
    if (msg.type === "client.intro") {
      const id = msg.payload.clientId
      if (!id || id === "~~~ null ~~~" || id === "~~~ empty string ~~~" || id === "~~~ undefined ~~~") {
        send("setClientId", fixedIds[0] || guid())
      }
      // reactotron-core-server resends the state subscriptions to every new connection
      send("state.values.subscribe", { paths: [] })
    }
    pending = pending.filter(([t, r]) => (msg.type === t ? (r(msg), false) : true))
  })
})
const waitFor = (type) => new Promise((r) => pending.push([type, r]))
function flush(name) {
  fs.writeFileSync(path.join(outDir, name), log.join("\n") + "\n")
  log = []
}

// ---- the app ----
const initialCart = { items: [{ sku: "A-1", qty: 1, price: 9.5 }], coupon: "", total: 9.5 }
function cart(state = initialCart, action) {
  switch (action.type) {
    case "cart/add":
      return { ...state, items: [...state.items, action.payload], total: state.total + action.payload.price * action.payload.qty }
    case "cart/clear":
      return { items: [], coupon: "", total: 0 }
    default:
      return state
  }
}
function auth(state = { user: { id: 42, name: "Ada", role: "admin", verified: false, nickname: null } }, action) {
  if (action.type === "auth/logout") return { user: null }
  return state
}
function settings(state = { theme: "dark", fontScale: 1, beta: false }, action) {
  if (action.type === "settings/set") return { ...state, ...action.payload }
  return state
}

function fakeMMKV() {
  const data = new Map()
  const listeners = []
  return {
    set(k, v) { data.set(k, v); listeners.forEach((l) => l(k)) },
    delete(k) { data.delete(k); listeners.forEach((l) => l(k)) },
    getString(k) { const v = data.get(k); return typeof v === "string" ? v : undefined },
    addOnValueChangedListener(l) { listeners.push(l); return { remove() {} } },
  }
}

let storedClientId = null
function makeClient(extraClient) {
  const mmkv = fakeMMKV()
  const tron = createClient({
    createSocket: (p) => new WebSocket(p),
    host: "127.0.0.1",
    port: wss.address().port,
    name: "ShopApp",
    environment: "development",
    client: extraClient,
    getClientId: async () => storedClientId,
    setClientId: async (id) => { storedClientId = id },
  })
  tron.use(reactotronRedux()).use(mmkvPlugin({ storage: mmkv }))
  return { tron, mmkv }
}

async function session1() {
  const { tron, mmkv } = makeClient(undefined)
  const store = createStore(combineReducers({ cart, auth, settings }), tron.createEnhancer())
  const intro = waitFor("client.intro")
  tron.connect()
  await intro
  await sleep(100)

  // custom commands, registered twice as Fast Refresh does
  const ran = []
  const register = () => {
    tron.onCustomCommand({ command: "resetCart", title: "Reset cart", description: "Empties the cart", handler: () => { ran.push("resetCart"); store.dispatch({ type: "cart/clear" }) } })
    tron.onCustomCommand({ command: "login", title: "Log in as", args: [{ name: "user", type: "string" }, { name: "role", type: "string" }], handler: (args) => { ran.push(args); tron.log(["login", args]) } })
    tron.onCustomCommand("ping", () => ran.push("ping"))
  }
  register()
  register()
  await sleep(50)

  // redux actions
  store.dispatch({ type: "cart/add", payload: { sku: "B-7", qty: 2, price: 3 } })
  store.dispatch({ type: "settings/set", payload: { theme: "light", beta: true } })
  store.dispatch({ type: "auth/logout" })
  await sleep(50)

  // logs at each level
  tron.log("plain log")
  tron.log("two", "args")
  tron.logImportant("important log")
  tron.debug({ nested: { ok: true } })
  tron.warn("careful")
  const err = new Error("boom")
  tron.error(err.message, err.stack)
  tron.error("symbolicated", [
    { fileName: "App.tsx", functionName: "onPress", lineNumber: 12, columnNumber: 7 },
    { fileName: "index.js", functionName: "", lineNumber: 3, columnNumber: null },
  ])
  tron.error("plain error without stack")

  // api responses, shaped as the networking plugin builds them
  tron.apiResponse(
    { url: "https://api.example.com/cart?page=2&q=red+shoes", method: "GET", data: null, headers: { Accept: "application/json" }, params: { page: "2", q: "red shoes" } },
    { body: { items: [], page: 2 }, status: 200, headers: { "content-type": "application/json" } },
    42
  )
  tron.apiResponse(
    { url: "https://api.example.com/login", method: "POST", data: '{"user":"ada"}', headers: { "Content-Type": "application/json" }, params: null },
    { body: { error: "bad password" }, status: 401, headers: { "content-type": "application/json" } },
    0
  )
  tron.apiResponse(
    { url: "https://cdn.example.com/logo.png", method: "GET", data: undefined, headers: null, params: null },
    { body: "~~~ skipped ~~~", status: 200, headers: { "content-type": "image/png" } },
    7.25
  )

  // display messages, benchmark, image
  tron.display({ name: "ORDER", value: { id: 7, paid: false }, preview: "Order 7", important: true })
  tron.display({ name: "EMPTY" })
  const bench = tron.benchmark("checkout")
  bench.step("validate")
  bench.stop("done")
  tron.image({ uri: "data:image/png;base64,iVBORw0KGgo=", preview: "pixel", caption: "a pixel", width: 1, height: 1 })

  // MMKV plugin (the real one, over a fake storage)
  mmkv.set("session.token", "abc123")
  mmkv.set("counter", 5)
  mmkv.delete("session.token")
  mmkv.set("empty", "")

  // asyncStorage plugin: the exact sends of reactotron-react-native's plugin
  const asyncMut = (action, data) => tron.send("asyncStorage.mutation", { action, data })
  asyncMut("setItem", { key: "user", value: '{"id":42}' })
  asyncMut("removeItem", { key: "user" })
  asyncMut("mergeItem", { key: "prefs", value: '{"a":1}' })
  asyncMut("clear")
  asyncMut("multiSet", { pairs: [["a", "1"], ["b", "2"]] })
  asyncMut("multiRemove", { keys: ["a", "b"] })
  asyncMut("multiMerge", { pairs: [["c", '{"x":0}']] })

  // every ~~~ encoding
  const circ = { name: "root" }
  circ.self = circ
  circ.child = { parent: circ }
  function namedFn() {}
  tron.display({
    name: "ENCODINGS",
    value: {
      undef: undefined, fn: namedFn, anon: () => 1, anonFn: function () {}, circ, nan: NaN, inf: Infinity, ninf: -Infinity,
      zero: 0, negZero: -0, f: false, t: true, empty: "", nul: null, list: [undefined, null, 0, false, "", NaN, Infinity, namedFn, (() => function () {})()],
      set: new Set([1, 2]), map: new Map([["k", "v"]]), date: new Date("2026-01-02T03:04:05.000Z"), big: BigInt("12345678901234567890"),
      tricky: "~~~ not an encoding", nested: { deeper: { zero: 0, f: false } },
    },
    preview: "every encoding",
  })
  tron.log(undefined)
  tron.log(0)
  tron.log(null)
  await sleep(100)

  // server → app requests
  send("state.values.request", { path: "cart.items" })
  await waitFor("state.values.response")
  send("state.values.request", { path: "cart.total" })
  await waitFor("state.values.response")
  send("state.values.request", { path: "cart.nothere" })
  await waitFor("state.values.response")
  send("state.values.request", { path: "" })
  await waitFor("state.keys.response")
  send("state.values.request", {})
  await waitFor("state.keys.response")
  send("state.keys.request", { path: "settings" })
  await waitFor("state.keys.response")
  send("state.keys.request", { path: "settings.theme" })
  await waitFor("state.keys.response")
  send("state.keys.request", { path: "" })
  await waitFor("state.keys.response")
  send("state.backup.request", {})
  await waitFor("state.backup.response")
  send("state.action.dispatch", { action: { type: "cart/add", payload: { sku: "C-3", qty: 1, price: 1.5 } } })
  await waitFor("state.action.complete")
  send("custom", { command: "login", args: { user: "ada", role: "admin" } })
  await waitFor("log")
  send("custom", { command: "resetCart" })
  await waitFor("state.action.complete")
  send("custom", "ping")
  await sleep(100)
  if (ran.length !== 3) throw new Error("custom commands did not all run: " + JSON.stringify(ran))

  // an app unregistering a command
  const off = tron.onCustomCommand({ command: "temp", handler: () => {} })
  off()
  await sleep(100)
  tron.close()
  await sleep(100)
  flush("session.jsonl")
}

async function session2() {
  // a reload: the app reconnects with the clientId the server gave it, and a
  // client block shaped like reactotron-react-native's defaults.
  fixedIds = []
  const { tron } = makeClient({
    reactotronLibraryName: "reactotron-react-native",
    reactotronLibraryVersion: "5.1.14",
    platform: "ios",
    platformVersion: "17.4",
    osRelease: undefined,
    model: undefined,
    serverHost: "localhost:8081",
    forceTouch: false,
    interfaceIdiom: "phone",
    systemName: "iOS",
    uiMode: undefined,
    serial: undefined,
    androidId: undefined,
    reactNativeVersion: "0.74.1",
    screenWidth: 1179,
    screenHeight: 2556,
    screenScale: 3,
    windowWidth: 393,
    windowHeight: 852,
    windowScale: 3,
  })
  const store = createStore(combineReducers({ cart, auth, settings }), tron.createEnhancer())
  const intro = waitFor("client.intro")
  tron.connect()
  await intro
  await sleep(100)
  store.dispatch({ type: "cart/clear" })
  send("state.backup.request", {})
  await waitFor("state.backup.response")
  await sleep(50)
  tron.close()
  await sleep(100)
  flush("reconnect.jsonl")
}

;(async () => {
  await new Promise((r) => wss.on("listening", r))
  await session1()
  await session2()
  wss.close()
  process.exit(0)
})().catch((e) => {
  console.error(e)
  process.exit(1)
})
