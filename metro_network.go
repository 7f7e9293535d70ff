package main

// metro_network.go turns a page's Network events into `network` events of
// the wire protocol's shape (docs/protocol.md §3: http_request {method, url,
// status, durationMs, request: {headers, params, body}, response: {headers,
// body}, error?}), one per request, when it finishes or fails. Response
// bodies are not fetched: that would take Network.getResponseBody, which
// the link never sends (metro_cdp.go), so response.body is null.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"slices"
	"strconv"
	"time"
)

// Bounds: requests awaiting their end per page, by count and by the bytes
// they hold (past either, the oldest is forgotten and counted: a page that
// starts requests with long URLs or headers and never ends them holds at
// most maxMetroPendingBytes), a request body's characters kept, header
// bytes kept.
const (
	maxMetroPendingRequests = 512
	maxMetroPendingBytes    = 4 << 20
	maxMetroBodyChars       = 64 << 10
	maxMetroHeaderBytes     = 32 << 10
)

// metroRequest is a request seen starting, waiting for its end.
type metroRequest struct {
	method, url     string
	headers         map[string]string
	body            *string
	start           float64 // CDP's monotonic seconds
	wall            time.Time
	status          *int64
	responseHeaders map[string]string // empty until a response
	size            int64             // what it holds, as counted in metroNetwork.bytes
	// shared: the request may be another app's (metro_netshare.go).
	shared bool
}

// metroNetwork follows one page's requests. It is used by the page's reader
// alone.
type metroNetwork struct {
	pending map[string]*metroRequest
	order   []string // request ids, oldest first
	bytes   int64    // held by the pending requests (maxMetroPendingBytes)
	evicted int64    // requests forgotten unfinished, not yet counted by the link (takeEvicted)
	// sameID lists, oldest first, the pending keys of requests that
	// reported one id: two apps' requests reach one connection through
	// Expo's dev server, and iOS apps all count their ids from "1". The
	// first key is the id, the others the id with a suffix (keyFor).
	sameID     map[string][]string
	collisions int
}

// handle reads one Network event; ok is true when a request ended and ev is
// its event. shared says the frame may be another app's (started).
func (n *metroNetwork) handle(method string, params []byte, now time.Time, shared bool) (ev metroEvent, ok bool, err error) {
	switch method {
	case "Network.requestWillBeSent", "Network.responseReceived", "Network.loadingFinished", "Network.loadingFailed":
	default:
		return metroEvent{}, false, nil
	}
	var p cdpNetworkParams
	if err := json.Unmarshal(params, &p); err != nil {
		return metroEvent{}, false, fmt.Errorf("%w: %s params: %v", errCDPFrame, method, err)
	}
	if p.RequestID == "" {
		return metroEvent{}, false, fmt.Errorf("%w: %s without a requestId", errCDPFrame, method)
	}
	if n.pending == nil {
		n.pending = make(map[string]*metroRequest)
	}
	key, r := n.find(method, p.RequestID, p.Redirect != nil, func(r *metroRequest) bool { return p.fits(method, r) })
	switch method {
	case "Network.requestWillBeSent":
		return metroEvent{}, false, n.started(method, &p, r, now, shared)
	case "Network.responseReceived":
		if r != nil && p.Response != nil {
			status := int64(p.Response.Status)
			r.status, r.responseHeaders = &status, metroHeaders(p.Response.Headers)
			n.resize(r)
			r.shared = r.shared || shared
		}
	case "Network.loadingFinished", "Network.loadingFailed":
		if r == nil {
			return metroEvent{}, false, nil // its start was never seen (before we attached)
		}
		r.shared = r.shared || shared
		n.remove(key)
		errText := ""
		if method == "Network.loadingFailed" {
			text := cmp.Or(p.ErrorText, "unknown error")
			if p.ErrorText == "" && p.Canceled {
				text = "canceled"
			}
			errText = "Network request failed: " + clipText(text, 1024)
		}
		payload, err := r.event(p.Timestamp, errText)
		return metroEvent{Stream: "network", Type: "http_request", Payload: payload, Time: r.wall}, err == nil, err
	}
	return metroEvent{}, false, nil
}

