package main

// The Reactotron bridge's protocol knowledge: how a Reactotron client's
// frames are read and decoded, and the frames a server sends back. Pure
// functions only; the listener and the sessions it feeds live elsewhere, and
// rtron_translate.go turns client messages into stream events.
//
// What the server side must do, from the sources of reactotron-core-server
// 3.2.1, reactotron-core-client 2.10.0, reactotron-redux 3.2.1,
// reactotron-react-native-mmkv 0.2.9 and reactotron-react-native's plugins
// (recorded sessions in testdata/reactotron/*.jsonl):
//
//   - Transport: one WebSocket on port 9090, path "/", no subprotocol, no
//     token. Every frame in either direction is a text frame holding one
//     JSON object (reactotron-core-server would parse a binary one too).
//     React Native's WebSocket on Android sends an Origin header of its own,
//     "http://host:port" of the URL it dialled, so an Origin check must let
//     the server's own address through. The server pings every 30 s;
//     clients answer at the WebSocket level.
//     The core client never reconnects by itself: after the server goes
//     away, an app comes back only when it reloads.
//   - Client → server envelope: {type, payload, important, date, deltaTime}.
//     The whole envelope goes through the client's serialiser (below), so
//     even important:false arrives as "~~~ false ~~~" and deltaTime 0 as
//     "~~~ zero ~~~". date is the send time (toISOString, UTC, milliseconds).
//   - Server → client envelope: exactly JSON.stringify({type, payload}),
//     nothing else.
//   - Connection flow: the client opens the socket and sends client.intro
//     first (anything sent before is queued behind it). Payload: environment,
//     the options' client block spread in (reactotron-react-native adds
//     reactotronLibraryName/Version, platform, platformVersion — a number on
//     Android —, osRelease, model, serverHost, forceTouch, interfaceIdiom,
//     systemName, uiMode, serial, androidId, reactNativeVersion, screen and
//     window sizes), name, clientId, reactotronCoreClientVersion (the
//     published 2.10.0 sends the unreplaced placeholder
//     "REACTOTRON_CORE_CLIENT_VERSION") and, when configured, mcpRedaction.
//     clientId is what getClientId resolved: "~~~ null ~~~" (React Native
//     with nothing stored), "~~~ empty string ~~~" (the core client's
//     default) or an id. Without one the server
//     generates a GUID and sends {"type":"setClientId","payload":"<id>"};
//     the client stores it and presents it on its next connection. A known
//     clientId replaces the earlier connection with that id (the server
//     closes the old socket). The server then sends
//     {"type":"state.values.subscribe","payload":{"paths":[...]}} to every
//     new connection; with no paths the client answers nothing.
//   - Requests the server may send, and what answers them (reactotron-redux):
//     state.values.request {path} → state.values.response {path, value,
//     valid:true}; value is "~~~ undefined ~~~" when the path is missing.
//     A missing or empty path is answered by state.keys.response with path
//     null and the whole state as "keys". state.keys.request {path} →
//     state.keys.response {path, keys, valid:true}: Object.keys of the
//     value, undefined when it is not an object; path null and the top-level
//     keys when the path is empty. Paths are split on "." only, array
//     indexes included ("cart.items.0"); a path through null throws inside
//     the app and no answer comes. state.backup.request {} →
//     state.backup.response {state}. state.action.dispatch {action} → the
//     app dispatches it and reports state.action.complete like any action.
//     state.restore.request {state} replaces the store (not used here).
//     custom {command, args?} (or the bare command name as payload) runs
//     every handler registered under that name; it is not answered.
//   - customCommand.register {id, command, title, description, args:
//     [{name, type:"string"}]} announces a command; registering a name
//     again (Fast Refresh does) first sends customCommand.unregister {id,
//     command} for the old id, then register with a new id.
//   - Client serialiser encodings, value by value (keys are never encoded):
//     undefined "~~~ undefined ~~~", null "~~~ null ~~~", false "~~~ false
//     ~~~", 0 and -0 "~~~ zero ~~~", "" "~~~ empty string ~~~", Infinity
//     "~~~ Infinity ~~~", -Infinity "~~~ -Infinity ~~~", a named function
//     "~~~ name() ~~~", an anonymous one "~~~ anonymous function ~~~", a
//     reference to an ancestor "~~~ Circular Reference ~~~". NaN is not
//     encoded: JSON.stringify writes it as a bare null, so a bare null can
//     only be NaN (or a symbol in an array). BigInts arrive as decimal
//     strings, Sets and Maps as arrays, Dates as ISO strings. The
//     networking plugin writes a skipped body as "~~~ skipped ~~~".
//     reactotron-core-server's repair also knows "~~~ NaN ~~~" and matches
//     case-insensitively.
//
// decodeReactotronValue (rtron_decode.go) undoes the encodings, writing
// what JSON cannot hold as text ("Infinity", "[function name]", "[x]"),
// so no encoding survives and decoding twice changes nothing.

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Bounds on one client frame. The listener's frame limit is usually lower;
// these hold for any caller.
const (
	reactotronMaxFrameBytes = 64 << 20
	reactotronMaxDepth      = 1000
)

