package main

// Many agents, one app. The app's adapter connects to one port, so only one
// devtools-mcp process can hold it. The holder also answers MCP at /mcp on
// that port, for loopback callers; a process that cannot bind the port
// relays its clients' requests there, as stateless 2026-07-28 requests,
// and serves them itself again once it holds the port (the link retries the
// bind every 2 s), so its client never restarts.

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// relayMethods are the requests answered from the app, worth relaying.
// Lifecycle, discovery and subscriptions stay local.
var relayMethods = map[string]bool{
	"tools/call":          true,
	"resources/list":      true,
	"resources/read":      true,
	"completion/complete": true,
}

// relay forwards requests to the process holding the adapter port.
type relay struct {
	bound    func() (listening bool, listenError string) // whether this process holds the adapter port, and if not why
	ready    <-chan struct{}                             // closed once the link's first bind attempt has ended
	instance string                                      // this server, as its relayEndpoint names it (holderInstanceHeader)
	retry    time.Duration                               // how often a bind is tried again
	url      string
	client   *http.Client
	holder   *holderCheck // whether the holder answers MCP at all
}

func newRelay(cfg config, bound func() (listening bool, listenError string), retry time.Duration) *relay {
	host := cfg.WSHost
	if !isLoopbackHost(host) {
		host = "127.0.0.1" // the holder serves /mcp to loopback callers only
	}
	rl := &relay{
		instance: strconv.Itoa(os.Getpid()) + "-" + rand.Text(),
		bound:    bound,
		retry:    retry,
		url:      "http://" + net.JoinHostPort(host, strconv.Itoa(cfg.WSPort)) + mcpPath,
		// The holder bounds its adapter requests by REQUEST_TIMEOUT_MS; this
		// bounds a holder that stops answering altogether.
		client: &http.Client{Timeout: cfg.RequestTimeout + 10*time.Second},
	}
	rl.holder = newHolderCheck(rl.probeHolder, relayProbeTimeout, relayVerdictTTL)
	return rl
}

// holderPIDHeader names the process answering MCP on the adapter port, so
// that a relaying process's health check can say who holds the app.
// holderInstanceHeader names the server within that process, so that a
// server never relays to itself: between binding the port and marking
// itself as listening, it sees "not listening" and finds a devtools-mcp
// answering there, which is itself. Across processes the pid would say as
// much; the instance also tells apart two servers of one process (tests
// run several).
const (
	holderPIDHeader      = "Devtools-Mcp-Pid"
	holderInstanceHeader = "Devtools-Mcp-Instance"
)

// relayEndpoint serves the transport to loopback callers only: the adapter
// port may listen on the network for devices, but its MCP is for the
// processes of this machine. Its answers name the server: instance is
// that of the server's own relay.
func relayEndpoint(t *httpTransport, instance string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ap, err := netip.ParseAddrPort(r.RemoteAddr)
		if err != nil || !ap.Addr().Unmap().IsLoopback() {
			writeRPCError(w, http.StatusForbidden, nil, rpcErrorf(errInvalidRequest, nil,
				"forbidden: MCP on the adapter port is for loopback callers only"))
			return
		}
		w.Header().Set(holderPIDHeader, strconv.Itoa(os.Getpid()))
		w.Header().Set(holderInstanceHeader, instance)
		t.ServeHTTP(w, r)
	})
}

