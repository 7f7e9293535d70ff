// Records testdata/reactotron/{react_query,zustand,mst}.jsonl: the frames of
// real Reactotron state plugins other than reactotron-redux. Like
// capture.js, it plays reactotron-core-server's role on a loopback port and
// drives a real reactotron-core-client with each plugin, logging every frame
// in both directions as JSON lines {"dir":"app"|"server","frame":...}.
//
//   react_query.jsonl  reactotron-react-query 2.0.2 + @tanstack/query-core:
//                      queries that succeed, fail, are invalidated (through
//                      the plugin's custom command) and removed; mutations
//                      that succeed and fail; a refetch by dispatch.
//   zustand.jsonl      reactotron-plugin-zustand 2.0.9 with two stores that
//                      hold functions: backup, a values request (never
//                      answered), subscribe, changes, unsubscribe.
//   mst.jsonl          reactotron-mst 3.1.12 + mobx-state-tree: actions, a
//                      backup, a values request, a dispatch without `type`.
//
// Not part of the tests, which are Go only. To record again, in a folder
// outside the repository:
//   npm install reactotron-core-client@2.10.0 ws@8.23.0 \
//     reactotron-react-query@2.0.2 @tanstack/query-core@5.108.0 \
//     reactotron-plugin-zustand@2.0.9 zustand@4.5.7 \
//     reactotron-mst@3.1.12 mobx-state-tree@9.0.0 mobx@7.1.3
//   cp capture_state.mjs esm_hook.mjs . && node --import ./esm_hook.mjs capture_state.mjs OUTDIR
// then copy OUTDIR/*.jsonl here and refresh the goldens with
// go test -run TestReactotronReplay -update.
import fs from "node:fs"
import path from "node:path"
import { createRequire } from "node:module"

const require = createRequire(path.join(process.cwd(), "package.json"))
const { WebSocketServer, WebSocket } = require("ws")
const { createClient } = require("reactotron-core-client")
const { QueryClient, QueryObserver, MutationObserver } = require("@tanstack/query-core")
const zustandPlugin = require("reactotron-plugin-zustand").default
const { createStore } = require("zustand/vanilla")
const mst = require("reactotron-mst").default ?? require("reactotron-mst").mst
const { types } = require("mobx-state-tree")
const { reactotronReactQuery, QueryClientManager } = await import("reactotron-react-query")

const outDir = process.argv[2] || "."
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

// ---- the server side, as reactotron-core-server does it ----
let log = []
let pending = []
const wss = new WebSocketServer({ port: 0, host: "127.0.0.1" })
await new Promise((r) => wss.on("listening", r))
let serverSocket = null
const ids = ["7d0c1b2e-1111-4e1f-8a7b-5d2c0e9f1a01", "7d0c1b2e-2222-4e1f-8a7b-5d2c0e9f1a02", "7d0c1b2e-3333-4e1f-8a7b-5d2c0e9f1a03"]
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
      send("setClientId", ids.shift())
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
function makeClient(name) {
  return createClient({
    createSocket: (p) => new WebSocket(p),
    host: "127.0.0.1",
    port: wss.address().port,
    name,
    environment: "development",
    getClientId: async () => null,
    setClientId: async () => {},
  })
}
async function connect(tron) {
  const intro = waitFor("client.intro")
  tron.connect()
  await intro
  await sleep(100)
}