// cdpNetworkParams holds what handle reads of a Network event's params.
type cdpNetworkParams struct {
	RequestID string  `json:"requestId"`
	Timestamp float64 `json:"timestamp"`
	WallTime  float64 `json:"wallTime"`
	Redirect  *struct {
		URL string `json:"url"`
	} `json:"redirectResponse"`
	Request *struct {
		URL      string          `json:"url"`
		Method   string          `json:"method"`
		Headers  json.RawMessage `json:"headers"`
		PostData *string         `json:"postData"`
	} `json:"request"`
	Response *struct {
		URL     string          `json:"url"`
		Status  float64         `json:"status"`
		Headers json.RawMessage `json:"headers"`
	} `json:"response"`
	ErrorText string `json:"errorText"`
	Canceled  bool   `json:"canceled"`
}

// fits reports whether r, pending under the event's requestId, is the
// request the method event with these params speaks of.
func (p *cdpNetworkParams) fits(method string, r *metroRequest) bool {
	switch {
	case p.Redirect != nil:
		return r.url == clipText(p.Redirect.URL, 8192)
	case p.Response != nil:
		return r.status == nil && r.url == clipText(p.Response.URL, 8192)
	case method == "Network.loadingFinished":
		return r.status != nil
	}
	return true
}

// started reads Network.requestWillBeSent: r, the request pending under
// its id, if any, is taken up again or a new one begins.
func (n *metroNetwork) started(method string, p *cdpNetworkParams, r *metroRequest, now time.Time, shared bool) error {
	if p.Request == nil {
		return fmt.Errorf("%w: %s without a request", errCDPFrame, method)
	}
	if r != nil && shared && p.Redirect == nil {
		// Expo's interceptor reports a request once (and a redirect
		// with its redirectResponse): under a shared stream, a second
		// start under a pending id is another app's request.
		r = nil
	}
	if r == nil {
		// A redirect, or the second report some React Native versions
		// send with a stack, arrives under the same id: one request.
		r = &metroRequest{start: p.Timestamp, wall: now, responseHeaders: map[string]string{}}
		if p.WallTime > 0 {
			r.wall = cdpTime(p.WallTime*1000, now)
		}
		if len(n.order) >= maxMetroPendingRequests {
			n.evictOldest()
		}
		key := n.keyFor(p.RequestID)
		n.pending[key] = r
		n.order = append(n.order, key)
	}
	r.shared = r.shared || shared
	r.method, r.url = clipText(p.Request.Method, 32), clipText(p.Request.URL, 8192)
	r.headers = metroHeaders(p.Request.Headers)
	if p.Request.PostData != nil {
		body := clipText(*p.Request.PostData, maxMetroBodyChars)
		r.body = &body
	}
	n.resize(r)
	return nil
}

// keyFor is the pending key for a request starting under id: the id
// itself, or, while another request under id is pending, the id with a
// suffix no page sends, listed in sameID.
func (n *metroNetwork) keyFor(id string) string {
	if _, taken := n.pending[id]; !taken && len(n.live(id)) == 0 {
		return id
	}
	if n.sameID == nil {
		n.sameID = map[string][]string{}
	}
	if len(n.sameID) > maxMetroPendingRequests {
		for k := range n.sameID {
			n.live(k) // forgets ids whose requests all ended or were evicted
		}
	}
	n.collisions++
	key := id + "\x00" + strconv.Itoa(n.collisions)
	keys := n.live(id)
	if _, ok := n.pending[id]; ok && !slices.Contains(keys, id) {
		keys = append([]string{id}, keys...)
	}
	n.sameID[id] = append(keys, key)
	return key
}

// live is the pending keys listed under id in sameID, oldest first,
// dropping those no longer pending.
func (n *metroNetwork) live(id string) []string {
	keys := slices.DeleteFunc(n.sameID[id], func(k string) bool { _, ok := n.pending[k]; return !ok })
	if len(keys) == 0 {
		delete(n.sameID, id)
		return nil
	}
	n.sameID[id] = keys
	return keys
}