// forward sends req to the holder when this process does not hold the
// port. ok is false when it holds it, or when nothing answering MCP holds
// it (holderCheck): then the request is served here (and says
// NOT_CONNECTED, and why). note says which process holds the app, how this
// one reaches it, and why it does not hold the port. An urgent request (one
// whose answer is bounded by urgent, such as the health check's) never
// waits for a probe, and gives the holder no more than a probe's time
// beyond its own bound.
func (rl *relay) forward(ctx context.Context, call *callInfo, req *request, urgent time.Duration) (result any, err error, note map[string]any, ok bool) {
	if !relayMethods[req.Method] || rl.listening() || !rl.holder.verdict(ctx, urgent == 0) {
		return nil, nil, nil, false
	}
	if urgent > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, rl.holder.timeout+urgent)
		defer cancel()
	}
	params := map[string]json.RawMessage{}
	_ = json.Unmarshal(req.Params, &params) // nil, or an object decodeMessage checked
	name, _ := relayName(req.Method, params)
	resp, self, herr := rl.exchange(ctx, rl.client, 1, req.Method, params, name, "application/json")
	if herr != nil {
		switch {
		case !errors.Is(herr, errRelayUnreachable):
			rl.holder.record(false) // not a devtools-mcp with /mcp: serve locally
		case urgent > 0:
			rl.holder.recheck() // slow or gone: ask again now, without judging by one call
		case ctx.Err() == nil:
			rl.holder.record(false) // the holder did not answer: ask it again later
		}
		return nil, nil, nil, false
	}
	defer resp.Body.Close()
	if self {
		// Served by this very process (holderInstanceHeader): its answer
		// stands, with no relay note, and is not asked for again.
		rl.holder.record(false)
	}
	msg, herr := readRelayReply(resp)
	switch {
	case errors.Is(herr, errRelayNotMCP):
		rl.holder.record(false)
		return nil, nil, nil, false
	case herr != nil:
		return nil, rpcErrorf(errInternal, nil, "internal error: relaying %s to %s: %v", req.Method, rl.url, herr), nil, true
	}
	if !self {
		rl.holder.record(true)
	}
	if msg.Error != nil {
		if call.meta == nil && msg.Error.Code == errInvalidParams.Code && strings.HasPrefix(msg.Error.Message, "resource not found") {
			msg.Error.Code = errResourceNotFound.Code // the legacy code for a legacy caller
		}
		return nil, msg.Error, nil, true
	}
	out := msg.Result
	if call.meta == nil {
		out = legacyResult(out)
	}
	if self {
		return json.RawMessage(out), nil, nil, true
	}
	_, listenError := rl.bound()
	note = map[string]any{
		"via":         rl.url,
		"holderPid":   resp.Header.Get(holderPIDHeader),
		"pid":         os.Getpid(),
		"listenError": listenError,
		"note":        "this process cannot bind the adapter port and answers through the devtools-mcp process holding it; it takes the port over when that one exits",
	}
	return json.RawMessage(out), nil, note, true
}

func (rl *relay) listening() bool {
	listening, _ := rl.bound()
	return listening
}

// relayName is the Mcp-Name header for a relayed request, base64-encoded
// when the name is not plain visible ASCII.
func relayName(method string, params map[string]json.RawMessage) (string, bool) {
	member := nameMembers[method]
	if member == "" {
		return "", false
	}
	name, ok := wireString(params[member])
	if !ok {
		return "", false
	}
	plain := name != "" && name[0] != ' ' && name[len(name)-1] != ' ' &&
		!strings.ContainsFunc(name, func(r rune) bool { return r < 0x20 || r > 0x7e })
	if plain && !strings.HasPrefix(name, "=?base64?") {
		return name, true
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(name)) + "?=", true
}