// errReactotronMessage marks a client frame or payload the bridge cannot
// read; the wrapped text names the field.
var errReactotronMessage = errors.New("bad Reactotron message")

// reactotronFrame is one client message with its encodings decoded.
type reactotronFrame struct {
	Type      string
	Payload   json.RawMessage // decoded; "null" when absent or undefined
	Important bool
	Date      time.Time // the client's send time; zero when absent or unreadable
}

// parseReactotronFrame reads one client frame. Unknown members are ignored,
// a known member of the wrong type or given twice is an error naming it.
func parseReactotronFrame(data []byte) (reactotronFrame, error) {
	decoded, err := decodeReactotronValue(data)
	if err != nil {
		return reactotronFrame{}, err
	}
	if k := rawKind(decoded); k != "object" {
		return reactotronFrame{}, fmt.Errorf("%w: want a JSON object, got %s", errReactotronMessage, k)
	}
	var typ, payload, important, date, deltaTime json.RawMessage
	known := map[string]*json.RawMessage{"type": &typ, "payload": &payload, "important": &important, "date": &date, "deltaTime": &deltaTime}
	err = reactotronEachMember(decoded, func(name string, value json.RawMessage) error {
		switch p := known[name]; {
		case p == nil:
		case *p != nil:
			return fmt.Errorf("%w: %s: given twice", errReactotronMessage, name)
		default:
			*p = value
		}
		return nil
	})
	if err != nil {
		return reactotronFrame{}, err
	}
	f := reactotronFrame{Payload: payload, Important: string(important) == "true"}
	if f.Payload == nil {
		f.Payload = json.RawMessage("null")
	}
	if typ == nil {
		return reactotronFrame{}, fmt.Errorf("%w: type: missing", errReactotronMessage)
	}
	if f.Type, err = reactotronWantString("type", typ, false); err != nil {
		return reactotronFrame{}, err
	}
	if f.Type == "" {
		return reactotronFrame{}, fmt.Errorf("%w: type: empty", errReactotronMessage)
	}
	if k := rawKind(important); k != "boolean" && k != "null" && k != "nothing" {
		return reactotronFrame{}, fmt.Errorf("%w: important: want a boolean, got %s", errReactotronMessage, k)
	}
	if k := rawKind(deltaTime); k != "number" && k != "null" && k != "nothing" {
		return reactotronFrame{}, fmt.Errorf("%w: deltaTime: want a number, got %s", errReactotronMessage, k)
	}
	s, err := reactotronWantString("date", date, true)
	if err != nil {
		return reactotronFrame{}, err
	}
	// A date the client could not have written is no reason to lose the
	// message: the caller stamps it with the receipt time.
	f.Date, _ = time.Parse(time.RFC3339Nano, s)
	return f, nil
}

