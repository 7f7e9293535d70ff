package main

import (
	"cmp"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// config is the whole configuration of one run. It is loaded once by
// loadConfig, validated there, and never changed afterwards, so every
// goroutine may read it without locking.
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
	ReactotronPort   int      // 0: the Reactotron bridge is off; -1 (tests only): any free port
	EventBuffer      int      // events kept per session and stream
	ReadOnly         bool     // tools that change the app are withheld
	Redact           bool     // hide secrets in everything sent to clients (redact.go)
	RedactKeys       []string // lower-case extra sensitive key names
	Transport        string   // "stdio" or "http": where MCP clients connect
	HTTPAddr         string   // host:port of the Streamable HTTP endpoint
	HTTPToken        string   // when set, HTTP clients must send it as a bearer token
	Tune             tunables // waits that tests shorten; no setting sets them

	Demo    bool
	Version bool
	Help    bool
}

// tunables are waits of the layers below that tests shorten, so that they
// wait for events rather than for the product's timeouts. serve hands each
// down; zero takes the layer's default.
type tunables struct {
	RelayProbe    time.Duration // asking the holder of the adapter port whether it answers MCP (relayProbeTimeout)
	ListChanged   time.Duration // least time between two resources list_changed (listChangedInterval)
	BindRetry     time.Duration // between attempts to bind the adapter port (linkBindRetry)
	HealthStreams time.Duration // the health check's wait for streams.list (healthStreamsTimeout)
}

// errUsage marks configuration and flag errors: main exits with status 2.
var errUsage = errors.New("usage")

// setting is one configuration entry: an environment variable, the flag that
// overrides it, and how to parse it into the config.
type setting struct {
	env, flag, def, usage string
	parse                 func(c *config, value string) error
}

