// Command devtools-mcp lets an AI coding agent look inside running apps in
// development: apps connect over a WebSocket, through a debug adapter
// speaking Wire Protocol v1 (PROTOCOL.md) or unchanged through Reactotron's
// client, and the server offers their Redux state, navigation, storage,
// logs, network requests and the events that changed them as MCP tools,
// resources and prompts, on stdin/stdout or Streamable HTTP, in both MCP eras.
//
// Data flows down through the files and answers come back up:
//
//   - transports: jsonrpc.go (JSON-RPC; lines.go stdio framing, urgent.go
//     a lane of its own for debug_health_check), http.go and
//     http_session.go (Streamable HTTP), relay.go (to the process holding
//     the adapter port);
//   - MCP core: client.go (one client's state), mcp.go (dispatch,
//     notifications), era.go (the 2026-07-28 revision);
//   - answers: tools.go (the tool table), toolcall.go (arguments, result
//     envelope, budget), tools_health.go, tools_logs.go, tools_app.go,
//     resources.go, prompts.go and prompttexts.go, redact.go and
//     redact_text.go (secrets hidden on the way out), errors.go;
//   - sessions: queries.go and pushdown.go (what answers ask a session),
//     sessions.go (every app's session, live or post-mortem),
//     sessionbuffers.go (answers from buffered events);
//   - links: link.go (the adapter listener; adapterconn.go one connection,
//     adapterrequest.go request matching, handshake.go vetting, wire.go
//     message shapes, linkevents.go what the link reports) and bridge.go
//     (Reactotron clients; bridge_requests.go what a session asks them,
//     reactotron.go and reactotron_translate.go their messages,
//     reactotron_session.go what such a session keeps);
//   - JSON without decoding it: jsonscan.go (the validating scanner),
//     rawjson.go, jsonpath.go, diff.go.
//
// config.go holds the settings, memory.go returns memory to the system after
// a burst, and demo.go (demo_shop.go, demo_requests.go, demo_conn.go,
// demo_streams.go, demo_actions.go, demo_paths.go) is the simulated app of
// -demo and the tests.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// version is the server's version, reported to MCP clients and adapters.
const version = "0.1.0"

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
// every goroutine it started.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	cfg, err := loadConfig(args, os.Getenv)
	if err != nil {
		return err
	}
	switch {
	case cfg.Help:
		printUsage(stdout)
		return nil
	case cfg.Version:
		fmt.Fprintln(stdout, "devtools-mcp", version)
		return nil
	}
	return serve(ctx, cfg, stdin, stdout, stderr)
}

// serve runs the server with a loaded configuration. Tests enter here to use
// settings no flag allows, such as WS_PORT 0 (any free port).
func serve(ctx context.Context, cfg config, stdin io.Reader, stdout, stderr io.Writer) error {
	logger := newLogger(cfg, stderr)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	srv := newMCPServer(cfg, logger)
	srv.link = newAdapterLink(cfg, logger, srv.onLinkEvent)
	srv.tools = newToolSet(cfg, srv.link)
	srv.resources = newResourceHub(cfg, srv.link, srv.notifyClient)
	if cfg.Tune.ListChanged > 0 {
		srv.resources.lists.interval = cfg.Tune.ListChanged
	}
	if cfg.Tune.BindRetry > 0 {
		srv.link.bindRetry = cfg.Tune.BindRetry
	}
	if cfg.Tune.HealthStreams > 0 {
		srv.tools.healthStreams = cfg.Tune.HealthStreams
	}
	// The adapter port also answers MCP for other local devtools-mcp
	// processes, which relay to it while this one holds the port (relay.go).
	portMCP := newHTTPTransport(srv, cfg, logger)
	srv.link.mcp = relayEndpoint(portMCP)
	srv.relay = newRelay(cfg, srv.link)
	if cfg.Tune.RelayProbe > 0 {
		srv.relay.holder.timeout = cfg.Tune.RelayProbe
	}

	var wg sync.WaitGroup
	wg.Go(func() {
		if err := srv.link.run(ctx); err != nil {
			logger.Error("adapter listener stopped", "err", err)
		}
	})
	wg.Go(func() { srv.resources.run(ctx) })
	wg.Go(func() { srv.resources.lists.run(ctx) })
	if cfg.ReactotronPort != 0 {
		bridge := newReactotronBridge(cfg, logger, srv.link)
		srv.tools.reactotronStatus = bridge.status
		wg.Go(func() { bridge.run(ctx) })
	} else {
		srv.tools.reactotronStatus = func() *healthListener {
			return &healthListener{ListenError: "the Reactotron bridge is off (REACTOTRON_PORT=0)"}
		}
	}
	wg.Go(func() { srv.relay.watch(ctx, srv) })
	wg.Go(func() { runReclaimer(ctx) }) // memory.go: an idle server gives back what a burst took
	// The listener comes first (spec §6): health checks then tell the truth
	// about it from the first request on.
	select {
	case <-srv.link.bindAttempted():
	case <-ctx.Done():
	}
	if cfg.Demo {
		wg.Go(func() { runDemo(ctx, srv.link, cfg, logger) })
	}
	logger.Info("devtools-mcp started", "version", version, "wsUrl", srv.link.status().WSURL,
		"tools", len(srv.tools.byName), "resources", len(staticResources)+len(resourceTemplates))

	var err error
	if cfg.Transport == "http" {
		err = serveHTTP(ctx, srv, cfg, logger) // stdin is not read: signals stop it
	} else {
		err = srv.serve(ctx, stdin, stdout)
		if clientHungUp(err) {
			// The client closed stdout: nobody is left to tell, and stopping
			// because the client went away is a normal end.
			logger.Info("the client closed stdout; replies written after that were dropped", "err", err)
			err = nil
		}
	}
	cancel()
	portMCP.close() // its streams must not hold the adapter listener's shutdown
	wg.Wait()
	logger.Info("devtools-mcp stopped")
	return err
}

// clientHungUp reports whether err is a write to a pipe whose reader has gone.
func clientHungUp(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, io.ErrClosedPipe)
}

// runDemo connects the built-in simulated app to this server's own listener.
func runDemo(ctx context.Context, link *adapterLink, cfg config, logger *slog.Logger) {
	addr, err := link.addr(ctx)
	if err != nil {
		return
	}
	app := newDemoApp(demoOptions{Seed: time.Now().UnixNano(), Token: cfg.WSToken})
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
