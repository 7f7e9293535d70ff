package main

import (
	"context"
	"encoding/json"
	"net/url"
	"time"
)

// tool_health.go is debug_health_check: never an error, never slow, and
// within the result budget however many sessions and streams there are.

// healthStreamsTimeout bounds the live streams.list of a health check.
const healthStreamsTimeout = time.Second

// healthOutput is debug_health_check's result. Structs, not maps: this is
// the most called tool, and maps cost a sort and an allocation per key.
type healthOutput struct {
	Adapter       *healthAdapter  `json:"adapter"`
	Connected     bool            `json:"connected"`
	Server        healthServer    `json:"server"`
	Sessions      []healthSession `json:"sessions"`
	Stale         bool            `json:"stale,omitempty"`
	Streams       []healthStream  `json:"streams"`
	StreamsTotal  int             `json:"streamsTotal,omitempty"`  // set when streams lists only the first ones
	SessionsTotal int             `json:"sessionsTotal,omitempty"` // set when sessions lists only the first ones
}

// maxHealthStreams bounds the streams a health check lists in full, per
// session: the health check never fails, not even for PAYLOAD_TOO_LARGE.
const maxHealthStreams = 100

type healthAdapter struct {
	AdapterVersion string `json:"adapterVersion"`
	ConnectedAt    string `json:"connectedAt"`
	SessionID      string `json:"sessionId"`
	Uptime         int64  `json:"uptime"`
}

type healthServer struct {
	ListenError string          `json:"listenError,omitempty"`
	Listening   bool            `json:"listening"`
	Metro       *healthMetro    `json:"metro,omitempty"`
	Native      *healthNative   `json:"native,omitempty"` // absent when NATIVE_LOGS=off
	Reactotron  *healthListener `json:"reactotron,omitempty"`
	Redaction   string          `json:"redaction"` // "on" or "off" (REDACT)
	Version     string          `json:"version"`
	WSURL       string          `json:"wsUrl"`
}

// healthListener is the state of the Reactotron bridge's listener.
type healthListener struct {
	ListenError string `json:"listenError,omitempty"`
	Listening   bool   `json:"listening"`
	URL         any    `json:"url"`               // null when the bridge is off
	Desktop     string `json:"desktop,omitempty"` // REACTOTRON_DESKTOP, where apps are relayed
}

func describeListener(st listenerStatus) *healthListener {
	return &healthListener{ListenError: st.ListenError, Listening: st.Listening, URL: nullable(st.URL)}
}

type healthSession struct {
	App            any             `json:"app"`
	Connected      bool            `json:"connected"`
	ConnectedAt    string          `json:"connectedAt"`
	Device         json.RawMessage `json:"device"`
	DisconnectedAt *string         `json:"disconnectedAt,omitempty"`
	ID             string          `json:"id"`
	Streams        []string        `json:"streams"`
	StreamsTotal   int             `json:"streamsTotal,omitempty"`
	Via            string          `json:"via"`
	Desktop        *relayStatus    `json:"desktop,omitempty"` // the relay to the Reactotron desktop app
	// SameAppAs are the other sessions of the same app, through another
	// link (session_sameapp.go); they are listed right after it.
	SameAppAs []string `json:"sameAppAs,omitempty"`
}

type healthStream struct {
	Active      bool    `json:"active"`
	EventCount  int64   `json:"eventCount"`
	LastEventAt *string `json:"lastEventAt"`
	Name        string  `json:"name"`
}

func healthCheck(ctx context.Context, ts *toolSet, a toolArgs) (*toolResult, error) {
	st := ts.link.status()
	out := healthOutput{
		Server:   healthServer{ListenError: st.ListenError, Listening: st.Listening, Redaction: ts.redact.Mode(), Version: serverVersion, WSURL: st.WSURL},
		Streams:  []healthStream{},
		Sessions: []healthSession{},
	}
	if ts.reactotronStatus != nil {
		out.Server.Reactotron = describeListener(ts.reactotronStatus())
	}
	var relays map[string]*relayStatus
	if ts.desktopStatus != nil {
		relays = ts.desktopStatus()
		if out.Server.Reactotron != nil {
			out.Server.Reactotron.Desktop = ts.desktopAddr
		}
	}
	if ts.metroStatus != nil {
		out.Server.Metro = describeMetro(ts.metroStatus())
	} else {
		out.Server.Metro = &healthMetro{Status: "off (METRO_URL=off)", Pages: []healthMetroPage{}}
	}
	if ts.nativeStatus != nil {
		out.Server.Native = describeNative(ts.nativeStatus())
	}
	grouped, sameApp := ts.sessions.grouped()
	for _, s := range grouped {
		h := describeSession(s.view())
		if h.Via == sessionViaReactotron && h.Connected {
			h.Desktop = relays[h.ID]
		}
		h.SameAppAs = sameApp[s]
		out.Sessions = append(out.Sessions, h)
	}
	if a.session == nil || !a.session.isLive() {
		return ts.healthResult(out)
	}
	info := a.session.view().Info
	out.Connected = true
	out.Adapter = &healthAdapter{AdapterVersion: info.AdapterVersion, ConnectedAt: info.ConnectedAt.UTC().Format(timeFormat),
		SessionID: info.SessionID, Uptime: uptime(info)}
	ctx, cancel := context.WithTimeout(ctx, min(ts.cfg.RequestTimeout, ts.healthStreams))
	defer cancel()
	if live, err := ts.fetchStreams(ctx, a.session); err == nil {
		for _, s := range live {
			out.Streams = append(out.Streams, healthStream{Active: s.Active, EventCount: s.EventCount, LastEventAt: s.LastEventAt, Name: s.Name})
		}
	} else {
		// The app is slow or misbehaving: report what the handshake and
		// pushes said, marked stale, rather than fail or wait.
		for _, s := range info.Streams {
			out.Streams = append(out.Streams, healthStream{Active: s.Active, EventCount: s.EventCount, LastEventAt: formatTime(s.LastEventAt), Name: s.Name})
		}
		out.Stale = true
	}
	out.Streams, out.StreamsTotal = firstN(out.Streams, out.StreamsTotal, maxHealthStreams)
	return ts.healthResult(out)
}