// find is the pending request an event under id is about: the only one,
// or, when several requests share the id, the oldest that fits (a
// redirect's or a response's URL, a finished load's response), else the
// oldest for an end or a redirect and none for a response that fits none.
func (n *metroNetwork) find(method, id string, redirect bool, fits func(*metroRequest) bool) (string, *metroRequest) {
	keys := n.live(id)
	if len(keys) < 2 {
		if len(keys) == 1 {
			return keys[0], n.pending[keys[0]]
		}
		return id, n.pending[id]
	}
	for _, k := range keys {
		if fits(n.pending[k]) {
			return k, n.pending[k]
		}
	}
	if method == "Network.responseReceived" || (method == "Network.requestWillBeSent" && !redirect) {
		return "", nil
	}
	return keys[0], n.pending[keys[0]]
}

// resize counts what r holds now, then forgets the oldest requests while
// the pending ones hold more than maxMetroPendingBytes.
func (n *metroNetwork) resize(r *metroRequest) {
	size := int64(len(r.method) + len(r.url) + headersSize(r.headers) + headersSize(r.responseHeaders) + 64)
	if r.body != nil {
		size += int64(len(*r.body))
	}
	n.bytes += size - r.size
	r.size = size
	for n.bytes > maxMetroPendingBytes && len(n.order) > 0 {
		n.evictOldest()
	}
}

func (n *metroNetwork) evictOldest() {
	n.remove(n.order[0])
	n.evicted++
}

func (n *metroNetwork) takeEvicted() int64 {
	e := n.evicted
	n.evicted = 0
	return e
}

func headersSize(h map[string]string) int {
	size := 0
	for k, v := range h {
		size += len(k) + len(v)
	}
	return size
}

func (n *metroNetwork) remove(id string) {
	if r := n.pending[id]; r != nil {
		n.bytes -= r.size
	}
	delete(n.pending, id)
	n.order = slices.DeleteFunc(n.order, func(k string) bool { return k == id })
}

// event is the http_request event of r, ended at end (CDP seconds).
func (r *metroRequest) event(end float64, errText string) ([]byte, error) {
	var duration any
	if end >= r.start && r.start > 0 {
		duration = math.Round((end-r.start)*1e6) / 1e3 // milliseconds, to the microsecond
	}
	params := map[string]string{}
	if u, err := url.Parse(r.url); err == nil {
		for k, v := range u.Query() {
			params[k] = v[0] // ParseQuery gives every key a value
		}
	}
	type request struct {
		Headers map[string]string `json:"headers"`
		Params  map[string]string `json:"params"`
		Body    *string           `json:"body"`
	}
	type response struct {
		Headers map[string]string `json:"headers"`
		Body    any               `json:"body"`
	}
	ev := struct {
		Method     string    `json:"method"`
		URL        string    `json:"url"`
		Status     *int64    `json:"status"`
		DurationMs any       `json:"durationMs"`
		Request    request   `json:"request"`
		Response   *response `json:"response"`
		Error      string    `json:"error,omitempty"`
		// Attribution: "unknown" for a shared request.
		Attribution string `json:"attribution,omitempty"`
	}{Method: r.method, URL: r.url, Status: r.status, DurationMs: duration,
		Request: request{Headers: r.headers, Params: params, Body: r.body}, Error: errText}
	if r.shared {
		ev.Attribution = "unknown"
	}
	if errText == "" || r.status != nil {
		ev.Response = &response{Headers: r.responseHeaders}
	} else {
		ev.Status = nil
	}
	return json.Marshal(ev)
}

// metroHeaders reads a CDP headers object, keeping string values, at most
// maxMetroHeaderBytes of them.
func metroHeaders(raw json.RawMessage) map[string]string {
	h := map[string]string{}
	size := 0
	_ = eachMember(raw, func(name string, v []byte) bool {
		s, ok := wireString(v)
		if !ok {
			return true
		}
		if size += len(name) + len(s); size > maxMetroHeaderBytes {
			return false
		}
		h[name] = s
		return true
	})
	return h
}
