package main

import (
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestNormaliseStoreValue(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{"items":[],"addItem":"[function addItem]","clear":"[function]"}`, `{"items":[]}`},
		{`[1,"[function f]",{"g":"[function]","n":12345678901234567890}]`, `[1,{"n":12345678901234567890}]`},
		{`{"s":"[function is text]x","t":"[fun]"}`, `{"s":"[function is text]x","t":"[fun]"}`},
		{`"[function f]"`, `"[function f]"`}, // a store that is a function is left to say so
		{`null`, `null`},
		{`{"a":"<b>"}`, `{"a":"<b>"}`},
	} {
		if got := string(normaliseStoreValue(json.RawMessage(c.in))); got != c.want {
			t.Errorf("normaliseStoreValue(%s) = %s, want %s", c.in, got, c.want)
		}
	}
}

func TestParseReactotronStoreList(t *testing.T) {
	got, err := parseReactotronValuesChange(json.RawMessage(`{"changes":[{"path":"cart","value":{"n":1,"f":"[function f]"}},{"path":"gone"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := []reactotronStoreValue{{Name: "cart", Value: json.RawMessage(`{"n":1}`)}} // "gone" was undefined
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, bad := range []string{`{}`, `{"changes":{}}`, `{"changes":[{"value":1}]}`, `{"changes":[1]}`, `[]`} {
		if _, err := parseReactotronValuesChange(json.RawMessage(bad)); !errors.Is(err, errReactotronMessage) {
			t.Errorf("parseReactotronValuesChange(%s) = %v, want an errReactotronMessage", bad, err)
		}
	}
}

func TestReactQueryMappings(t *testing.T) {
	// A values response that is not React Query's is an answer.
	if _, _, ok, err := reactQueryFromValues(json.RawMessage(`{"path":"cart","value":1}`)); ok || err != nil {
		t.Errorf("a plain values response read as React Query's: %v %v", ok, err)
	}
	if _, _, ok, err := reactQueryFromValues(json.RawMessage(`{"path":"React Query (observerResultsUpdated)","value":{}}`)); !ok || !errors.Is(err, errReactotronMessage) {
		t.Errorf("a React Query path without a hash: ok=%v err=%v, want an error", ok, err)
	}
	typ, ev, ok, err := reactQueryFromValues(json.RawMessage(`{"path":"React Query (observerResultsUpdated) [\"a\",{\"b\":1}]","value":{"status":"error","error":"boom"}}`))
	if !ok || err != nil || typ != "query_updated" {
		t.Fatalf("reactQueryFromValues = %s %v %v", typ, ok, err)
	}
	if want := `{"queryHash":"[\"a\",{\"b\":1}]","queryKey":["a",{"b":1}],"status":"error","fetchStatus":null,"data":null,"error":"boom","dataUpdatedAt":null,"errorUpdatedAt":null,"isInvalidated":null}`; string(ev) != want {
		t.Errorf("event = %s, want %s", ev, want)
	}
	// A hash that is no JSON is its own key.
	if got := string(reactQueryKey("todos", nil)); got != `"todos"` {
		t.Errorf("reactQueryKey(todos) = %s", got)
	}
	// display: the name must be the notification and the hash.
	for _, c := range []struct{ payload, typ string }{
		{`{"name":"observerAdded[1]","value":{"queryHash":"[1]","observers":[{},{}]}}`, "observer_added"},
		{`{"name":"removed[1]","value":{"queryHash":"[1]"}}`, "query_removed"},
		{`{"name":"ORDER","value":{"queryHash":"[1]"}}`, ""},
		{`{"name":"added[2]","value":{"queryHash":"[1]"}}`, ""},
		{`{"name":"added[1]","value":{"id":1}}`, ""},
	} {
		typ, ev, ok := reactQueryFromDisplay(json.RawMessage(c.payload))
		if typ != c.typ || ok != (c.typ != "") {
			t.Errorf("reactQueryFromDisplay(%s) = %q %v, want %q", c.payload, typ, ok, c.typ)
		}
		if c.typ == "observer_added" && !strings.Contains(string(ev), `"observerCount":2`) {
			t.Errorf("observer_added event %s lacks observerCount 2", ev)
		}
	}
	// mutations: only the plugin's mutation notification.
	if _, _, ok, _ := reactQueryFromAction(json.RawMessage(`{"name":"cart/add","action":{"type":"cart/add"}}`)); ok {
		t.Error("a Redux action read as a mutation")
	}
	if _, _, ok, err := reactQueryFromAction(json.RawMessage(`{"name":"mutation","action":{"type":"observerAdded","mutation":{}}}`)); !ok || !errors.Is(err, errReactotronMessage) {
		t.Errorf("an unknown mutation notification: ok=%v err=%v", ok, err)
	}
	typ, ev, ok, err = reactQueryFromAction(json.RawMessage(`{"name":"mutation","action":{"type":"updated","mutation":{"mutationId":7,"options":{"mutationKey":["k"]},"state":{"status":"error","error":{"message":"no"},"variables":{"id":1},"failureCount":1}}}}`))
	if !ok || err != nil || typ != "mutation_updated" {
		t.Fatalf("reactQueryFromAction = %s %v %v", typ, ok, err)
	}
	if want := `{"mutationId":7,"mutationKey":["k"],"status":"error","variables":{"id":1},"data":null,"error":{"message":"no"},"failureCount":1,"submittedAt":null}`; string(ev) != want {
		t.Errorf("event = %s, want %s", ev, want)
	}
}

func TestReactotronMSTDetails(t *testing.T) {
	got := string(reactotronMSTDetails(json.RawMessage(`{"id":1,"modelType":{"name":"Root","flags":128},"alive":true}`)))
	if want := `{"id":1,"modelType":"Root","alive":true}`; got != want {
		t.Errorf("reactotronMSTDetails = %s, want %s", got, want)
	}
	if got := reactotronMSTDetails(json.RawMessage(`"x"`)); got != nil {
		t.Errorf("details of a string = %s, want none", got)
	}
	if !isMSTAction(json.RawMessage(`{"name":"toggle","path":"/todos/0"}`)) || isMSTAction(json.RawMessage(`{"type":"x"}`)) {
		t.Error("isMSTAction misreads actions")
	}
	// reactotron-redux's name repeats the type and is not kept; MST's is.
	ev, _ := reactotronActionEvent(json.RawMessage(`{"name":"cart/add","action":{"type":"cart/add"}}`))
	if strings.Contains(string(ev), `"name"`) {
		t.Errorf("redux event %s keeps a name equal to its type", ev)
	}
}

func TestSameAction(t *testing.T) {
	for _, c := range []struct {
		recorded, dispatched string
		want                 bool
	}{
		{`{"type":"a"}`, `{"type":"a"}`, true},
		{`{"type":"a"}`, `{"type":"b"}`, false},
		{`{"name":"toggle","path":"/todos/0","args":[]}`, `{"name":"toggle","path":"/todos/0"}`, true},
		{`{"name":"toggle","path":"/todos/1"}`, `{"name":"toggle","path":"/todos/0"}`, false},
		{`{"name":"reset","path":""}`, `{"name":"reset"}`, true},
	} {
		if got := sameAction(json.RawMessage(c.recorded), json.RawMessage(c.dispatched)); got != c.want {
			t.Errorf("sameAction(%s, %s) = %v", c.recorded, c.dispatched, got)
		}
	}
}

// fakeStateSink records what the bridge hands a session.
type fakeStateSink struct {
	plugins []string
	names   []string
	stores  [][]reactotronStoreValue
	queries []string
}

func (f *fakeStateSink) keepQueryEvent(_ any, typ string, _ time.Time, _ json.RawMessage) {
	f.queries = append(f.queries, typ)
}
func (f *fakeStateSink) queryCacheSnapshot(any) (json.RawMessage, error) { return nil, nil }
func (f *fakeStateSink) keepStores(_ any, _ time.Time, s []reactotronStoreValue) []string {
	f.stores = append(f.stores, s)
	return f.names
}
func (f *fakeStateSink) noteStatePlugin(kind string) {
	if !slices.Contains(f.plugins, kind) {
		f.plugins = append(f.plugins, kind)
		slices.Sort(f.plugins)
	}
}
func (f *fakeStateSink) statePlugins() []string { return f.plugins }

func testReactotronConn() *reactotronConn {
	b := &reactotronBridge{logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	return &reactotronConn{bridge: b, waiters: map[string][]chan reactotronAnswer{}, subscribed: []string{"cart"},
		storeShown: make(chan struct{})}
}

// A backup request waiting for a Redux state is answered at once when the
// app's only answer is named stores: it never waits for what cannot come.
func TestBackupAnsweredWithStoresEndsTheWait(t *testing.T) {
	c := testReactotronConn()
	w := make(chan reactotronAnswer, 1)
	c.waiters[backupKey] = []chan reactotronAnswer{w}
	sink := &fakeStateSink{names: []string{"cart"}}
	f, err := parseReactotronFrame([]byte(`{"type":"state.backup.response","payload":{"state":[{"path":"cart","value":{"n":1}}]}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !c.handleState(sink, f) {
		t.Fatal("the backup was not handled")
	}
	select {
	case a := <-w:
		if !a.missing || a.value != nil {
			t.Errorf("answer %+v, want one marked missing", a)
		}
	default:
		t.Fatal("the Redux backup request is still waiting")
	}
	if canAnswerRedux(sink.statePlugins()) {
		t.Error("a stores-only app is asked for Redux state")
	}
	var e *errNoStatePlugin
	if te := toolErrorOf(noReduxPlugin(sink)); te == nil || te.Code != codeStreamUnavailable || !errors.As(noReduxPlugin(sink), &e) {
		t.Errorf("the refusal is worded as %+v", te)
	}

	// With a Redux plugin also known, the same array leaves the wait alone.
	c = testReactotronConn()
	w = make(chan reactotronAnswer, 1)
	c.waiters[backupKey] = []chan reactotronAnswer{w}
	sink = &fakeStateSink{names: []string{"cart"}, plugins: []string{statePluginRedux}}
	c.handleState(sink, f)
	select {
	case a := <-w:
		t.Errorf("the Redux request got %+v from the stores' backup", a)
	default:
	}
	if len(sink.stores) != 1 {
		t.Errorf("stores kept %d times, want once", len(sink.stores))
	}
}

func TestCanAnswerRedux(t *testing.T) {
	for _, c := range []struct {
		plugins []string
		want    bool
	}{
		{nil, true},
		{[]string{statePluginRedux}, true},
		{[]string{statePluginMST, statePluginRedux}, true},
		{[]string{statePluginStores}, false},
		{[]string{statePluginReactQuery}, false},
		{[]string{statePluginReactQuery, statePluginRedux, statePluginStores}, true},
	} {
		if got := canAnswerRedux(c.plugins); got != c.want {
			t.Errorf("canAnswerRedux(%v) = %v", c.plugins, got)
		}
	}
}

// FuzzReactotronStateMessages: any payload gives an error or store values
// that are valid JSON without functions, normalised once and for all.
func FuzzReactotronStateMessages(f *testing.F) {
	reactotronSeeds(f)
	f.Add([]byte(`{"changes":[{"path":"a","value":{"f":"[function f]","l":["[function]",1]}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		payload, err := decodeReactotronValue(data)
		if err != nil {
			return
		}
		if m := reactotronMSTDetails(payload); m != nil && !json.Valid(m) {
			t.Fatalf("reactotronMSTDetails(%s) = %s", payload, m)
		}
		stores, err := parseReactotronValuesChange(payload)
		if err != nil {
			if !errors.Is(err, errReactotronMessage) {
				t.Fatalf("error %v is not an errReactotronMessage", err)
			}
			return
		}
		for _, s := range stores {
			if !json.Valid(s.Value) {
				t.Fatalf("store %q value %s is not JSON", s.Name, s.Value)
			}
			if again := normaliseStoreValue(s.Value); string(again) != string(s.Value) {
				t.Fatalf("normalising twice: %s then %s", s.Value, again)
			}
		}
	})
}

// A plugin that pushes state.values.change unasked (Jotai-style) fills the
// stores too; a change without entries (an unsubscribe's answer) does not.
func TestUnaskedValuesChange(t *testing.T) {
	c := testReactotronConn()
	sink := &fakeStateSink{names: []string{"cart"}}
	for _, frame := range []string{
		`{"type":"state.values.change","payload":{"changes":[]}}`,
		`{"type":"state.values.change","payload":{"changes":[{"path":"cart","value":{"n":"~~~ zero ~~~","add":"~~~ add() ~~~"}}]}}`,
	} {
		f, err := parseReactotronFrame([]byte(frame))
		if err != nil {
			t.Fatal(err)
		}
		if !c.handleState(sink, f) {
			t.Fatalf("%s not handled", frame)
		}
	}
	want := [][]reactotronStoreValue{{{Name: "cart", Value: json.RawMessage(`{"n":0}`)}}}
	if diff := cmp.Diff(want, sink.stores); diff != "" {
		t.Errorf("stores kept (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{statePluginStores}, sink.plugins); diff != "" {
		t.Errorf("plugins (-want +got):\n%s", diff)
	}
}
