// Records testdata/reactotron/{redux_late,mst_late,zustand_probe}.jsonl:
// what real Reactotron state plugins do with the messages the bridge sends
// an app whose store does not exist yet (rtron_storeprobe.go). Like
// capture_state.mjs, it plays the server's role on a loopback port and
// drives a real reactotron-core-client, logging every frame in both
// directions as JSON lines {"dir":"app"|"server","frame":...}. A line
// {"dir":"note","frame":...} says what the app did that no frame shows
// (an exception thrown in its message handler).
//
//   redux_late.jsonl     reactotron-redux 3.2.1, the store created after
//                        connect: the probe before and after the store
//                        exists, a backup, a dispatch; then a backup sent
//                        before a store exists (it throws); an app whose
//                        store exists before it connects.
//   mst_late.jsonl       reactotron-mst 3.1.12, trackMstNode after connect:
//                        the probe and a backup before tracking (nothing
//                        answers), the probe and a backup after.
//   zustand_probe.jsonl  reactotron-plugin-zustand 2.0.9: the probe names
//                        the stores; a subscription by name.
//
// Not part of the tests, which are Go only. To record again, in a folder
// outside the repository:
//   npm install reactotron-core-client@2.10.0 ws@8.23.0 redux@5.0.1 \
//     reactotron-redux@3.2.1 reactotron-mst@3.1.12 mobx-state-tree@9.0.0 \
//     mobx@7.1.3 reactotron-plugin-zustand@2.0.9 zustand@4.5.7
//   node capture_lifecycle.mjs OUTDIR
import fs from "node:fs"
import path from "node:path"
import { createRequire } from "node:module"

const require = createRequire(path.join(process.cwd(), "package.json"))
const { WebSocketServer, WebSocket } = require("ws")
const { createClient } = require("reactotron-core-client")
const { reactotronRedux } = require("reactotron-redux")
const { legacy_createStore: createReduxStore, combineReducers } = require("redux")
const mst = require("reactotron-mst").default ?? require("reactotron-mst").mst
const { types } = require("mobx-state-tree")
const zustandPlugin = require("reactotron-plugin-zustand").default
const { createStore } = require("zustand/vanilla")

const outDir = process.argv[2] || "."
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let log = []
let introduced = () => {}
const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" })
await new Promise((r) => wss.on("listening", r))
let serverSocket = null
const ids = ["7d0c1b2e-5555-4e1f-8a7b-5d2c0e9f1a05", "7d0c1b2e-6666-4e1f-8a7b-5d2c0e9f1a06", "7d0c1b2e-7777-4e1f-8a7b-5d2c0e9f1a07",
  "7d0c1b2e-8888-4e1f-8a7b-5d2c0e9f1a08", "7d0c1b2e-9999-4e1f-8a7b-5d2c0e9f1a09"]
// The path the bridge's probe subscribes to (storeProbePath): no store has it.
const P = "__devtools_mcp_store_probe__"
function send(type, payload) {
  const text = JSON.stringify({ type, payload })
  log.push(`{"dir":"server","frame":${text}}`)
  serverSocket.send(text)
}
// The probe the bridge sends on introduction ("*" names a Zustand app's
// stores), and the one a read sends while no store is known.
function probe(onConnect) {
  send("state.values.subscribe", { paths: onConnect ? ["*", P] : [P] })
  send("state.values.subscribe", { paths: [] })
}
wss.on("connection", (socket) => {
  serverSocket = socket
  socket.on("message", (data) => {
    const text = data.toString()
    log.push(`{"dir":"app","frame":${text}}`)
    if (JSON.parse(text).type === "client.intro") {
      send("setClientId", ids.shift())
      probe(true)
      introduced()
    }
  })
})
// An exception in the client's message handler reaches here in Node; in a
// React Native app it is a red screen.
process.on("uncaughtException", (err) => {
  log.push(`{"dir":"note","frame":${JSON.stringify({ uncaughtException: String(err) })}}`)
})
function flush(name) {
  fs.writeFileSync(path.join(outDir, name), log.join("\n") + "\n")
  log = []
}
async function connect(name, plugins) {
  const tron = createClient({ createSocket: (p) => new WebSocket(p), host: "127.0.0.1", port: wss.address().port, name,
    environment: "development", getClientId: async () => null })
  for (const p of plugins) tron.use(p)
  const intro = new Promise((r) => (introduced = r))
  tron.connect()
  await intro
  await sleep(100)
  return tron
}

// ---- reactotron-redux, store created after connect ----
{
  const tron = await connect("LateReduxApp", [reactotronRedux()])
  probe()
  await sleep(100)
  const cart = (s = { items: [], total: 0 }, a) => (a.type === "cart/add" ? { items: [...s.items, a.sku], total: s.total + a.price } : s)
  createReduxStore(combineReducers({ cart }), tron.createEnhancer())
  await sleep(100)
  probe()
  await sleep(100)
  send("state.backup.request", {})
  await sleep(100)
  send("state.action.dispatch", { action: { type: "cart/add", sku: "A-1", price: 9.5 } })
  await sleep(100)
  tron.close()
  await sleep(100)
}
{
  const tron = await connect("NoStoreReduxApp", [reactotronRedux()])
  send("state.backup.request", {})
  await sleep(100)
  tron.close()
  await sleep(100)
}
{
  // The store exists before connect: the probe on introduction shows it.
  const tron = createClient({ createSocket: (p) => new WebSocket(p), host: "127.0.0.1", port: wss.address().port,
    name: "ReadyReduxApp", environment: "development", getClientId: async () => null })
  tron.use(reactotronRedux())
  createReduxStore(combineReducers({ cart: (s = { items: ["B-2"] }) => s }), tron.createEnhancer())
  const intro = new Promise((r) => (introduced = r))
  tron.connect()
  await intro
  await sleep(100)
  tron.close()
  await sleep(100)
}
flush("redux_late.jsonl")

// ---- reactotron-mst, trackMstNode after connect ----
{
  const Todo = types.model("Todo", { title: types.string, done: false }).actions((self) => ({ toggle() { self.done = !self.done } }))
  const RootStore = types.model("RootStore", { todos: types.array(Todo) })
  const tron = await connect("LateMstApp", [mst()])
  probe()
  await sleep(100)
  send("state.backup.request", {})
  await sleep(100)
  const root = RootStore.create({ todos: [{ title: "milk" }] })
  tron.trackMstNode(root)
  probe()
  await sleep(100)
  send("state.backup.request", {})
  await sleep(100)
  root.todos[0].toggle()
  await sleep(100)
  tron.close()
  await sleep(100)
}
flush("mst_late.jsonl")

// ---- reactotron-plugin-zustand: the probe names the stores ----
{
  const cart = createStore((set) => ({ items: [], add: (sku) => set((s) => ({ items: [...s.items, sku] })) }))
  const prefs = createStore(() => ({ theme: "light" }))
  const tron = await connect("ZustandProbeApp", [zustandPlugin({ stores: [{ name: "cart", store: cart }, { name: "prefs", store: prefs }] })])
  send("state.values.subscribe", { paths: ["cart", "prefs"] })
  await sleep(100)
  cart.getState().add("A-1")
  await sleep(100)
  tron.close()
  await sleep(100)
}
flush("zustand_probe.jsonl")
process.exit(0)