var settings = []setting{
	{"WS_PORT", "ws-port", "19850", "adapter WebSocket port (1-65535)", func(c *config, v string) error {
		n, err := parseIntRange(v, 1, 65535)
		c.WSPort = int(n)
		return err
	}},
	{"WS_HOST", "ws-host", "127.0.0.1", "WebSocket bind address; non-loopback without WS_TOKEN logs a warning", func(c *config, v string) error {
		// An IPv6 address may come bracketed, as in URLs; it is stored bare
		// so that joining it with the port brackets it once.
		if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
			v = v[1 : len(v)-1]
			if net.ParseIP(v) == nil {
				return fmt.Errorf("%q is not an IP address", "["+v+"]")
			}
		}
		if net.ParseIP(v) == nil && !validHostName(v) {
			return fmt.Errorf("%q is not a host name or IP address (no scheme, no port)", v)
		}
		c.WSHost = v
		return nil
	}},
	{"REQUEST_TIMEOUT_MS", "request-timeout-ms", "5000", "timeout of one adapter request in ms (1-600000)", func(c *config, v string) error {
		n, err := parseIntRange(v, 1, 600000)
		c.RequestTimeout = time.Duration(n) * time.Millisecond
		return err
	}},
	{"MAX_PAYLOAD_SIZE", "max-payload-size", "524288", "bytes per WebSocket message (1024-67108864)", func(c *config, v string) error {
		n, err := parseIntRange(v, 1024, 64<<20)
		c.MaxPayloadSize = n
		return err
	}},
	{"MAX_RESULT_BYTES", "max-result-bytes", "100000", "budget for one tool result in bytes (1024-MAX_PAYLOAD_SIZE)", func(c *config, v string) error {
		n, err := parseIntRange(v, 1024, 64<<20)
		c.MaxResultBytes = int(n)
		return err
	}},
	{"LOG_LEVEL", "log-level", "info", "stderr log level: debug, info, warn, error", func(c *config, v string) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "debug":
			c.LogLevel = slog.LevelDebug
		case "info":
			c.LogLevel = slog.LevelInfo
		case "warn", "warning": // "warning" as MCP and syslog spell it
			c.LogLevel = slog.LevelWarn
		case "error":
			c.LogLevel = slog.LevelError
		default:
			return fmt.Errorf("%q is not one of debug, info, warn, error", v)
		}
		return nil
	}},
	{"LOG_FORMAT", "log-format", "text", "stderr log format: text or json", func(c *config, v string) error {
		switch f := strings.ToLower(strings.TrimSpace(v)); f {
		case "text", "json":
			c.LogFormat = f
			return nil
		}
		return fmt.Errorf("%q is not one of text, json", v)
	}},
	{"WS_TOKEN", "ws-token", "", "when set, adapters must present it in the handshake", func(c *config, v string) error {
		c.WSToken = v
		return nil
	}},
	{"WS_ALLOWED_HOSTS", "ws-allowed-hosts", "", "comma list of host names (no port) accepted in Host besides IP literals and localhost", func(c *config, v string) error {
		hosts, err := splitList(v, func(h string) error {
			if !validHostName(h) {
				return fmt.Errorf("%q is not a bare host name (no scheme, no port)", h)
			}
			return nil
		})
		c.WSAllowedHosts = hosts
		return err
	}},
	{"WS_ALLOWED_ORIGINS", "ws-allowed-origins", "", "comma list of origins (scheme://host[:port]) accepted in Origin", func(c *config, v string) error {
		origins, err := splitList(v, func(o string) error {
			u, err := url.Parse(o)
			if err != nil || u.Scheme == "" || u.Host == "" || (u.Path != "" && u.Path != "/") ||
				u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil || !validPort(u.Port()) {
				return fmt.Errorf("%q is not an origin of the form scheme://host[:port]", o)
			}
			return nil
		})
		for i, o := range origins {
			origins[i] = strings.TrimSuffix(o, "/")
		}
		c.WSAllowedOrigins = origins
		return err
	}},
	{"REACTOTRON_PORT", "reactotron-port", "9090", "port for apps using Reactotron's client, on WS_HOST (0 turns the bridge off; 0-65535)", func(c *config, v string) error {
		n, err := parseIntRange(v, 0, 65535)
		c.ReactotronPort = int(n)
		return err
	}},
	{"EVENT_BUFFER", "event-buffer", "1000", "events the server keeps per app session and stream (1-100000)", func(c *config, v string) error {
		n, err := parseIntRange(v, 1, 100000)
		c.EventBuffer = int(n)
		return err
	}},
	{"REDACT", "redact", "on", "hide secrets in everything sent to clients: on or off", func(c *config, v string) error {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "on":
			c.Redact = true
		case "off":
			c.Redact = false
		default:
			return fmt.Errorf("%q is not one of on, off", v)
		}
		return nil
	}},
	{"REDACT_KEYS", "redact-keys", "", "comma list of further key names whose values are hidden", func(c *config, v string) error {
		// The bound keeps the key matcher's table small.
		if len(v) > maxRedactKeysLen {
			return fmt.Errorf("the list is %d bytes, over %d", len(v), maxRedactKeysLen)
		}
		keys, err := splitList(v, validRedactKey)
		c.RedactKeys = keys
		return err
	}},
	{"MCP_TRANSPORT", "transport", "stdio", "where MCP clients connect: stdio or http (Streamable HTTP at /mcp)", func(c *config, v string) error {
		switch t := strings.ToLower(strings.TrimSpace(v)); t {
		case "stdio", "http":
			c.Transport = t
			return nil
		}
		return fmt.Errorf("%q is not one of stdio, http", v)
	}},
	{"MCP_HTTP_ADDR", "http-addr", "127.0.0.1:3100", "host:port of the HTTP transport; non-loopback requires MCP_HTTP_TOKEN", func(c *config, v string) error {
		host, port, err := net.SplitHostPort(strings.TrimSpace(v))
		if err != nil || (net.ParseIP(host) == nil && !validHostName(host)) || !validPort(port) || port == "" {
			return fmt.Errorf("%q is not host:port (port 1-65535)", v)
		}
		c.HTTPAddr = net.JoinHostPort(host, port)
		return nil
	}},
	{"MCP_HTTP_TOKEN", "http-token", "", "when set, HTTP clients must send Authorization: Bearer <token>", func(c *config, v string) error {
		c.HTTPToken = v
		return nil
	}},
	{"READ_ONLY", "read-only", "false", "true: offer no tool that changes the app (dispatch, commands); the flag alone means true", func(c *config, v string) error {
		b, err := parseSwitch(v)
		c.ReadOnly = b
		return err
	}},
}

// switches are the settings whose flag may stand alone: -read-only is
// -read-only=true.
var switches = map[string]bool{"read-only": true}

// switchValue is a switch's flag: a string flag that flag.FlagSet lets stand
// alone, recording "true" then.
type switchValue struct{ value *string }