// legacyResult drops the members 2026-07-28 adds to results, so that a
// legacy client gets what this process would have answered itself.
func legacyResult(result []byte) []byte {
	if rawKind(result) != "object" {
		return result
	}
	var out bytes.Buffer
	out.WriteByte('{')
	_ = eachMemberRaw(result, func(quotedName, value []byte) bool {
		switch string(quotedName) {
		case `"resultType"`, `"ttlMs"`, `"cacheScope"`, `"_meta"`:
			return true
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		out.Write(quotedName)
		out.WriteByte(':')
		out.Write(value)
		return true
	})
	out.WriteByte('}')
	return out.Bytes()
}

// watch keeps, while this process relays, one subscriptions/listen stream
// open to the holder for resource list changes and the resources local
// clients hold, and hands what it delivers to them, so that subscriptions
// work through the relay too. It returns when ctx ends.
func (rl *relay) watch(ctx context.Context, s *mcpServer) {
	// Until the link has tried its bind, "not listening" says nothing:
	// the port may be about to be ours.
	select {
	case <-rl.ready:
	case <-ctx.Done():
		return
	}
	var probes sync.WaitGroup
	probes.Go(func() { rl.holder.run(ctx) })
	defer probes.Wait()
	for ctx.Err() == nil {
		if !rl.listening() && rl.holder.verdict(ctx, true) && rl.listenOnce(ctx, s) {
			continue // the subscriptions changed: listen again at once
		}
		select {
		case <-ctx.Done():
		case <-s.subsChanged:
		case <-time.After(rl.retry): // the link retries its bind as often
		}
	}
}

// listenOnce holds one listen stream until it ends, the local subscriptions
// change (then it reports true) or this process binds the port.
func (rl *relay) listenOnce(ctx context.Context, s *mcpServer) (subsChanged bool) {
	ctx, cancel := context.WithCancel(ctx)
	uris := s.heldURIs()
	var watcher sync.WaitGroup
	watcher.Go(func() {
		select {
		case <-ctx.Done():
		case <-s.subsChanged:
			subsChanged = true
			cancel()
		}
	})
	watcher.Go(func() {
		every(ctx, rl.retry, func() bool { return !rl.listening() })
		cancel()
	})
	rl.listen(ctx, uris, s)
	cancel()
	watcher.Wait()
	return subsChanged
}

// listen opens subscriptions/listen on the holder and hands its
// notifications to the local clients until the stream ends.
func (rl *relay) listen(ctx context.Context, uris []string, s *mcpServer) {
	notifications, _ := json.Marshal(map[string]any{"resourcesListChanged": true, "resourceSubscriptions": uris})
	params := map[string]json.RawMessage{"notifications": notifications}
	// No client timeout: the stream is long-lived; ctx ends it.
	resp, self, err := rl.exchange(ctx, &http.Client{Transport: rl.client.Transport}, "relay", "subscriptions/listen", params, "", "text/event-stream")
	if err != nil {
		return
	}
	defer resp.Body.Close()
	if self {
		return // this process itself: nothing to relay
	}
	relayEvents(resp.Body, func(method, uri string) {
		// What comes through the relay goes to this process's own clients
		// only, never back out to its listen streams, and a list change
		// goes through the same announcer as its own.
		switch method {
		case "notifications/resources/list_changed":
			s.resources.lists.relayedChange()
		case "notifications/resources/updated":
			s.resourceUpdated(clientsOnly{map[string]string{"uri": uri}})
		}
	})
}

// relayEvents reads a listen stream until it ends, handing each
// notification's method and uri to notify. A line over maxHTTPBodyBytes is
// skipped, and reading goes on.
func relayEvents(body io.Reader, notify func(method, uri string)) {
	lines := newLineReader(body, maxHTTPBodyBytes, dropLongLines)
	for {
		line, err := lines.next()
		if errors.Is(err, errLineTooLong) {
			continue
		}
		if err != nil {
			return
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				URI string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(data, &msg) == nil {
			notify(msg.Method, msg.Params.URI)
		}
	}
}

// Why the relay cannot use an answer.
var (
	// errRelayUnreachable: nothing answered, or the answer did not arrive.
	errRelayUnreachable = errors.New("the process holding the adapter port did not answer")
	// errRelayNotMCP: what holds the port is not a devtools-mcp answering MCP.
	errRelayNotMCP = errors.New("the process holding the adapter port does not answer MCP")
)

// relayReply is the JSON-RPC answer of the holder.
type relayReply struct {
	Result json.RawMessage `json:"result"`
	Error  *rpcError       `json:"error"`
}

// exchange is the relay's one HTTP exchange with the holder, whatever it
// asks (a relayed request, the probe, the listen stream): it posts method
// with params (to which it adds the relay's _meta) as request id, as a
// stateless 2026-07-28 client writes it, and returns the response once its
// Content-Type is want: the caller reads and closes its body. self says the
// answer came from this very server (holderInstanceHeader). name is the
// Mcp-Name header ("" for none). An error is errRelayUnreachable or
// errRelayNotMCP, wrapped.
func (rl *relay) exchange(ctx context.Context, client *http.Client, id any, method string, params map[string]json.RawMessage,
	name, want string) (resp *http.Response, self bool, err error) {
	withMeta := make(map[string]any, len(params)+1)
	for k, v := range params {
		withMeta[k] = v
	}
	withMeta["_meta"] = map[string]any{metaProtocolVersion: modernVersions[0], metaClientCapabilities: map[string]any{},
		metaClientInfo: json.RawMessage(serverInfoJSON)} // replaces the caller's: the relay speaks for itself
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": withMeta})
	if err != nil {
		return nil, false, fmt.Errorf("%w: %s: %v", errRelayUnreachable, method, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rl.url, bytes.NewReader(body))
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", errRelayUnreachable, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("MCP-Protocol-Version", modernVersions[0])
	req.Header.Set("Mcp-Method", method)
	if name != "" {
		req.Header.Set("Mcp-Name", name)
	}
	resp, err = client.Do(req)
	if err != nil {
		return nil, false, fmt.Errorf("%w: %v", errRelayUnreachable, err)
	}
	if got := resp.Header.Get("Content-Type"); got != want {
		resp.Body.Close()
		return nil, false, fmt.Errorf("%w: %s answered with Content-Type %q", errRelayNotMCP, method, got)
	}
	return resp, resp.Header.Get(holderInstanceHeader) == rl.instance, nil
}

// readRelayReply reads the JSON-RPC answer in resp's body, bounded by
// maxHTTPBodyBytes. An answer that is neither a result nor an error is
// errRelayNotMCP.
func readRelayReply(resp *http.Response) (relayReply, error) {
	var msg relayReply
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxHTTPBodyBytes+1))
	switch {
	case err != nil:
		return msg, fmt.Errorf("reply unreadable: %w", err)
	case len(data) > maxHTTPBodyBytes:
		return msg, fmt.Errorf("reply over %d bytes", maxHTTPBodyBytes)
	}
	if json.Unmarshal(data, &msg) != nil || (msg.Result == nil && msg.Error == nil) {
		return relayReply{}, fmt.Errorf("%w: the reply is not a JSON-RPC answer", errRelayNotMCP)
	}
	return msg, nil
}
