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
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
)

// errUsage marks configuration and flag errors: main exits with status 2.
var errUsage = errors.New("usage")

// setting is one configuration entry: an environment variable, the flag that
// overrides it, and how to parse it into the config.
type setting struct {
	env, flag, def, usage string
	parse                 func(c *config, value string) error
}

var settings = []setting{
	{"WS_PORT", "ws-port", "19850", "adapter WebSocket port (1-65535)",
		func(c *config, v string) error { return setInt(&c.WSPort, v, 1, 65535) }},
	{"WS_HOST", "ws-host", "127.0.0.1", "WebSocket bind address; non-loopback without WS_TOKEN logs a warning", func(c *config, v string) error {
		// An IPv6 address may come bracketed, as in URLs; it is stored bare
		// so that joining it with the port brackets it once.
		if strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
			v = v[1 : len(v)-1]
			if net.ParseIP(v) == nil {
				return fmt.Errorf("%q is not an IP address", "["+v+"]")
			}
		}
		if !validHost(v) {
			return fmt.Errorf("%q is not a host name or IP address (no scheme, no port)", v)
		}
		c.WSHost = v
		return nil
	}},
	{"REQUEST_TIMEOUT_MS", "request-timeout-ms", "5000", "timeout of one adapter request in ms (1-600000)", func(c *config, v string) error {
		err := setInt(&c.RequestTimeout, v, 1, 600000)
		c.RequestTimeout *= time.Millisecond
		return err
	}},
	{"MAX_PAYLOAD_SIZE", "max-payload-size", "524288", "bytes per WebSocket message (1024-67108864)",
		func(c *config, v string) error { return setInt(&c.MaxPayloadSize, v, 1024, 64<<20) }},
	{"MAX_RESULT_BYTES", "max-result-bytes", "100000", "budget for one tool result in bytes (1024-MAX_PAYLOAD_SIZE)",
		func(c *config, v string) error { return setInt(&c.MaxResultBytes, v, 1024, 64<<20) }},
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
	{"LOG_FORMAT", "log-format", "text", "stderr log format: text or json",
		func(c *config, v string) error { return setWord(&c.LogFormat, v, "text", "json") }},
	{"WS_TOKEN", "ws-token", "", "when set, adapters must present it in the handshake",
		func(c *config, v string) error { c.WSToken = v; return nil }},
	{"WS_ALLOWED_HOSTS", "ws-allowed-hosts", "", "comma list of host names (no port) accepted in Host besides IP literals and localhost", func(c *config, v string) (err error) {
		c.WSAllowedHosts, err = splitList(v, validItem(validHostName, "is not a bare host name (no scheme, no port)"))
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
		err := setInt(&c.ReactotronPort, v, 0, 65535)
		c.Reactotron = c.ReactotronPort != 0
		return err
	}},
	{"REACTOTRON_DESKTOP", "reactotron-desktop", "", "host:port of the Reactotron desktop app to relay Reactotron apps to (loopback unless in REACTOTRON_DESKTOP_ALLOWED_HOSTS)", func(c *config, v string) (err error) {
		if v != "" { // "": no relay
			c.ReactotronDesktop, err = parseHostPort(v)
		}
		return err
	}},
	{"REACTOTRON_DESKTOP_ALLOWED_HOSTS", "reactotron-desktop-allowed-hosts", "", "comma list of hosts besides loopback that REACTOTRON_DESKTOP may name: the app's frames go there unredacted", func(c *config, v string) (err error) {
		c.ReactotronDesktopAllowedHosts, err = splitList(v, allowedHostItem)
		return err
	}},
	{"METRO_URL", "metro-url", "http://127.0.0.1:8081", "Metro (or expo start) to find apps through and map stacks with: http://host:port, or off (loopback unless in METRO_ALLOWED_HOSTS)", func(c *config, v string) error {
		if strings.EqualFold(strings.TrimSpace(v), "off") {
			c.MetroURL = ""
			return nil
		}
		u, err := url.Parse(strings.TrimSpace(v))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" || (u.Path != "" && u.Path != "/") ||
			u.RawQuery != "" || u.ForceQuery || u.Fragment != "" || u.User != nil || !validPort(u.Port()) {
			return fmt.Errorf("%q is not http://host[:port] or off", v)
		}
		if !validHost(u.Hostname()) {
			return fmt.Errorf("%q names no valid host", v)
		}
		c.MetroURL = u.Scheme + "://" + strings.ToLower(u.Host)
		return nil
	}},
	{"METRO_ALLOWED_HOSTS", "metro-allowed-hosts", "", "comma list of hosts besides loopback that METRO_URL may name, and that the debugger Origin may name when the dev server says it is its own host", func(c *config, v string) (err error) {
		c.MetroAllowedHosts, err = splitList(v, allowedHostItem)
		return err
	}},
	{"METRO_ATTACH_EXCLUSIVE", "metro-attach-exclusive", "false", "true: also attach to Metro pages that take one debugger at a time, which closes React Native DevTools on them; the flag alone means true",
		func(c *config, v string) error { return setSwitch(&c.MetroAttachExclusive, v) }},
	{"NATIVE_LOGS", "native-logs", "on", "follow the native logs of known apps on Android devices (adb) and booted iOS simulators (xcrun): on or off",
		func(c *config, v string) error { return setSwitch(&c.NativeLogs, v) }},
	{"ADB", "adb", "", "path to adb; unset: $ANDROID_HOME/platform-tools/adb, then $ANDROID_SDK_ROOT/platform-tools/adb, then adb on PATH",
		func(c *config, v string) error { c.ADBPath = strings.TrimSpace(v); return nil }},
	{"XCRUN", "xcrun", "", "path to xcrun (iOS simulators, macOS); unset: xcrun on PATH",
		func(c *config, v string) error { c.XcrunPath = strings.TrimSpace(v); return nil }},
	{"NATIVE_APPS", "native-apps", "", "comma list of Android package or iOS bundle ids whose native logs are followed before any session names them", func(c *config, v string) (err error) {
		c.NativeApps, err = splitListCase(v, validItem(validNativeAppID, "is not a package or bundle id (letters, digits, dots, underscores, dashes)"))
		return err
	}},
	{"PROJECT_DIR", "project-dir", "", "the app's project folder, read for its app ids and a release build's source maps; unset: the working directory",
		func(c *config, v string) error { c.ProjectDir = strings.TrimSpace(v); return nil }},
	{"SOURCE_MAPS", "source-maps", "", "comma list of source map files, or folders of them, searched before the project's build folders", func(c *config, v string) (err error) {
		c.SourceMaps, err = splitListCase(v, nil)
		return err
	}},
	{"EVENT_BUFFER", "event-buffer", "1000", "events the server keeps per app session and stream (1-100000)",
		func(c *config, v string) error { return setInt(&c.EventBuffer, v, 1, 100000) }},
	{"REDACT", "redact", "on", "hide secrets in everything sent to clients: on or off",
		func(c *config, v string) error { return setSwitch(&c.Redact, v) }},
	{"REDACT_KEYS", "redact-keys", "", "comma list of further key names whose values are hidden", func(c *config, v string) (err error) {
		if len(v) > maxRedactKeysLen {
			return fmt.Errorf("the list is %d bytes, over %d", len(v), maxRedactKeysLen)
		}
		c.RedactKeys, err = splitList(v, validRedactKey)
		return err
	}},
	{"MCP_TRANSPORT", "transport", "stdio", "where MCP clients connect: stdio or http (Streamable HTTP at /mcp)",
		func(c *config, v string) error { return setWord(&c.Transport, v, "stdio", "http") }},
	{"MCP_HTTP_ADDR", "http-addr", "127.0.0.1:3100", "host:port of the HTTP transport; non-loopback requires MCP_HTTP_TOKEN", func(c *config, v string) (err error) {
		c.HTTPAddr, err = parseHostPort(v)
		return err
	}},
	{"MCP_HTTP_TOKEN", "http-token", "", "when set, HTTP clients must send Authorization: Bearer <token>",
		func(c *config, v string) error { c.HTTPToken = v; return nil }},
	{"READ_ONLY", "read-only", "false", "true: offer no tool that changes the app (dispatch, commands); the flag alone means true",
		func(c *config, v string) error { return setSwitch(&c.ReadOnly, v) }},
}