// ---- TanStack Query ----
async function reactQuery() {
  const queryClient = new QueryClient({ defaultOptions: { queries: { retry: false, gcTime: Infinity } } })
  const tron = makeClient("QueryApp")
  tron.use(reactotronReactQuery(new QueryClientManager({ queryClient })))
  await connect(tron)
  let todos = [{ id: 1, title: "milk", done: false }]
  const todosObserver = new QueryObserver(queryClient, { queryKey: ["todos"], queryFn: async () => todos.map((t) => ({ ...t })) })
  const unsubscribe = todosObserver.subscribe(() => {})
  await sleep(100)
  // a failing query with an observer, as a screen's useQuery has
  const userObserver = new QueryObserver(queryClient, { queryKey: ["user", 42], queryFn: async () => { throw new Error("401 Unauthorized") } })
  const unsubscribeUser = userObserver.subscribe(() => {})
  await sleep(100)
  unsubscribeUser()
  await sleep(50)
  // the plugin's own command, as Reactotron's desktop app runs it
  todos = [...todos, { id: 2, title: "eggs", done: false }]
  send("custom", { command: "invalidate-react-query", args: { queryKey: "todos" } })
  await sleep(150)
  // a refetch through the plugin's dispatch hook
  send("state.action.dispatch", { action: { queryHash: '["todos"]' } })
  await sleep(150)
  // mutations: one that succeeds, one that fails
  const addTodo = new MutationObserver(queryClient, { mutationKey: ["addTodo"], mutationFn: async (v) => ({ id: 3, ...v }) })
  await addTodo.mutate({ title: "bread" })
  await sleep(100)
  const failing = new MutationObserver(queryClient, { mutationKey: ["deleteTodo"], mutationFn: async () => { throw new Error("403 Forbidden") } })
  await failing.mutate({ id: 1 }).catch(() => {})
  await sleep(100)
  // nothing in the plugin answers a backup or a values request
  send("state.backup.request", {})
  send("state.values.request", { path: "todos" })
  await sleep(150)
  queryClient.removeQueries({ queryKey: ["user", 42] })
  unsubscribe()
  queryClient.getMutationCache().clear()
  await sleep(100)
  tron.close()
  await sleep(100)
  flush("react_query.jsonl")
}

// ---- Zustand ----
async function zustand() {
  const cart = createStore((set) => ({
    items: [], total: 0,
    addItem: (sku, price) => set((s) => ({ items: [...s.items, { sku, price }], total: s.total + price })),
    clear: () => set({ items: [], total: 0 }),
  }))
  const auth = createStore((set) => ({
    user: null, token: null,
    login: (name) => set({ user: { name }, token: "secret-token" }),
  }))
  const tron = makeClient("ZustandApp")
  tron.use(zustandPlugin({ stores: [{ name: "cart", store: cart }, { name: "auth", store: auth }] }))
  await connect(tron)
  send("state.backup.request", {})
  await waitFor("state.backup.response")
  // the plugin answers no values or keys request
  send("state.values.request", { path: "cart.items" })
  send("state.keys.request", { path: "cart" })
  await sleep(150)
  send("state.values.subscribe", { paths: ["cart", "auth"] })
  await waitFor("state.values.change")
  cart.getState().addItem("A-1", 9.5)
  await sleep(50)
  auth.getState().login("ada")
  await sleep(50)
  cart.getState().clear()
  await sleep(50)
  send("state.values.subscribe", { paths: ["cart"] })
  await sleep(50)
  cart.getState().addItem("B-2", 3)
  await sleep(50)
  send("state.values.subscribe", { paths: [] })
  await sleep(100)
  tron.close()
  await sleep(100)
  flush("zustand.jsonl")
}

// ---- MobX-State-Tree ----
async function mobxStateTree() {
  const Todo = types.model("Todo", { title: types.string, done: false }).actions((self) => ({
    toggle() { self.done = !self.done },
    rename(title) { self.title = title },
  }))
  const Root = types.model("RootStore", { todos: types.array(Todo), filter: "all" }).actions((self) => ({
    addTodo(title) { self.todos.push({ title }) },
    setFilter(filter) { self.filter = filter },
  }))
  const root = Root.create({ todos: [{ title: "milk" }] })
  const tron = makeClient("MstApp")
  tron.use(mst())
  await connect(tron)
  tron.trackMstNode(root)
  root.addTodo("eggs")
  root.todos[0].toggle()
  root.setFilter("done")
  await sleep(100)
  send("state.backup.request", {})
  await waitFor("state.backup.response")
  send("state.values.request", { path: "todos.1" })
  await waitFor("state.values.response")
  send("state.keys.request", { path: "todos.0" })
  await waitFor("state.keys.response")
  // a dispatch the way MST names actions: {name, path, args}, no type
  send("state.action.dispatch", { action: { name: "rename", path: "/todos/1", args: ["free-range eggs"] } })
  await waitFor("state.action.complete")
  send("state.action.dispatch", { action: { name: "setFilter", path: "", args: ["all"] } })
  await waitFor("state.action.complete")
  await sleep(100)
  tron.close()
  await sleep(100)
  flush("mst.jsonl")
}

try {
  await reactQuery()
  await zustand()
  await mobxStateTree()
  wss.close()
  process.exit(0)
} catch (e) {
  console.error(e)
  process.exit(1)
}
