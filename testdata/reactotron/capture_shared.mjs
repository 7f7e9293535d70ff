// Records shared.jsonl: a real reactotron-core-client with reactotron-redux
// and reactotron-plugin-zustand in one app, driven by a server that plays
// reactotron-core-server's role: two answers to one backup request, and the
// state.values.change frames each kind of subscription list makes
// ("", "*", "p.*", a store name, a path the state lacks).
//
// Not part of the tests, which are Go only. To record again, in a folder
// outside the repository:
//   npm install reactotron-core-client@2.10.0 reactotron-redux@3.2.1 \
//     redux@5.0.1 ws@8.23.0 reactotron-plugin-zustand@2.0.9 zustand@4.5.7
//   node capture_shared.mjs OUTDIR
// then copy OUTDIR/shared.jsonl here and refresh the goldens with
// go test -run TestReactotronReplay -update.
import fs from "node:fs"
import path from "node:path"
import { createRequire } from "node:module"

const require = createRequire(path.join(process.cwd(), "package.json"))
const { WebSocketServer, WebSocket } = require("ws")
const { createClient } = require("reactotron-core-client")
const { reactotronRedux } = require("reactotron-redux")
const { legacy_createStore: createReduxStore, combineReducers } = require("redux")
const zustandPlugin = require("reactotron-plugin-zustand").default
const { createStore } = require("zustand/vanilla")

const outDir = process.argv[2] || "."
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
let log = []
const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" })
await new Promise((r) => wss.on("listening", r))
let serverSocket = null
function send(type, payload) {
  const text = JSON.stringify({ type, payload })
  log.push(`{"dir":"server","frame":${text}}`)
  serverSocket.send(text)
}
let introduced
const intro = new Promise((r) => (introduced = r))
wss.on("connection", (socket) => {
  serverSocket = socket
  socket.on("message", (data) => {
    const text = data.toString()
    log.push(`{"dir":"app","frame":${text}}`)
    const msg = JSON.parse(text)
    if (msg.type === "client.intro") {
      send("setClientId", "7d0c1b2e-4444-4e1f-8a7b-5d2c0e9f1a04")
      send("state.values.subscribe", { paths: [] })
      introduced()
    }
  })
})

const tron = createClient({
  createSocket: (p) => new WebSocket(p),
  host: "127.0.0.1",
  port: wss.address().port,
  name: "SharedApp",
  environment: "development",
  getClientId: async () => null,
})
const prefs = createStore((set) => ({ theme: "light", setTheme: (theme) => set({ theme }) }))
tron.use(reactotronRedux()).use(zustandPlugin({ stores: [{ name: "prefs", store: prefs }] }))
const cart = (s = { items: [], total: 0 }, a) => (a.type === "cart/add" ? { items: [...s.items, a.sku], total: s.total + a.price } : s)
const auth = (s = { user: { name: "Ada" }, token: null }, a) => s
const store = createReduxStore(combineReducers({ cart, auth }), tron.createEnhancer())
tron.connect()
await intro
await sleep(100)
send("state.backup.request", {})
await sleep(100)
for (const paths of [["", "prefs"], ["*"], ["cart.*", "auth.user", "prefs"], ["auth"]]) {
  send("state.values.subscribe", { paths })
  await sleep(100)
  store.dispatch({ type: "cart/add", sku: "A-1", price: 9.5 })
  await sleep(50)
  prefs.getState().setTheme(paths.length % 2 ? "dark" : "light")
  await sleep(100)
}
send("state.values.subscribe", { paths: [] })
await sleep(100)
fs.writeFileSync(path.join(outDir, "shared.jsonl"), log.join("\n") + "\n")
process.exit(0)