// switches are the settings whose flag may stand alone: -read-only is
// -read-only=true.
var switches = map[string]bool{"read-only": true, "metro-attach-exclusive": true}

// maxRedactKeysLen bounds REDACT_KEYS, so that the key matcher's table stays small.
const maxRedactKeysLen = 4096

// loadConfigFlags reads the environment through getenv, then the flags in
// args, which override it; extra, if set, defines further flags. An empty
// variable counts as unset. Errors wrap errUsage and name the variable or
// flag at fault. With -help or -version set it returns at once, leaving the
// rest unvalidated.
func loadConfigFlags(args []string, getenv func(string) string, extra func(fs *flag.FlagSet)) (config, error) {
	var c config
	fs := flag.NewFlagSet("devtools-mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints errors and usage itself
	values := make(map[string]*string, len(settings))
	for _, s := range settings {
		usage := fmt.Sprintf("%s (env %s, default %q)", s.usage, s.env, s.def)
		if !switches[s.flag] {
			values[s.flag] = fs.String(s.flag, "", usage)
			continue
		}
		value := new(string)
		values[s.flag] = value
		fs.BoolFunc(s.flag, usage, func(v string) error { *value = v; return nil })
	}
	fs.BoolVar(&c.Demo, "demo", false, "also start the built-in simulated app, connected over loopback")
	fs.BoolVar(&c.DemoAdapterOnly, "demo-adapter-only", false, "run only the built-in simulated app, dialling WS_HOST:WS_PORT")
	if extra != nil {
		extra(fs)
	}
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
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	for _, s := range settings {
		value, from := *values[s.flag], "-"+s.flag
		if !given[s.flag] {
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
	if err := checkReactotronDesktop(c, source); err != nil {
		return c, err
	}
	if err := checkMetroURL(c, source); err != nil {
		return c, err
	}
	if c.MaxResultBytes > int(c.MaxPayloadSize) {
		if from := source["MAX_RESULT_BYTES"]; from != "" {
			return c, fmt.Errorf("%w: %s (%d) must not exceed MAX_PAYLOAD_SIZE (%d)", errUsage, from, c.MaxResultBytes, c.MaxPayloadSize)
		}
		// Only the payload limit was lowered: the result budget follows it.
		c.MaxResultBytes = int(c.MaxPayloadSize)
	}
	return c, nil
}

// checkReactotronDesktop checks REACTOTRON_DESKTOP against the settings it
// depends on: the bridge must be on, the address must not be the bridge's
// own, and a host beyond loopback must be allowed by name.
func checkReactotronDesktop(c config, source map[string]string) error {
	if c.ReactotronDesktop == "" {
		return nil
	}
	from := cmp.Or(source["REACTOTRON_DESKTOP"], "REACTOTRON_DESKTOP")
	host, port, _ := net.SplitHostPort(c.ReactotronDesktop)
	switch {
	case c.ReactotronPort == 0:
		return fmt.Errorf("%w: %s is set but REACTOTRON_PORT is 0: the bridge is off, so no app would be relayed", errUsage, from)
	case !allowedHost(host, c.ReactotronDesktopAllowedHosts):
		return fmt.Errorf("%w: %s %q is not a loopback address: the app's frames would leave this machine unredacted; "+
			"add %q to REACTOTRON_DESKTOP_ALLOWED_HOSTS to allow it", errUsage, from, c.ReactotronDesktop, strings.ToLower(host))
	case port == strconv.Itoa(c.ReactotronPort) && (isLoopbackHost(host) || strings.EqualFold(host, c.WSHost)):
		return fmt.Errorf("%w: %s %q is the bridge's own port (REACTOTRON_PORT %d): give the desktop app another port, for example 9091",
			errUsage, from, c.ReactotronDesktop, c.ReactotronPort)
	}
	return nil
}

// allowedHostItem checks one item of a list of hosts besides loopback that
// a setting naming another machine may name: a bare host name or IP address.
var allowedHostItem = validItem(validHost, "is not a bare host name or IP address (no scheme, no port)")

// allowedHost reports whether host is loopback or named in allowed.
func allowedHost(host string, allowed []string) bool {
	return isLoopbackHost(host) || slices.Contains(allowed, strings.ToLower(host))
}

// checkMetroURL keeps Metro on this machine unless its host is allowed by
// name: the server posts the app's stacks there and reads its pages.
func checkMetroURL(c config, source map[string]string) error {
	if c.MetroURL == "" {
		return nil
	}
	u, _ := url.Parse(c.MetroURL)
	host := strings.ToLower(u.Hostname())
	if allowedHost(host, c.MetroAllowedHosts) {
		return nil
	}
	return fmt.Errorf("%w: %s %q is not a loopback address: the app's logs and stacks would be read from and sent to another machine; "+
		"add %q to METRO_ALLOWED_HOSTS to allow it", errUsage, cmp.Or(source["METRO_URL"], "METRO_URL"), c.MetroURL, host)
}

func validPort(p string) bool {
	if p == "" {
		return true
	}
	n, err := strconv.Atoi(p)
	return err == nil && n >= 1 && n <= 65535
}

func printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage: devtools-mcp [flags]\n\n"+
		"An MCP server on stdio or Streamable HTTP that lets a coding agent inspect\n"+
		"a running app's Redux store, navigation state and MMKV storage through\nits debug adapter.\n\n"+
		"Every setting is an environment variable, overridden by its flag:\n\n")
	// Columns are as wide as their longest entry (REACTOTRON_DESKTOP_ALLOWED_HOSTS).
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, s := range settings {
		fmt.Fprintf(tw, "  %s\t-%s\tdefault %q\t%s\n", s.env, s.flag, s.def, s.usage)
	}
	fmt.Fprintf(tw, "\nOther flags:\n")
	fmt.Fprintf(tw, "  -demo\talso start the built-in simulated app\n"+
		"  -demo-adapter-only\trun only the simulated app, dialling WS_HOST:WS_PORT (no server)\n"+
		"  -version\tprint the version\n  -help\tprint this text\n")
	tw.Flush()
	fmt.Fprintf(w, "\nUsage: devtools-mcp check-adapter [flags]\n\n"+
		"Checks a Wire Protocol v1 adapter against docs/protocol.md: listens on WS_HOST:WS_PORT\n"+
		"like the server (without the MCP side), waits for one app to connect, drives it\n"+
		"and prints a pass/fail table; exits 1 when a required check fails. The settings\n"+
		"above apply (WS_TOKEN, REQUEST_TIMEOUT_MS, MAX_PAYLOAD_SIZE, ...), and:\n"+
		"  -json           print the report as one JSON document\n"+
		"  -only SECTION   run only the checks of a section (\"4\") or whose name starts so\n"+
		"  -allow-actions  also check state.dispatch and commands, which change the app\n"+
		"  -wait DURATION  how long to wait for the app to connect (default 1m)\n")
}

// loadCheckConfig reads the settings and flags of `check-adapter` (args
// follow the subcommand's name): the server's settings, and the kit's own.
func loadCheckConfig(args []string, getenv func(string) string) (config, checkOptions, error) {
	var opts checkOptions
	cfg, err := loadConfigFlags(args, getenv, func(fs *flag.FlagSet) {
		fs.BoolVar(&opts.JSON, "json", false, "print the report as one JSON document")
		fs.StringVar(&opts.Only, "only", "", "run only the checks of this docs/protocol.md section, or whose name starts so")
		fs.BoolVar(&opts.AllowActions, "allow-actions", false, "also check the requests that change the app")
		fs.DurationVar(&opts.WaitTimeout, "wait", time.Minute, "how long to wait for an adapter to connect")
	})
	if err != nil || cfg.Help || cfg.Version {
		return cfg, opts, err
	}
	if cfg.Demo || cfg.DemoAdapterOnly {
		return cfg, opts, fmt.Errorf("%w: check-adapter starts no app: run devtools-mcp -demo-adapter-only in another terminal", errUsage)
	}
	if opts.Only != "" && len(selectChecks(opts.Only)) == 1 && opts.Only != "handshake" {
		return cfg, opts, fmt.Errorf("%w: -only %q names no section or check", errUsage, opts.Only)
	}
	if opts.WaitTimeout <= 0 {
		return cfg, opts, fmt.Errorf("%w: -wait: must be a positive duration", errUsage)
	}
	opts.Host, opts.Port, opts.Token = cfg.WSHost, cfg.WSPort, cfg.WSToken
	opts.AllowedHosts, opts.AllowedOrigins = cfg.WSAllowedHosts, cfg.WSAllowedOrigins
	opts.MaxPayload, opts.RequestTimeout = cfg.MaxPayloadSize, cfg.RequestTimeout
	opts.SmallPayload = min(checkSmallPayload, cfg.MaxPayloadSize)
	opts.HandshakeTimeout = linkHandshakeTimeout
	opts.ReconnectTimeout = checkReconnectTimeout
	opts.PongTimeout = linkPongTimeout
	opts.PushWait = checkPushWait
	return cfg, opts, nil
}