// reactotronWantString reads a JSON string; null or nothing (an absent
// member) gives "" when nullable.
func reactotronWantString(name string, value json.RawMessage, nullable bool) (string, error) {
	switch k := rawKind(value); {
	case k == "string":
		var s string
		if err := json.Unmarshal(value, &s); err != nil {
			return "", fmt.Errorf("%w: %s: %v", errReactotronMessage, name, err)
		}
		return s, nil
	case (k == "null" || k == "nothing") && nullable:
		return "", nil
	default:
		return "", fmt.Errorf("%w: %s: want a string, got %s", errReactotronMessage, name, k)
	}
}

// reactotronEachMember calls fn with each member of a JSON object that
// decodeReactotronValue produced (so it is valid and compact), in order,
// until fn fails.
func reactotronEachMember(object json.RawMessage, fn func(name string, value json.RawMessage) error) error {
	var fnErr error
	err := eachMember(object, func(name string, value []byte) bool {
		fnErr = fn(name, value)
		return fnErr == nil
	})
	if fnErr != nil {
		return fnErr
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errReactotronMessage, err)
	}
	return nil
}

// reactotronEncoding reports whether s has the form "~~~ x ~~~", and x.
func reactotronEncoding(s string) (inner string, ok bool) {
	if len(s) < 8 || !strings.HasPrefix(s, "~~~ ") || !strings.HasSuffix(s, " ~~~") {
		return "", false
	}
	return s[4 : len(s)-4], true
}

// Frames the server sends, in the envelope described above.

// reactotronSetClientID gives a client without a clientId its id.
func reactotronSetClientID(id string) []byte {
	return reactotronServerFrame("setClientId", appendJSONString(nil, id, false))
}

// reactotronValuesRequest asks for the value at a Reactotron path (keys
// joined by "."; see reactotronPath).
func reactotronValuesRequest(path string) []byte {
	return reactotronServerFrame("state.values.request", reactotronPathPayload(path))
}

// reactotronBackupRequest asks for the whole state.
func reactotronBackupRequest() []byte {
	return reactotronServerFrame("state.backup.request", []byte("{}"))
}

// reactotronDispatch asks the app to dispatch action, a JSON object.
func reactotronDispatch(action json.RawMessage) ([]byte, error) {
	action, err := compactObject(action)
	if err != nil {
		return nil, fmt.Errorf("action: %w", err)
	}
	return reactotronServerFrame("state.action.dispatch", append(append([]byte(`{"action":`), action...), '}')), nil
}

// reactotronRunCommand runs a custom command the app registered. args, when
// not nil, is a JSON object of argument values (strings, for Reactotron's
// one argument type).
func reactotronRunCommand(command string, args json.RawMessage) ([]byte, error) {
	if command == "" {
		return nil, errors.New("command: empty")
	}
	payload := appendJSONString([]byte(`{"command":`), command, false)
	if args != nil {
		args, err := compactObject(args)
		if err != nil {
			return nil, fmt.Errorf("args: %w", err)
		}
		payload = append(append(payload, `,"args":`...), args...)
	}
	return reactotronServerFrame("custom", append(payload, '}')), nil
}

// compactObject is v, which must be a JSON object, without insignificant space.
func compactObject(v json.RawMessage) (json.RawMessage, error) {
	if k := rawKind(v); k != "object" || !json.Valid(v) {
		return nil, fmt.Errorf("want a JSON object, got %s", k)
	}
	return compactJSON(v), nil
}

// reactotronPath writes a parsed path the way reactotron-redux reads one:
// keys and indexes joined by ".". A key that is empty or holds a "." cannot
// be written so.
func reactotronPath(segs []pathSegment) (string, error) {
	keys := make([]string, len(segs))
	for i, seg := range segs {
		if seg.Key == "" || strings.Contains(seg.Key, ".") {
			return "", fmt.Errorf("key %q cannot be asked of a Reactotron app: its paths split at every \".\"", seg.Key)
		}
		keys[i] = seg.Key
	}
	return strings.Join(keys, "."), nil
}

func reactotronPathPayload(path string) []byte {
	return append(appendJSONString([]byte(`{"path":`), path, false), '}')
}

func reactotronServerFrame(typ string, payload []byte) []byte {
	frame := appendJSONString([]byte(`{"type":`), typ, false)
	frame = append(frame, `,"payload":`...)
	frame = append(frame, payload...)
	return append(frame, '}')
}