// firstN keeps the first n of a list, raising total, which counts the list
// when it is cut, to how many there were.
func firstN[T any](all []T, total, n int) ([]T, int) {
	if len(all) <= n {
		return all, total
	}
	return all[:n], max(total, len(all))
}

// healthResult encodes a health check within the result budget, summarising
// beyond it, each step saying what it left out — first the sessions' stream
// names, then all but the first streams, then all but the first sessions.
func (ts *toolSet) healthResult(out healthOutput) (*toolResult, error) {
	budget := ts.cfg.MaxResultBytes - 256 // room for the session and redaction marks
	steps := []func(){
		func() {
			for i := range out.Sessions {
				h := &out.Sessions[i]
				h.Streams, h.StreamsTotal = firstN(h.Streams, h.StreamsTotal, 0)
			}
		},
		func() { out.Streams, out.StreamsTotal = firstN(out.Streams, out.StreamsTotal, 5) },
		func() { out.Sessions, out.SessionsTotal = firstN(out.Sessions, out.SessionsTotal, 3) },
		func() { out.Sessions, out.SessionsTotal = firstN(out.Sessions, out.SessionsTotal, 1) },
		func() { out.Streams, out.StreamsTotal = firstN(out.Streams, out.StreamsTotal, 0) },
	}
	res, err := encodeResult(out, "")
	for _, step := range steps {
		if err != nil || len(res.body) <= budget {
			break
		}
		step()
		res, err = encodeResult(out, "")
	}
	return res, err
}

// describeSession is a session's entry in debug_health_check and
// debug://sessions.
func describeSession(v sessionView) healthSession {
	h := healthSession{ID: v.ID, App: nullable(v.AppName()), Via: v.Via, Connected: v.Connected,
		ConnectedAt: v.Info.ConnectedAt.UTC().Format(timeFormat), Device: orNull(v.Info.Device)}
	if !v.Connected {
		h.DisconnectedAt = formatTime(v.DisconnectedAt)
	}
	names := namesOf(v.Info.Streams, func(st streamState) string { return st.Name })
	h.Streams, h.StreamsTotal = firstN(names, 0, maxHealthStreams)
	return h
}

// uptime is how long the adapter has run in whole seconds: since the
// handshake's startedAt, else since it connected.
func uptime(a *adapterInfo) int64 {
	since := a.ConnectedAt
	if !a.StartedAt.IsZero() {
		since = a.StartedAt
	}
	return max(0, int64(time.Since(since)/time.Second))
}

// addRelayNote adds server.relay to a health check answered by the process
// holding the adapter port (rpc_relay.go), in the structured content and in
// the text that mirrors it.
func addRelayNote(result []byte, note map[string]any) []byte {
	var r map[string]any
	if json.Unmarshal(result, &r) != nil {
		return result
	}
	health, _ := r["structuredContent"].(map[string]any)
	server, _ := health["server"].(map[string]any)
	content, _ := r["content"].([]any)
	if server == nil || len(content) == 0 {
		return result // a failure: no health to add to
	}
	server["relay"] = note
	text, err := json.Marshal(health)
	if err != nil {
		return result
	}
	if item, ok := content[0].(map[string]any); ok {
		item["text"] = string(text) // other members of the item stay
	}
	data, err := json.Marshal(r)
	if err != nil {
		return result
	}
	return data
}

// healthMetro is server.metro of the health check.
type healthMetro struct {
	URL       any               `json:"url"` // null when the link is off
	Reachable bool              `json:"reachable"`
	Status    string            `json:"status"`
	Error     string            `json:"error,omitempty"`
	Pages     []healthMetroPage `json:"pages"`
	Dropped   *metroDropped     `json:"dropped,omitempty"`
	Network   string            `json:"network,omitempty"` // why requests may be another app's
}

