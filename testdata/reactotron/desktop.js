// Records testdata/reactotron/desktop.jsonl: a real reactotron-core-client +
// reactotron-redux app connected to devtools-mcp's Reactotron port while
// devtools-mcp relays it to a stand-in for the Reactotron desktop app
// (REACTOTRON_DESKTOP). The stand-in speaks reactotron-core-server's side:
// state.values.subscribe to every connection, setClientId to an intro
// without an id. Every frame is logged as a JSON line
// {"dir":"app"|"server"|"to-desktop"|"from-desktop","frame":<as sent>}:
// app and server as the app's socket saw them, to-desktop and from-desktop
// as the desktop's sockets saw them. The agent's tool calls and their
// results go to desktop-mcp.json beside it.
//
// Not part of the tests, which are Go only. To record again, in a folder
// outside the repository:
//   npm install reactotron-core-client@2.10.0 reactotron-redux@3.2.1 \
//     redux@5.0.1 ws@8.23.0
//   go build -o devtools-mcp <repo> && node desktop.js ./devtools-mcp OUTDIR
const fs = require("fs")
const net = require("net")
const path = require("path")
const { spawn } = require("child_process")
const { WebSocketServer, WebSocket } = require("ws")
const { createClient } = require("reactotron-core-client")
const { reactotronRedux } = require("reactotron-redux")
const { legacy_createStore: createStore, combineReducers } = require("redux")

const binary = process.argv[2]
const outDir = process.argv[3] || "."
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const log = []
const record = (dir, text) => log.push(`{"dir":"${dir}","frame":${text}}`)
const until = async (what, ok, ms = 5000) => {
  for (const end = Date.now() + ms; Date.now() < end; await sleep(10)) if (ok()) return
  throw new Error("timed out waiting for " + what)
}
const freePort = () =>
  new Promise((r) => {
    const s = net.createServer().listen(0, "127.0.0.1", () => {
      const p = s.address().port
      s.close(() => r(p))
    })
  })

// ---- the desktop app's server side, as reactotron-core-server does it ----
let desktop = null
let desktopSockets = []
let fromApp = [] // frames the desktop received, parsed
function startDesktop(port) {
  desktop = new WebSocketServer({ port, host: "127.0.0.1" })
  desktop.on("connection", (socket) => {
    desktopSockets.push(socket)
    socket.on("message", (data) => {
      const text = data.toString()
      record("to-desktop", text)
      const msg = JSON.parse(text)
      fromApp.push(msg)
      if (msg.type === "client.intro") {
        const id = msg.payload.clientId
        if (!id || id === "~~~ null ~~~" || id === "~~~ empty string ~~~") desktopSend(socket, "setClientId", "d35k70p0-0000-4000-8000-000000000001")
      }
    })
    desktopSend(socket, "state.values.subscribe", { paths: [] })
  })
  return new Promise((r) => desktop.on("listening", r))
}
function desktopSend(socket, type, payload) {
  const text = JSON.stringify({ type, payload })
  record("from-desktop", text)
  socket.send(text)
}
async function stopDesktop() {
  desktopSockets.forEach((s) => s.terminate())
  desktopSockets = []
  await new Promise((r) => desktop.close(r))
}

// ---- the agent: devtools-mcp over stdio ----
let mcp, nextId = 1
const waiting = new Map()
const calls = []
function startMCP(env) {
  mcp = spawn(binary, [], { env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] })
  let buf = ""
  mcp.stdout.on("data", (d) => {
    buf += d
    for (let i; (i = buf.indexOf("\n")) >= 0; ) {
      const line = buf.slice(0, i)
      buf = buf.slice(i + 1)
      const msg = JSON.parse(line)
      if (msg.id && waiting.has(msg.id)) waiting.get(msg.id)(msg)
    }
  })
  const err = fs.createWriteStream(path.join(outDir, "desktop-stderr.log"))
  mcp.stderr.pipe(err)
}
function rpc(method, params) {
  const id = nextId++
  return new Promise((r) => {
    waiting.set(id, r)
    mcp.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n")
  })
}
async function tool(name, args) {
  const started = Date.now()
  const res = await rpc("tools/call", { name, arguments: args })
  const text = res.result.content[0].text
  calls.push({ name, args, ms: Date.now() - started, isError: res.result.isError, result: JSON.parse(text) })
  return JSON.parse(text)
}

