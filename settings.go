package main

// The settings every layer reads, as plain values, in the base layer so that
// each layer is handed its settings without reaching up into the entry:
// config.go reads them from the flags and the environment, serve passes them.

import (
	"log/slog"
	"net"
	"strings"
	"time"
)

// config is the whole configuration of one run. It is loaded once by
// loadConfigFlags (config.go), validated there, and never changed afterwards,
// so every goroutine may read it without locking.
type config struct {
	WSPort           int
	WSHost           string
	RequestTimeout   time.Duration
	MaxPayloadSize   int64
	MaxResultBytes   int
	LogLevel         slog.Level
	LogFormat        string // "text" or "json"
	WSToken          string
	WSAllowedHosts   []string // lower-case host names, no port
	WSAllowedOrigins []string // lower-case scheme://host[:port]
	Reactotron       bool     // the Reactotron bridge is on: REACTOTRON_PORT is not 0
	ReactotronPort   int      // the bridge's port; 0 (tests only, as for WSPort): any free port
	EventBuffer      int      // events kept per session and stream
	ReadOnly         bool     // tools that change the app are withheld
	Redact           bool     // hide secrets in everything sent to clients (redact_json.go)
	RedactKeys       []string // lower-case extra sensitive key names
	Transport        string   // "stdio" or "http": where MCP clients connect
	HTTPAddr         string   // host:port of the Streamable HTTP endpoint
	HTTPToken        string   // when set, HTTP clients must send it as a bearer token
	Tune             tunables // waits that tests shorten; no setting sets them

	// ReactotronDesktop is the Reactotron desktop app's host:port that
	// every Reactotron app's frames are relayed to (rtron_desktop.go); ""
	// relays nothing.
	ReactotronDesktop             string
	ReactotronDesktopAllowedHosts []string // hosts besides loopback that ReactotronDesktop may name

	// MetroURL is Metro's origin (scheme://host:port, no trailing slash):
	// apps are found through its inspector proxy and stacks mapped through
	// its /symbolicate; "" (METRO_URL=off) turns both off.
	MetroURL             string
	MetroAllowedHosts    []string // hosts besides loopback that MetroURL may name
	MetroAttachExclusive bool     // also attach to pages without supportsMultipleDebuggers

	// NativeLogs follows Android devices (adb) and booted iOS simulators
	// (xcrun) for the native logs of the apps it knows (native_follow.go);
	// NATIVE_LOGS=off turns both off.
	NativeLogs bool
	ADBPath    string   // ADB: the adb to run; "" finds one (nativeToolPaths)
	XcrunPath  string   // XCRUN: the xcrun to run; "" finds one on PATH
	NativeApps []string // package or bundle ids followed before any session names them

	// ProjectDir is the app's project folder, where its app ids
	// (build.gradle, app.json, the Xcode project) and a release build's
	// source maps are looked for; "" is the server's working directory.
	// A project root that a dev server names comes first for its apps.
	ProjectDir string
	SourceMaps []string // SOURCE_MAPS: further source map files or folders of them, searched first

	Demo            bool
	DemoAdapterOnly bool // run only the simulated app, dialling WS_HOST:WS_PORT (for check-adapter)
	Version         bool
	Help            bool
}

// validHostName reports whether h is a DNS host name: letters, digits,
// hyphens, underscores and dots, no port.
func validHostName(h string) bool {
	const chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._"
	return h != "" && len(h) <= 253 && strings.Trim(h, chars) == ""
}

// isLoopbackHost reports whether host (no port) names this machine only.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// tunables are waits of the layers below that tests shorten, so that they
// wait for events rather than for the product's timeouts. serve hands each
// down; zero takes the layer's default.
type tunables struct {
	RelayProbe    time.Duration // asking the holder of the adapter port whether it answers MCP (relayProbeTimeout)
	ListChanged   time.Duration // least time between two resources list_changed (listChangedInterval)
	BindRetry     time.Duration // between attempts to bind the adapter port (linkBindRetry)
	HealthStreams time.Duration // the health check's wait for streams.list (healthStreamsTimeout)
	MetroPoll     time.Duration // between two reads of Metro's page list, up or down (metroUpEvery, metroDownEvery)
	NativePoll    time.Duration // between two device listings and pid lookups (nativePollEvery)
	NativeFlush   time.Duration // a native entry's wait after its last line (nativeIdleFlush; the tombstone's wait scales alike)
	// StoreProbe is a Reactotron read's wait for the answer to its store
	// probe (storeProbeTimeout), asked at each read: a test shortens it for
	// the reads that expect no answer only. nil: the default.
	StoreProbe func() time.Duration
}
