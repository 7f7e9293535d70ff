// Command devtools-mcp lets an AI coding agent look inside running apps in
// development: apps connect over a WebSocket, through a debug adapter
// speaking Wire Protocol v1 (docs/protocol.md) or unchanged through Reactotron's
// client, or are found through Metro's debugger proxy with nothing
// installed in them, and the server offers their Redux state, navigation,
// storage, logs, network requests and the events that changed them as MCP
// tools, resources and prompts, on stdin/stdout or Streamable HTTP, in both
// MCP eras.
//
// The package is flat, but its files are layered and a file's name says
// its layer. Requests flow down the list and answers come back up: a file
// uses names from its own layer and those below it, never from one above.
// layers_test.go holds that order, written once as data.
//
//	main.go config*.go memory.go entry: flags and environment; serve builds
//	                             the layers and wires them together
//	rpc_*                        transports: the JSON-RPC connection (reads,
//	                             writes, cancel, workers, an urgent lane,
//	                             calls that wait run outside the workers),
//	                             stdio lines, Streamable HTTP, the relay to
//	                             the process holding the adapter port
//	mcp_*                        MCP core: both protocol eras, dispatch,
//	                             subscriptions, notifications, prompts,
//	                             completion
//	tool_* resource_* errors.go  answers: the tool table and its attributes,
//	                             arguments, the result budget, outlines,
//	                             every word an agent reads
//	session_*                    sessions: the registry, live and post-mortem
//	                             sessions, buffers, queries, push-down
//	symbolicate_*                links: the dev server's /symbolicate
//	                             client, for every kind of app's stacks
//	wire_* rtron_* metro_*       links: Wire Protocol v1 adapters,
//	native_*                     Reactotron clients, any app under
//	                             Metro (its debugger proxy, read only),
//	                             and the apps' native logs (adb, simctl);
//	                             listeners and dialers, one connection's
//	                             life, handshake, requests, child processes
//	json_* redact_* jsonrpc.go   base: JSON scanning, walking, paths,
//	settings.go version.go       numbers, diff; secret redaction; the
//	ring.go                      JSON-RPC vocabulary; the settings and the
//	                             version as values; the one ring buffer
//	stack_*                      base: JavaScript stacks and frames, read
//	                             and printed one way for every source
//
//	check_*                      check-adapter, the conformance kit for
//	                             adapters: another entry point, which reads
//	                             the wire with the links' own readers
//
// demo_* is the simulated app of -demo and the tests. It stands beside the
// stack, not in it: it uses the base layer only and reaches the server over
// its WebSocket, as any app does. Outside the package, npm/ packages the
// binary for npm (build.sh, check.sh, the launcher) and server.json
// describes it to the MCP Registry.
package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"
)

// shutdownGrace is how long a signalled stop may take: a client that no
// longer reads stdout can block the last writes, and the process must still
// exit within a second (the lifecycle contract).
const shutdownGrace = 900 * time.Millisecond

func main() {
	// A client may close the read end of stdout or stderr before it closes
	// stdin (some do on every close). Go kills a program whose write to a
	// broken pipe on fd 1 or 2 raises an unhandled SIGPIPE; ignored, the
	// write fails with EPIPE instead, and shutdown goes on: adapters get
	// their 1001 and the exit status is 0.
	signal.Ignore(syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		select {
		case err = <-done:
		case <-time.After(shutdownGrace):
			fmt.Fprintln(os.Stderr, "devtools-mcp: stopped without flushing: stdout is not being read")
		}
	}
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "devtools-mcp:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run is the whole program: it returns when stdin ends (after answering
// everything read) or ctx is cancelled (SIGINT, SIGTERM), having stopped
// every goroutine it started. `devtools-mcp check-adapter` runs the
// conformance kit instead (check_kit.go).
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	checking := len(args) > 0 && args[0] == "check-adapter"
	var cfg config
	var opts checkOptions
	var err error
	if checking {
		cfg, opts, err = loadCheckConfig(args[1:], os.Getenv)
	} else {
		cfg, err = loadConfigFlags(args, os.Getenv, nil)
	}
	switch {
	case err != nil:
		return err
	case cfg.Help:
		printUsage(stdout)
		return nil
	case cfg.Version:
		fmt.Fprintln(stdout, "devtools-mcp", serverVersion)
		return nil
	case checking:
		return runCheckAdapter(ctx, opts, stdout, stderr)
	case cfg.DemoAdapterOnly:
		runDemoAdapter(ctx, cfg, newLogger(cfg, stderr))
		return nil
	}
	return serve(ctx, cfg, stdin, stdout, stderr)
}

