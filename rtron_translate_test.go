package main

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Turning Reactotron client messages into stream events, and reading the
// intro, state answers and commands (rtron_translate.go, rtron_responses.go).

func TestTranslateReactotron(t *testing.T) {
	tests := []struct {
		name         string
		frame        string
		stream, typ  string
		payload      string
		notAnEvent   bool
		wantErrorHas string
	}{
		{name: "action with its diff",
			frame:  `{"type":"state.action.complete","payload":{"name":"cart/add","action":{"type":"cart/add"},"ms":"~~~ zero ~~~","diff":[{"type":"CREATE","path":["cart","items",1],"value":{"sku":"B"}},{"type":"REMOVE","path":["cart","items","~~~ zero ~~~"],"oldValue":"~~~ null ~~~"},{"type":"CHANGE","path":["byId","42","total"],"value":2,"oldValue":1},{"type":"CHANGE","path":["a.b"],"value":"~~~ undefined ~~~","oldValue":1}]}}`,
			stream: "redux", typ: "action_dispatched",
			payload: `{"action":{"type":"cart/add"},"durationMs":0,"diff":[{"path":"cart.items.1","type":"added","newValue":{"sku":"B"}},{"path":"cart.items.0","type":"removed","oldValue":null},{"path":"byId[\"42\"].total","type":"changed","oldValue":1,"newValue":2},{"path":"[\"a.b\"]","type":"changed","oldValue":1,"newValue":null}]}`},
		{name: "action without timing or diff",
			frame:  `{"type":"state.action.complete","payload":{"name":"x","action":{"type":"x"}}}`,
			stream: "redux", typ: "action_dispatched", payload: `{"action":{"type":"x"}}`},
		{name: "action missing", frame: `{"type":"state.action.complete","payload":{"name":"x"}}`, wantErrorHas: "state.action.complete action: missing"},
		{name: "diff of the wrong shape", frame: `{"type":"state.action.complete","payload":{"action":{},"diff":{"a":1}}}`, wantErrorHas: "state.action.complete diff"},
		{name: "diff with an unknown type", frame: `{"type":"state.action.complete","payload":{"action":{},"diff":[{"type":"MOVE","path":[]}]}}`, wantErrorHas: `diff[0].type: want CREATE, REMOVE or CHANGE, got "MOVE"`},
		{name: "diff with a bad index", frame: `{"type":"state.action.complete","payload":{"action":{},"diff":[{"type":"CREATE","path":[1.5]}]}}`, wantErrorHas: "diff[0].path[0]: 1.5 is not an array index"},
		{name: "log",
			frame:  `{"type":"log","payload":{"level":"debug","message":"plain log"},"important":"~~~ false ~~~"}`,
			stream: "console", typ: "log", payload: `{"level":"debug","message":"plain log"}`},
		{name: "important log",
			frame:  `{"type":"log","payload":{"level":"warn","message":"careful"},"important":true}`,
			stream: "console", typ: "log", payload: `{"level":"warn","message":"careful","important":true}`},
		{name: "log of several values",
			frame:  `{"type":"log","payload":{"level":"debug","message":["two",{"a":"~~~ zero ~~~"}]}}`,
			stream: "console", typ: "log", payload: `{"level":"debug","message":"two {\"a\":0}"}`},
		{name: "log with several arguments, as the desktop lists them", frame: `{"type":"log","payload":{"level":"debug","message":["msg",{"n":1},["x",2],"~~~ null ~~~"]}}`,
			stream: "console", typ: "log", payload: `{"level":"debug","message":"msg {\"n\":1} [\"x\",2] null"}`},
		{name: "log of undefined",
			frame:  `{"type":"log","payload":{"level":"debug","message":"~~~ undefined ~~~"}}`,
			stream: "console", typ: "log", payload: `{"level":"debug","message":""}`},
		{name: "log without a level",
			frame:  `{"type":"log","payload":{"message":"m"}}`,
			stream: "console", typ: "log", payload: `{"level":"debug","message":"m"}`},
		{name: "error with a text stack",
			frame:  `{"type":"log","payload":{"level":"error","message":"boom","stack":"Error: boom\n    at f (a.js:1:2)"},"important":true}`,
			stream: "console", typ: "log", payload: `{"level":"error","message":"boom","stack":"Error: boom\n    at f (a.js:1:2)","important":true}`},
		// Frames are read and printed as every frame is (stack_frame.go):
		// a column of a frame resolved to a source file is the source
		// map's, from 0; one of a frame left as a URL is the engine's,
		// from 1; React Native's trackGlobalErrors sends none.
		{name: "error with stack frames",
			frame:  `{"type":"log","payload":{"level":"error","message":"m","stack":[{"fileName":"App.tsx","functionName":"onPress","lineNumber":12,"columnNumber":7},{"fileName":"index.js","functionName":"~~~ empty string ~~~","lineNumber":3,"columnNumber":"~~~ null ~~~"},{"fileName":"http://localhost:8081/index.bundle?platform=ios","functionName":"f","lineNumber":10,"columnNumber":5},{"fileName":"/Users/ana/shop/src/a.js","functionName":"g","lineNumber":4},"raw line"]}}`,
			stream: "console", typ: "log", payload: `{"level":"error","message":"m","stack":"at onPress (App.tsx:12:8)\nat index.js:3\nat f (http://localhost:8081/index.bundle?platform=ios:10:5)\nat g (/Users/ana/shop/src/a.js:4)\nraw line"}`},
		{name: "error with an undefined stack",
			frame:  `{"type":"log","payload":{"level":"error","message":"m","stack":"~~~ undefined ~~~"}}`,
			stream: "console", typ: "log", payload: `{"level":"error","message":"m"}`},
		{name: "log level of the wrong type", frame: `{"type":"log","payload":{"level":3}}`, wantErrorHas: "log level: want a string, got number"},
		{name: "log payload not an object", frame: `{"type":"log","payload":"hi"}`, wantErrorHas: "log payload: want an object, got string"},
		{name: "api response",
			frame:  `{"type":"api.response","payload":{"request":{"url":"https://x/cart?page=2","method":"GET","data":"~~~ null ~~~","headers":{"Accept":"application/json"},"params":{"page":"2"}},"response":{"body":{"items":[]},"status":200,"headers":{"content-type":"application/json"}},"duration":42}}`,
			stream: "network", typ: "http_request",
			payload: `{"method":"GET","url":"https://x/cart?page=2","status":200,"durationMs":42,"request":{"headers":{"Accept":"application/json"},"params":{"page":"2"},"body":null},"response":{"headers":{"content-type":"application/json"},"body":{"items":[]}}}`},
		{name: "api response with little known",
			frame:  `{"type":"api.response","payload":{"request":{"url":"u","method":"~~~ null ~~~","data":"~~~ undefined ~~~","headers":"~~~ null ~~~"},"response":{"body":"~~~ skipped ~~~"},"duration":"~~~ zero ~~~"}}`,
			stream: "network", typ: "http_request",
			payload: `{"method":"","url":"u","status":null,"durationMs":0,"request":{"headers":null,"params":null,"body":null},"response":{"headers":null,"body":"[skipped]"}}`},
		{name: "api response status of the wrong type", frame: `{"type":"api.response","payload":{"response":{"status":"200"}}}`, wantErrorHas: "api.response response.status: want a number, got string"},
		{name: "api response request of the wrong type", frame: `{"type":"api.response","payload":{"request":[]}}`, wantErrorHas: "api.response request payload: want an object, got array"},
		{name: "mmkv set",
			frame:  `{"type":"display","payload":{"name":"MMKV","value":{"key":"session.token","value":"abc"},"preview":"Set \"session.token\" to abc","image":"~~~ undefined ~~~"},"important":true}`,
			stream: "mmkv", typ: "mmkv_mutation", payload: `{"instance":"default","key":"session.token","op":"set","value":"abc"}`},
		{name: "mmkv set to empty",
			frame:  `{"type":"display","payload":{"name":"MMKV","value":{"key":"k","value":"~~~ empty string ~~~"}}}`,
			stream: "mmkv", typ: "mmkv_mutation", payload: `{"instance":"default","key":"k","op":"set","value":""}`},
		{name: "mmkv delete",
			frame:  `{"type":"display","payload":{"name":"MMKV","value":{"key":"k","value":"undefined"}}}`,
			stream: "mmkv", typ: "mmkv_mutation", payload: `{"instance":"default","key":"k","op":"delete"}`},
		{name: "display named MMKV of another shape stays on the timeline",
			frame:  `{"type":"display","payload":{"name":"MMKV","value":"hello"}}`,
			stream: "timeline", typ: "display", payload: `{"name":"MMKV","value":"hello"}`},
		{name: "other display",
			frame:  `{"type":"display","payload":{"name":"ORDER","value":{"paid":"~~~ false ~~~"}}}`,
			stream: "timeline", typ: "display", payload: `{"name":"ORDER","value":{"paid":false}}`},
		{name: "async storage setItem",
			frame:  `{"type":"asyncStorage.mutation","payload":{"action":"setItem","data":{"key":"user","value":"{\"id\":42}"}}}`,
			stream: "async_storage", typ: "async_storage_mutation", payload: `{"action":"setItem","key":"user","value":"{\"id\":42}"}`},
		{name: "async storage clear",
			frame:  `{"type":"asyncStorage.mutation","payload":{"action":"clear","data":"~~~ undefined ~~~"}}`,
			stream: "async_storage", typ: "async_storage_mutation", payload: `{"action":"clear"}`},
		{name: "async storage multiSet",
			frame:  `{"type":"asyncStorage.mutation","payload":{"action":"multiSet","data":{"pairs":[["a","1"]]}}}`,
			stream: "async_storage", typ: "async_storage_mutation", payload: `{"action":"multiSet","pairs":[["a","1"]]}`},
		{name: "async storage data not an object",
			frame:  `{"type":"asyncStorage.mutation","payload":{"action":"odd","data":[1]}}`,
			stream: "async_storage", typ: "async_storage_mutation", payload: `{"action":"odd","data":[1]}`},
		{name: "async storage without action", frame: `{"type":"asyncStorage.mutation","payload":{"data":{}}}`, wantErrorHas: "asyncStorage.mutation action: missing"},
		{name: "benchmark",
			frame:  `{"type":"benchmark.report","payload":{"title":"t","steps":[{"title":"t","time":"~~~ zero ~~~"}]}}`,
			stream: "timeline", typ: "benchmark.report", payload: `{"title":"t","steps":[{"title":"t","time":0}]}`},
		{name: "a type nobody knows", frame: `{"type":"saga.task.complete"}`, stream: "timeline", typ: "saga.task.complete", payload: `null`},
		{name: "client.intro", frame: `{"type":"client.intro","payload":{}}`, notAnEvent: true},
		{name: "state.values.response", frame: `{"type":"state.values.response","payload":{}}`, notAnEvent: true},
		{name: "state.keys.response", frame: `{"type":"state.keys.response","payload":{}}`, notAnEvent: true},
		{name: "state.backup.response", frame: `{"type":"state.backup.response","payload":{}}`, notAnEvent: true},
		{name: "customCommand.register", frame: `{"type":"customCommand.register","payload":{}}`, notAnEvent: true},
		{name: "customCommand.unregister", frame: `{"type":"customCommand.unregister","payload":{}}`, notAnEvent: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := parseReactotronFrame([]byte(tt.frame))
			if err != nil {
				t.Fatalf("parseReactotronFrame: %v", err)
			}
			ev, ok, err := translateReactotron(f)
			if tt.wantErrorHas != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErrorHas) || !errors.Is(err, errReactotronMessage) {
					t.Fatalf("translateReactotron error = %v, want one saying %q", err, tt.wantErrorHas)
				}
				return
			}
			if err != nil {
				t.Fatalf("translateReactotron: %v", err)
			}
			if ok == tt.notAnEvent {
				t.Fatalf("translateReactotron ok = %v, want %v", ok, !tt.notAnEvent)
			}
			if tt.notAnEvent {
				return
			}
			if ev.Stream != tt.stream || ev.Type != tt.typ {
				t.Errorf("event %s/%s, want %s/%s", ev.Stream, ev.Type, tt.stream, tt.typ)
			}
			if string(ev.Payload) != tt.payload {
				t.Errorf("payload\n got %s\nwant %s", ev.Payload, tt.payload)
			}
		})
	}
}