func (v switchValue) String() string {
	if v.value == nil {
		return ""
	}
	return *v.value
}
func (v switchValue) Set(s string) error { *v.value = s; return nil }
func (v switchValue) IsBoolFlag() bool   { return true }

// parseSwitch reads a boolean setting.
func parseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not one of true, false", v)
}

// maxRedactKeysLen bounds REDACT_KEYS.
const maxRedactKeysLen = 4096

// loadConfig reads the environment through getenv, then the flags in args,
// which override it. An empty variable counts as unset. Errors wrap errUsage
// and name the variable or flag at fault. With -help or -version set it
// returns at once, leaving the rest unvalidated.
func loadConfig(args []string, getenv func(string) string) (config, error) {
	var c config
	fs := flag.NewFlagSet("devtools-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints errors and usage itself
	values := make(map[string]*string, len(settings))
	for _, s := range settings {
		usage := fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def)
		if switches[s.flag] {
			values[s.flag] = new(string)
			fs.Var(switchValue{values[s.flag]}, s.flag, usage)
			continue
		}
		values[s.flag] = fs.String(s.flag, "", usage)
	}
	fs.BoolVar(&c.Demo, "demo", false, "also start the built-in simulated app, connected over loopback")
	fs.BoolVar(&c.Version, "version", false, "print the version and exit")
	fs.BoolVar(&c.Help, "help", false, "print flags and variables and exit")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			c.Help = true
			return c, nil
		}
		return c, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	if c.Help || c.Version {
		return c, nil
	}
	// An empty flag, like an empty variable, means unset: the default applies.
	source := map[string]string{} // variable name → where its value came from
	for _, s := range settings {
		value, from := *values[s.flag], "-"+s.flag
		if !flagSet(fs, s.flag) {
			value, from = getenv(s.env), s.env
		}
		if value == "" {
			value, from = s.def, ""
		}
		source[s.env] = from
		if err := s.parse(&c, value); err != nil {
			return c, fmt.Errorf("%w: %s: %v", errUsage, cmp.Or(from, s.env+" default"), err)
		}
	}
	if c.Transport == "http" && c.HTTPToken == "" {
		if host, _, _ := net.SplitHostPort(c.HTTPAddr); !isLoopbackHost(host) {
			return c, fmt.Errorf("%w: %s %q is not a loopback address: set MCP_HTTP_TOKEN so that only clients holding it are served",
				errUsage, cmp.Or(source["MCP_HTTP_ADDR"], "MCP_HTTP_ADDR"), c.HTTPAddr)
		}
	}
	if c.MaxResultBytes > int(c.MaxPayloadSize) {
		from := source["MAX_RESULT_BYTES"]
		if from == "" {
			// Only the payload limit was lowered: the result budget follows it.
			c.MaxResultBytes = int(c.MaxPayloadSize)
		} else {
			return c, fmt.Errorf("%w: %s (%d) must not exceed MAX_PAYLOAD_SIZE (%d)", errUsage, from, c.MaxResultBytes, c.MaxPayloadSize)
		}
	}
	return c, nil
}

// validHostName reports whether h is a DNS host name: letters, digits,
// hyphens, underscores and dots, no port.
func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, r := range h {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '_') {
			return false
		}
	}
	return true
}

func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: devtools-mcp [flags]\n\n"+
		"An MCP server on stdio or Streamable HTTP that lets a coding agent inspect\n"+
		"a running app's Redux store, navigation state and MMKV storage through\nits debug adapter.\n\n"+
		"Every setting is an environment variable, overridden by its flag:\n\n")
	for _, s := range settings {
		fmt.Fprintf(w, "  %-19s -%-19s default %-11q %s\n", s.env, s.flag, s.def, s.usage)
	}
	fmt.Fprintf(w, "\nOther flags:\n  -demo     also start the built-in simulated app\n  -version  print the version\n  -help     print this text\n")
}

func parseIntRange(v string, lo, hi int64) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not an integer", v)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%d is outside %d-%d", n, lo, hi)
	}
	return n, nil
}

// splitList splits a comma list, trims and lower-cases the items, drops
// empty ones and checks each with valid.
func splitList(v string, valid func(string) error) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		item = strings.ToLower(strings.TrimSpace(item))
		if item == "" {
			continue
		}
		if err := valid(item); err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
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