// runDemoAdapter runs the simulated app alone, dialling WS_HOST:WS_PORT as
// an app would, until ctx ends: the adapter for check-adapter, or for a
// server started apart.
func runDemoAdapter(ctx context.Context, cfg config, logger *slog.Logger) {
	host := cfg.WSHost
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	app := newDemoApp(demoOptions{Seed: time.Now().UnixNano(), Token: cfg.WSToken})
	app.untilCheckoutFailed(500)
	wsURL := "ws://" + net.JoinHostPort(host, strconv.Itoa(cfg.WSPort)) + "/"
	logger.Info("demo app started; connecting", "url", wsURL, "sessionId", app.sessionID)
	app.run(ctx, wsURL, 2*time.Second, logger.With("component", "demo"))
}

// serve runs the server with a loaded configuration. Tests enter here to use
// settings no flag allows, such as WS_PORT 0 (any free port).
func serve(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer) error {
	logger := newLogger(cfg, stderr)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	srv, sessions, relay, mapper, portMCP := newServer(ctx, &wg, cfg, logger)

	wg.Go(func() {
		if err := srv.link.run(ctx); err != nil {
			logger.Error("adapter listener stopped", "err", err)
		}
	})
	wg.Go(func() { srv.resources.run(ctx) })
	wg.Go(func() { sessions.run(ctx) }) // expiries, told to clients unasked
	wg.Go(func() { srv.resources.lists.run(ctx) })
	if cfg.Reactotron {
		bridge := newReactotronBridge(cfg, logger, srv.link)
		srv.tools.reactotronStatus = bridge.status
		if cfg.ReactotronDesktop != "" {
			bridge.desktop = newReactotronDesktopOptions(cfg.ReactotronDesktop, cfg.MaxPayloadSize, cfg.RequestTimeout)
			srv.tools.desktopStatus, srv.tools.desktopAddr = bridge.desktopStatus, cfg.ReactotronDesktop
		}
		wg.Go(func() { bridge.run(ctx) })
	} else {
		srv.tools.reactotronStatus = func() listenerStatus {
			return listenerStatus{ListenError: "the Reactotron bridge is off (REACTOTRON_PORT=0)"}
		}
	}
	if cfg.MetroURL != "" {
		// Apps under Metro, with nothing installed in them (metro_link.go).
		metro := newMetroLink(cfg, logger, sessions)
		metro.upEvery = cmp.Or(cfg.Tune.MetroPoll, metro.upEvery)
		metro.downEvery = cmp.Or(cfg.Tune.MetroPoll, metro.downEvery)
		srv.tools.metroStatus = metro.status
		wg.Go(func() { metro.run(ctx) })
	}
	if cfg.NativeLogs {
		// The apps' native logs: adb and simulator followers (native_follow.go).
		native := newNativeFollower(cfg, logger, sessions, nativeToolPaths(cfg, os.Getenv))
		native.projectRoot = mapper.projectRoot // the app ids come from the project the release maps do
		srv.tools.nativeStatus = native.status
		if st := native.status(); st.ADB == "" && st.Xcrun == "" {
			logger.Info("no native logs: neither adb nor xcrun was found (set ADB, ANDROID_HOME or XCRUN)")
		} else {
			wg.Go(func() { native.run(ctx) })
		}
	}
	wg.Go(func() { relay.watch(ctx, srv) })
	wg.Go(func() { runReclaimer(ctx) }) // memory.go: an idle server gives back what a burst took
	// The listener comes first (spec §6): health checks then tell the truth
	// about it from the first request on.
	select {
	case <-srv.link.bindTried:
	case <-ctx.Done():
	}
	if cfg.Demo {
		wg.Go(func() { runDemo(ctx, srv.link, cfg, logger) })
	}
	logger.Info("devtools-mcp started", "version", serverVersion, "wsUrl", srv.link.status().WSURL,
		"tools", len(srv.tools.byName), "resources", len(staticResources)+len(resourceTemplates))

	err := serveClient(ctx, srv, cfg, stdin, stdout, logger)
	cancel()
	portMCP.close() // its streams must not hold the adapter listener's shutdown
	wg.Wait()
	logger.Info("devtools-mcp stopped")
	return err
}