type healthMetroPage struct {
	ID          string `json:"id"`
	App         string `json:"app"`
	Device      string `json:"device"`
	Attached    bool   `json:"attached"`
	Session     string `json:"session,omitempty"`
	NotAttached string `json:"notAttached,omitempty"` // why not
	RetryAt     string `json:"retryAt,omitempty"`
}

type metroDropped struct {
	OversizedFrames    int64 `json:"oversizedFrames"`
	MalformedFrames    int64 `json:"malformedFrames"`
	UnknownAnswers     int64 `json:"unknownAnswers"`
	UnfinishedRequests int64 `json:"unfinishedRequests"`
}

// maxHealthMetroPages bounds the pages a health check lists.
const maxHealthMetroPages = 16

// describeMetro words the Metro link's state for an agent. Metro not
// running is the normal case: one status line says so.
func describeMetro(st metroStatus) *healthMetro {
	h := &healthMetro{URL: st.URL, Reachable: st.Reachable, Pages: []healthMetroPage{}}
	switch {
	case !st.Checked:
		h.Status = "looking for Metro"
	case !st.Reachable:
		h.Status = "Metro is not running at " + st.URL + " (or not reachable): apps under Metro (npx react-native start, npx expo start) appear here within seconds of it starting"
		h.Error = st.Error
	case len(st.Pages) == 0:
		h.Status = "Metro is running; no React Native app is connected to it"
	default:
		h.Status = "Metro is running"
	}
	for _, p := range st.Pages[:min(len(st.Pages), maxHealthMetroPages)] {
		hp := healthMetroPage{ID: p.ID, App: p.App, Device: p.Device, Attached: p.Attached, Session: p.Session}
		switch p.Reason {
		case metroNotMultiDebugger:
			hp.NotAttached = "the page takes one debugger at a time (no supportsMultipleDebuggers), and attaching would close React Native DevTools on it; METRO_ATTACH_EXCLUSIVE=true attaches anyway"
		case metroOtherDebugger:
			hp.NotAttached = "another debugger opened the page and Metro closed ours ([NEW_DEBUGGER_OPENED]); it is left to that debugger while Metro lists the page (until the app relaunches, or reloads into a new page; a reload in place keeps the page)"
		case metroClosedOnAttach:
			hp.NotAttached = "the page closed the connection right after attaching (" + p.Detail + "); retrying later, less often each time"
			if p.Origin != nil {
				hp.NotAttached += ". It closed without a close frame, as Expo's dev server does when it refuses the debugger's Origin: " + originAdvice(st.URL, *p.Origin)
			}
		case metroDialFailed:
			hp.NotAttached = "the page's debugger socket could not be opened (" + p.Detail + "); retrying later, less often each time"
			if p.Origin != nil {
				hp.NotAttached += ". A 401 answer means the dev server refused the debugger's Origin: " + originAdvice(st.URL, *p.Origin)
			}
		case metroOlderPage:
			hp.NotAttached = "a newer page of the same app is attached instead"
		}
		if !p.RetryAt.IsZero() {
			hp.RetryAt = p.RetryAt.UTC().Format(timeFormat)
		}
		h.Pages = append(h.Pages, hp)
	}
	if st.SharedNetwork {
		h.Network = "this dev server (Expo) sends every app's network requests to every attached page, and the requests name no app: " +
			"with more than one app attached, each of their sessions holds the others' requests too. Such requests carry " +
			`attribution: "unknown"; read them as any attached app's. Attach one app at a time to know whose a request is.`
	}
	if d := st.Dropped; d != (metroCounters{}) {
		h.Dropped = &metroDropped{OversizedFrames: d.OversizedFrames, MalformedFrames: d.MalformedFrames,
			UnknownAnswers: d.UnknownAnswers, UnfinishedRequests: d.UnfinishedRequests}
	}
	return h
}

// originAdvice names the Origin a dev server may have refused and what to
// set so that the link sends one it accepts.
func originAdvice(metroURL string, o metroOrigin) string {
	text := "the Origin sent was " + o.Origin + "."
	if o.Named != "" {
		host := o.Named
		if u, err := url.Parse(o.Named); err == nil {
			host = u.Hostname()
		}
		return text + " The dev server names itself " + o.Named + ", a host that is not loopback: add " + host +
			" to METRO_ALLOWED_HOSTS so that this Origin is sent."
	}
	return text + " Expo's dev server accepts only the host of its own URL: 127.0.0.1:PORT, or the host of REACT_NATIVE_PACKAGER_HOSTNAME " +
		"(or EXPO_PACKAGER_PROXY_URL) when it was started with one. Set METRO_URL to that URL (now " + metroURL +
		"), and add a host that is not loopback to METRO_ALLOWED_HOSTS."
}