func TestTranslateReactotronTime(t *testing.T) {
	f, err := parseReactotronFrame([]byte(`{"type":"display","date":"2026-11-23T10:32:48.978Z"}`))
	if err != nil {
		t.Fatal(err)
	}
	ev, _, err := translateReactotron(f)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 23, 10, 32, 48, 978e6, time.UTC); !ev.Time.Equal(want) {
		t.Errorf("Time = %v, want %v", ev.Time, want)
	}
}

func TestParseReactotronIntro(t *testing.T) {
	payload, err := decodeReactotronValue([]byte(`{"environment":"development","reactotronLibraryName":"reactotron-react-native","reactotronLibraryVersion":"5.1.14","platform":"android","platformVersion":34,"osRelease":"~~~ undefined ~~~","model":"Pixel 8","serverHost":"localhost:8081","forceTouch":"~~~ false ~~~","systemName":"~~~ null ~~~","reactNativeVersion":"0.74.1","name":"ShopApp","clientId":"~~~ null ~~~","reactotronCoreClientVersion":"2.10.0"}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := parseReactotronIntro(payload)
	if err != nil {
		t.Fatal(err)
	}
	want := reactotronIntro{Name: "ShopApp", Environment: "development", Platform: "android", PlatformVersion: "34",
		Model: "Pixel 8", ReactNativeVersion: "0.74.1", LibraryName: "reactotron-react-native", LibraryVersion: "5.1.14",
		CoreClientVersion: "2.10.0", Fields: payload}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("parseReactotronIntro (-want +got):\n%s", diff)
	}
	// The core client's default getClientId resolves to "", React Native's
	// to null when nothing is stored: both mean "send setClientId".
	for _, in := range []string{`{"clientId":"~~~ empty string ~~~"}`, `{"clientId":"~~~ null ~~~"}`, `{"clientId":"~~~ undefined ~~~"}`, `{}`} {
		payload, err := decodeReactotronValue([]byte(in))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := parseReactotronIntro(payload); err != nil || got.ClientID != "" {
			t.Errorf("parseReactotronIntro(%s) ClientID = %q, %v; want \"\"", in, got.ClientID, err)
		}
	}
	for _, tt := range []struct{ in, want string }{
		{`[]`, "client.intro payload: want an object, got array"},
		{`{"name":{}}`, "client.intro name: want a string, got object"},
		{`{"clientId":true}`, "client.intro clientId: want a string, got boolean"},
	} {
		if _, err := parseReactotronIntro(json.RawMessage(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseReactotronIntro(%s) error = %v, want one saying %q", tt.in, err, tt.want)
		}
	}
}

func TestParseReactotronResponses(t *testing.T) {
	t.Run("values", func(t *testing.T) {
		for _, tt := range []struct {
			in   string
			want reactotronValuesResponse
		}{
			{`{"path":"cart.total","value":15.5,"valid":true}`, reactotronValuesResponse{Path: "cart.total", Value: json.RawMessage(`15.5`), Valid: true}},
			{`{"path":"cart.nothere","valid":true}`, reactotronValuesResponse{Path: "cart.nothere", Valid: true}},
			{`{"path":null,"value":null,"valid":false}`, reactotronValuesResponse{Value: json.RawMessage(`null`)}},
		} {
			got, err := parseReactotronValuesResponse(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("%s: %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.in, diff)
			}
		}
		if _, err := parseReactotronValuesResponse(json.RawMessage(`{"path":1}`)); err == nil || !strings.Contains(err.Error(), "state.values.response path: want a string, got number") {
			t.Errorf("path of the wrong type: error = %v", err)
		}
		if _, err := parseReactotronValuesResponse(json.RawMessage(`{"valid":"yes"}`)); err == nil || !strings.Contains(err.Error(), "state.values.response valid: want a boolean, got string") {
			t.Errorf("valid of the wrong type: error = %v", err)
		}
	})
	t.Run("keys", func(t *testing.T) {
		for _, tt := range []struct {
			in   string
			want reactotronKeysResponse
		}{
			{`{"path":"settings","keys":["theme","beta"],"valid":true}`, reactotronKeysResponse{Path: "settings", Keys: []string{"theme", "beta"}, Valid: true}},
			{`{"path":null,"keys":[],"valid":true}`, reactotronKeysResponse{Keys: []string{}, Valid: true}},
			{`{"path":"settings.theme","valid":true}`, reactotronKeysResponse{Path: "settings.theme", Valid: true}},
			// reactotron-redux's answer to a state.values.request without a path
			{`{"path":null,"keys":{"cart":{"total":0}},"valid":true}`, reactotronKeysResponse{State: json.RawMessage(`{"cart":{"total":0}}`), Valid: true}},
		} {
			got, err := parseReactotronKeysResponse(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("%s: %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.in, diff)
			}
		}
		for _, tt := range []struct{ in, want string }{
			{`{"keys":[1]}`, "state.keys.response keys: want an array of strings"},
			{`{"keys":"a"}`, "state.keys.response keys: want an array or object, got string"},
			{`null`, "state.keys.response payload: want an object, got null"},
		} {
			if _, err := parseReactotronKeysResponse(json.RawMessage(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: error = %v, want one saying %q", tt.in, err, tt.want)
			}
		}
	})
	t.Run("backup", func(t *testing.T) {
		got, err := parseReactotronBackup(json.RawMessage(`{"state":{"a":1}}`))
		if err != nil || string(got) != `{"a":1}` {
			t.Errorf("parseReactotronBackup = %s, %v; want {\"a\":1}", got, err)
		}
		if _, err := parseReactotronBackup(json.RawMessage(`{}`)); err == nil || !strings.Contains(err.Error(), "state.backup.response state: missing") {
			t.Errorf("backup without state: error = %v", err)
		}
	})
	t.Run("commands", func(t *testing.T) {
		for _, tt := range []struct {
			in   string
			want reactotronCommand
		}{
			{`{"id":5,"command":"login","title":"Log in as","args":[{"name":"user","type":"string"}]}`,
				reactotronCommand{ID: 5, Command: "login", Title: "Log in as", Args: []reactotronCommandArg{{Name: "user", Type: "string"}}}},
			{`{"id":6,"command":"ping"}`, reactotronCommand{ID: 6, Command: "ping"}},
			{`{"command":"ping","title":null,"args":null}`, reactotronCommand{Command: "ping"}},
		} {
			got, err := parseReactotronCommand(json.RawMessage(tt.in))
			if err != nil {
				t.Fatalf("%s: %v", tt.in, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s (-want +got):\n%s", tt.in, diff)
			}
		}
		for _, tt := range []struct{ in, want string }{
			{`{"id":1}`, "customCommand command: missing"},
			{`{"command":3}`, "customCommand command: want a string, got number"},
			{`{"command":"c","id":"1"}`, "customCommand id: want a number, got string"},
			{`{"command":"c","id":1.5}`, "customCommand id: want an integer, got 1.5"},
			{`{"command":"c","args":[{"name":1}]}`, "customCommand args: want an array of {name, type}"},
			{`{"command":"c","args":[{"type":"string"}]}`, "customCommand args[0].name: empty"},
		} {
			if _, err := parseReactotronCommand(json.RawMessage(tt.in)); err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%s: error = %v, want one saying %q", tt.in, err, tt.want)
			}
		}
	})
}