// newServer builds the server's parts and wires them together: the adapter
// link, the session registry, the stack mapper, the answers, the relay. It
// starts only the symbolicator, in wg; serve starts the rest. portMCP
// answers MCP on the adapter port.
func newServer(ctx context.Context, wg *sync.WaitGroup, cfg config, logger *slog.Logger) (srv *mcpServer, sessions *sessionRegistry, relay *relay, mapper *sourceMapper, portMCP *httpTransport) {
	srv = newMCPServer(cfg, logger)
	srv.link = newAdapterLink(cfg, logger, srv.onLinkEvent)
	// The registry is the server's: the links report apps into it (and
	// their changes into the link's event queue), the answers read it.
	sessions = newSessionRegistry(cfg, logger, srv.link.events)
	srv.link.sessions = sessions
	q := adapterQueries{cfg: cfg, link: srv.link, sessions: sessions}
	// Release builds' stacks are mapped with their source maps (symbolicate_local.go).
	mapper = &sourceMapper{maps: newReleaseMaps(cfg)}
	if cfg.MetroURL != "" {
		// Metro's /symbolicate maps every kind of app's stacks (symbolicate_client.go).
		stacks := newSymbolicator(cfg.MetroURL)
		mapper.metro = stacks
		wg.Go(func() { stacks.run(ctx) })
	}
	q.stacks = mapper
	// A map's read is the cache's, not a caller's: serve waits for any
	// still going on once the server stops.
	wg.Go(func() { <-ctx.Done(); mapper.maps.reads.Wait() })
	srv.tools = newToolSet(q, srv.redact) // one redactor for every way out
	srv.resources = newResourceHub(q, srv.redact, srv.notifyClient)
	srv.resources.lists.interval = cmp.Or(cfg.Tune.ListChanged, srv.resources.lists.interval)
	srv.link.bindRetry = cmp.Or(cfg.Tune.BindRetry, srv.link.bindRetry)
	srv.tools.healthStreams = cmp.Or(cfg.Tune.HealthStreams, srv.tools.healthStreams)
	// The adapter port also answers MCP for other local devtools-mcp
	// processes, which relay to it while this one holds the port (rpc_relay.go).
	relay = newRelay(cfg, func() (bool, string) {
		st := srv.link.status()
		return st.Listening, st.ListenError
	}, srv.link.bindRetry)
	relay.ready = srv.link.bindTried
	portMCP = newHTTPTransport(srv, cfg, srv.link.checkUpgrade, logger)
	srv.link.mcp, srv.link.mcpPath = relayEndpoint(portMCP, relay.instance), mcpPath
	relay.holder.timeout = cmp.Or(cfg.Tune.RelayProbe, relay.holder.timeout)
	srv.relay = relay
	return srv, sessions, relay, mapper, portMCP
}

// serveClient answers the MCP client on the configured transport until it
// leaves or ctx ends.
func serveClient(ctx context.Context, srv *mcpServer, cfg config, stdin io.Reader, stdout io.Writer, logger *slog.Logger) error {
	if cfg.Transport == "http" {
		return serveHTTP(ctx, srv, cfg, srv.link.checkUpgrade, logger) // stdin is not read: signals stop it
	}
	err := serveStdio(ctx, srv, stdin, stdout)
	if errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe) {
		// The client closed stdout: nobody is left to tell, and stopping
		// because the client went away is a normal end.
		logger.Info("the client closed stdout; replies written after that were dropped", "err", err)
		return nil
	}
	return err
}

// runDemo connects the built-in simulated app to this server's own listener.
func runDemo(ctx context.Context, link *adapterLink, cfg config, logger *slog.Logger) {
	addr, err := link.addr(ctx)
	if err != nil {
		return
	}
	app := newDemoApp(demoOptions{Seed: time.Now().UnixNano(), Token: cfg.WSToken, QueryCache: true})
	app.untilCheckoutFailed(500) // a history worth debugging, from the first call on
	app.run(ctx, "ws://"+addr+"/", 2*time.Second, logger.With("component", "demo"))
}

func newLogger(cfg config, stderr io.Writer) *slog.Logger {
	opts := &slog.HandlerOptions{Level: cfg.LogLevel}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(stderr, opts))
	}
	return slog.New(slog.NewTextHandler(stderr, opts))
}