// ---- the app ----
const initialCart = { items: [{ sku: "A-1", qty: 1, price: 9.5 }], coupon: "", total: 9.5 }
function cart(state = initialCart, action) {
  if (action.type === "cart/add") return { ...state, items: [...state.items, action.payload], total: state.total + action.payload.price * action.payload.qty }
  return state
}
function auth(state = { user: { id: 42, name: "Ada", role: "admin", verified: false, nickname: null } }) {
  return state
}
let storedClientId = null
function makeApp(port) {
  const tron = createClient({
    // A socket shaped like React Native's: the client sets onopen,
    // onclose and onmessage, and an error thrown by a handler is reported
    // (event-target-shim logs it) while later messages are still delivered.
    createSocket: (p) => {
      const ws = new WebSocket(p)
      const rn = { send: (text) => (record("app", text), ws.send(text)), close: () => ws.close() }
      ws.on("open", () => rn.onopen && rn.onopen())
      ws.on("close", () => rn.onclose && rn.onclose())
      ws.on("message", (d) => {
        record("server", d.toString())
        try {
          rn.onmessage && rn.onmessage({ data: d.toString() })
        } catch (e) {
          thrown.push(String(e))
        }
      })
      return rn
    },
    host: "127.0.0.1",
    port,
    name: "ShopApp",
    environment: "development",
    getClientId: async () => storedClientId,
    setClientId: async (id) => { storedClientId = id },
  })
  tron.use(reactotronRedux())
  const store = createStore(combineReducers({ cart, auth }), tron.createEnhancer())
  return { tron, store }
}

// reactotron-redux throws on a path through null (see makeApp's socket).
const thrown = []

;(async () => {
  const desktopPort = await freePort()
  const bridgePort = await freePort()
  const wsPort = await freePort()
  await startDesktop(desktopPort)
  startMCP({ REACTOTRON_PORT: String(bridgePort), REACTOTRON_DESKTOP: "127.0.0.1:" + desktopPort, WS_PORT: String(wsPort), LOG_LEVEL: "debug" })
  await rpc("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "desktop.js", version: "1" } })
  mcp.stdin.write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }) + "\n")
  await until("the bridge", async () => true)
  await sleep(300)

  const { tron, store } = makeApp(bridgePort)
  tron.connect()
  await until("the intro at the desktop", () => fromApp.some((m) => m.type === "client.intro"))
  await until("the client id", () => storedClientId !== null)
  await sleep(100)
  store.dispatch({ type: "cart/add", payload: { sku: "B-7", qty: 2, price: 3 } })
  tron.log("hello from the app")
  await until("the log at the desktop", () => fromApp.some((m) => m.type === "log"))

  // the agent's side
  await tool("debug_health_check", {})
  await tool("debug_get_state_path", { path: "auth.user.name" })
  await tool("debug_get_state_path", { path: "auth.user.nmae" })
  await tool("debug_get_state_path", { path: "auth.user.nickname.first" })
  await tool("debug_query_events", { stream: "console" })

  // the desktop's side, while the agent asks too
  const sock = desktopSockets[0]
  desktopSend(sock, "state.values.request", { path: "cart.total" })
  desktopSend(sock, "state.backup.request", {})
  const snap = tool("debug_get_snapshot", { stream: "redux" })
  desktopSend(sock, "state.keys.request", { path: "auth.user" })
  desktopSend(sock, "state.action.dispatch", { action: { type: "cart/add", payload: { sku: "C-3", qty: 1, price: 1.5 } } })
  await snap
  await until("the desktop's answers", () => fromApp.filter((m) => /response$/.test(m.type)).length >= 3)
  await tool("debug_get_state_path", { path: "cart.total" })

  // the desktop restarts
  await stopDesktop()
  tron.log("while the desktop is away")
  await sleep(100)
  fromApp = []
  await startDesktop(desktopPort)
  await until("the replayed intro", () => fromApp.some((m) => m.type === "client.intro"))
  await until("the queued log", () => fromApp.some((m) => m.type === "log"))
  await tool("debug_health_check", {})

  tron.close()
  await sleep(200)
  await stopDesktop()
  mcp.stdin.end()
  await new Promise((r) => mcp.on("exit", r))
  fs.writeFileSync(path.join(outDir, "desktop.jsonl"), log.join("\n") + "\n")
  fs.writeFileSync(path.join(outDir, "desktop-mcp.json"), JSON.stringify({ calls, thrown }, null, 2) + "\n")
  process.exit(0)
})().catch((e) => {
  console.error(e)
  process.exit(1)
})
