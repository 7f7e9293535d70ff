package main

// What a Reactotron client's messages mean: the stream event each one
// becomes (see rtron_protocol.go for the protocol), and the payloads that answer
// the server's requests or describe the app, which are not events.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// bridgedEvent is the stream event one Reactotron message becomes. The
// bridge numbers and buffers it; Time is the frame's Date.
type bridgedEvent struct {
	Stream, Type string
	Payload      json.RawMessage
	Time         time.Time
}

// reactotronMMKVInstance names the instance of every MMKV mutation: the
// plugin does not say which storage changed.
const reactotronMMKVInstance = "default"

// translateReactotron maps one client message to at most one stream event;
// ok is false for the messages that are not events (client.intro, the
// answers to state requests, custom command announcements), which have
// their own parse functions below. The mapping:
//
//	state.action.complete  redux action_dispatched {action, name?, mst?, durationMs?, diff?}
//	                       (a React Query mutation: react_query, rtron_reactquery.go)
//	state.values.response  an answer, not an event (unless React Query's, as above)
//	log                    console log {level, message, stack?, important?}
//	api.response           network http_request {method, url, status, durationMs,
//	                       request: {headers, params, body}, response: {headers, body}}
//	display named "MMKV"   mmkv mmkv_mutation {instance, key, op, value?}
//	display of React Query react_query query_* and observer_* (rtron_reactquery.go)
//	asyncStorage.mutation  async_storage async_storage_mutation {action, …data}
//	anything else          timeline <message type>, the payload as sent
//
// diff is reactotron-redux's microdiff in debug_diff_snapshots' shape
// [{path, type, oldValue?, newValue?}]. level is Reactotron's: debug (log,
// logImportant and debug), warn or error; important is there when the app
// marked the message so. The MMKV plugin reports a deleted key, and a key
// holding no string, as the string "undefined": both become op "delete".
func translateReactotron(f reactotronFrame) (ev bridgedEvent, ok bool, err error) {
	ev = bridgedEvent{Stream: "timeline", Type: f.Type, Payload: f.Payload, Time: f.Date}
	switch f.Type {
	case "client.intro", "state.keys.response", "state.backup.response", "state.values.change",
		"customCommand.register", "customCommand.unregister":
		return bridgedEvent{}, false, nil
	case "state.values.response":
		typ, p, isQuery, qerr := reactQueryFromValues(f.Payload)
		if !isQuery {
			return bridgedEvent{}, false, nil
		}
		ev.Stream, ev.Type, ev.Payload, err = "react_query", typ, p, qerr
	case "state.action.complete":
		if typ, p, isMutation, merr := reactQueryFromAction(f.Payload); isMutation {
			ev.Stream, ev.Type, ev.Payload, err = "react_query", typ, p, merr
			break
		}
		ev.Stream, ev.Type = "redux", "action_dispatched"
		ev.Payload, err = reactotronActionEvent(f.Payload)
	case "log":
		ev.Stream, ev.Type = "console", "log"
		ev.Payload, err = reactotronLogEvent(f.Payload, f.Important)
	case "api.response":
		ev.Stream, ev.Type = "network", "http_request"
		ev.Payload, err = reactotronHTTPEvent(f.Payload)
	case "asyncStorage.mutation":
		ev.Stream, ev.Type = "async_storage", "async_storage_mutation"
		ev.Payload, err = reactotronAsyncStorageEvent(f.Payload)
	case "display":
		if p, isMMKV := reactotronMMKVEvent(f.Payload); isMMKV {
			ev.Stream, ev.Type, ev.Payload = "mmkv", "mmkv_mutation", p
		} else if typ, p, isQuery := reactQueryFromDisplay(f.Payload); isQuery {
			ev.Stream, ev.Type, ev.Payload = "react_query", typ, p
		}
	}
	if err != nil {
		return bridgedEvent{}, false, err
	}
	return ev, true, nil
}

func reactotronMembers(what string, payload json.RawMessage) (map[string]json.RawMessage, error) {
	m := map[string]json.RawMessage{}
	err := reactotronEachPayloadMember(what, payload, func(name string, value json.RawMessage) error {
		m[name] = value
		return nil
	})
	return m, err
}

// reactotronMarshal encodes an event payload, leaving HTML characters as they are.
func reactotronMarshal(v any) (json.RawMessage, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

func reactotronActionEvent(payload json.RawMessage) (json.RawMessage, error) {
	m, err := reactotronMembers("state.action.complete", payload)
	if err != nil {
		return nil, err
	}
	action, ok := m["action"]
	if !ok {
		return nil, fmt.Errorf("%w: state.action.complete action: missing", errReactotronMessage)
	}
	ev := struct {
		Action     json.RawMessage `json:"action"`
		Name       string          `json:"name,omitempty"`
		MST        json.RawMessage `json:"mst,omitempty"`
		DurationMs json.RawMessage `json:"durationMs,omitempty"`
		Diff       []change        `json:"diff,omitempty"`
	}{Action: action, Name: reactotronActionName(m["name"], action), MST: reactotronMSTDetails(m["mst"])}
	if ms := m["ms"]; rawKind(ms) == "number" {
		ev.DurationMs = ms
	}
	if d := m["diff"]; d != nil && rawKind(d) != "null" {
		if ev.Diff, err = reactotronDiff(d); err != nil {
			return nil, err
		}
	}
	return reactotronMarshal(ev)
}

var microdiffTypes = map[string]string{"CREATE": changeAdded, "REMOVE": changeRemoved, "CHANGE": changeChanged}

// reactotronDiff converts microdiff's [{type, path, value?, oldValue?}],
// whose paths list keys as strings and array indexes as numbers.
func reactotronDiff(d json.RawMessage) ([]change, error) {
	var entries []struct {
		Type     string            `json:"type"`
		Path     []json.RawMessage `json:"path"`
		Value    json.RawMessage   `json:"value"`
		OldValue json.RawMessage   `json:"oldValue"`
	}
	if err := json.Unmarshal(d, &entries); err != nil {
		return nil, fmt.Errorf("%w: state.action.complete diff: want an array of {type, path, value?, oldValue?}", errReactotronMessage)
	}
	changes := make([]change, 0, len(entries))
	for i, e := range entries {
		segs := make([]pathSegment, len(e.Path))
		for j, p := range e.Path {
			switch rawKind(p) {
			case "number":
				n, err := strconv.ParseUint(string(p), 10, 31)
				if err != nil {
					return nil, fmt.Errorf("%w: state.action.complete diff[%d].path[%d]: %s is not an array index", errReactotronMessage, i, j, p)
				}
				segs[j] = pathSegment{Key: strconv.FormatUint(n, 10)}
			case "string":
				var key string
				_ = json.Unmarshal(p, &key) // valid: decodeReactotronValue wrote it
				segs[j] = pathSegment{Key: key, Quoted: isCanonicalDecimal(key)}
			default:
				return nil, fmt.Errorf("%w: state.action.complete diff[%d].path[%d]: want a string or number, got %s", errReactotronMessage, i, j, rawKind(p))
			}
		}
		typ, ok := microdiffTypes[e.Type]
		if !ok {
			return nil, fmt.Errorf("%w: state.action.complete diff[%d].type: want CREATE, REMOVE or CHANGE, got %q", errReactotronMessage, i, e.Type)
		}
		// A nil value encodes as null.
		changes = append(changes, change{Path: formatPath(segs), Type: typ, OldValue: e.OldValue, NewValue: e.Value})
	}
	return changes, nil
}

func reactotronLogEvent(payload json.RawMessage, important bool) (json.RawMessage, error) {
	m, err := reactotronMembers("log", payload)
	level, levelErr := reactotronWantString("log level", m["level"], true)
	if err := cmp.Or(err, levelErr); err != nil {
		return nil, err
	}
	ev := struct {
		Level     string `json:"level"`
		Message   string `json:"message"`
		Stack     string `json:"stack,omitempty"`
		Important bool   `json:"important,omitempty"`
	}{Level: cmp.Or(level, "debug"), Message: reactotronLogText(m["message"]), Stack: reactotronStack(m["stack"]), Important: important}
	return reactotronMarshal(ev)
}

// reactotronLogText is a log's message as Reactotron's desktop app shows
// it. client.log("msg", {n: 1}) sends its arguments as one array, which the
// desktop lists one by one, never as an array, so the text joins them as a
// console prints them. (client.log(["a", "b"]) sends the same array and the
// desktop shows it the same way.)
func reactotronLogText(v json.RawMessage) string {
	if rawKind(v) != "array" {
		return reactotronText(v)
	}
	var parts []string
	_ = eachElement(v, func(_ int, e []byte) bool {
		parts = append(parts, reactotronText(e))
		return true
	})
	return strings.Join(parts, " ")
}

// reactotronText gives a string value itself and any other value its JSON
// text; nothing gives "".
func reactotronText(v json.RawMessage) string {
	switch rawKind(v) {
	case "nothing":
		return ""
	case "string":
		var s string
		_ = json.Unmarshal(v, &s)
		return s
	}
	return string(v)
}

// reactotronStack writes an error's stack as text: Error.stack is already
// text; trackGlobalErrors sends frames {fileName, functionName, lineNumber,
// columnNumber?}, read and written one a line as every frame is
// (stack_frame.go: "at fn (file:line:col)", columns from 1).
func reactotronStack(v json.RawMessage) string {
	switch rawKind(v) {
	case "null":
		return ""
	case "array":
	default:
		return reactotronText(v)
	}
	var lines []string
	_ = eachElement(v, func(_ int, item []byte) bool {
		if f, ok := readFrameValue(item); ok && rawKind(item) == "object" {
			lines = append(lines, f.text())
		} else {
			lines = append(lines, reactotronText(item))
		}
		return true
	})
	return strings.Join(lines, "\n")
}

func reactotronHTTPEvent(payload json.RawMessage) (json.RawMessage, error) {
	number := func(name string, v json.RawMessage) (json.RawMessage, error) {
		switch k := rawKind(v); k {
		case "number":
			return v, nil
		case "nothing", "null":
			return json.RawMessage("null"), nil
		default:
			return nil, fmt.Errorf("%w: api.response %s: want a number, got %s", errReactotronMessage, name, k)
		}
	}
	// Every read works on what a failed one before it left (a missing
	// member reads as nothing): the first error is the one to report.
	m, err := reactotronMembers("api.response", payload)
	req, reqErr := reactotronOptionalObject("api.response request", m["request"])
	resp, respErr := reactotronOptionalObject("api.response response", m["response"])
	method, methodErr := reactotronWantString("api.response request.method", req["method"], true)
	url, urlErr := reactotronWantString("api.response request.url", req["url"], true)
	status, statusErr := number("response.status", resp["status"])
	duration, durationErr := number("duration", m["duration"])
	if err := cmp.Or(err, reqErr, respErr, methodErr, urlErr, statusErr, durationErr); err != nil {
		return nil, err
	}
	// An absent member is nil, which encodes as null.
	type request struct {
		Headers json.RawMessage `json:"headers"`
		Params  json.RawMessage `json:"params"`
		Body    json.RawMessage `json:"body"`
	}
	type response struct {
		Headers json.RawMessage `json:"headers"`
		Body    json.RawMessage `json:"body"`
	}
	return reactotronMarshal(struct {
		Method     string          `json:"method"`
		URL        string          `json:"url"`
		Status     json.RawMessage `json:"status"`
		DurationMs json.RawMessage `json:"durationMs"`
		Request    request         `json:"request"`
		Response   response        `json:"response"`
	}{
		Method: method, URL: url, Status: status, DurationMs: duration,
		Request:  request{Headers: req["headers"], Params: req["params"], Body: req["data"]},
		Response: response{Headers: resp["headers"], Body: resp["body"]},
	})
}

func reactotronOptionalObject(what string, v json.RawMessage) (map[string]json.RawMessage, error) {
	if k := rawKind(v); k == "nothing" || k == "null" {
		return map[string]json.RawMessage{}, nil
	}
	return reactotronMembers(what, v)
}

// reactotronAsyncStorageEvent flattens {action, data}: the members of data
// (key, value, keys, pairs) follow action; data that is not an object stays
// under "data".
func reactotronAsyncStorageEvent(payload json.RawMessage) (json.RawMessage, error) {
	m, err := reactotronMembers("asyncStorage.mutation", payload)
	action, actionErr := reactotronWantString("asyncStorage.mutation action", m["action"], true)
	if err = cmp.Or(err, actionErr); err != nil {
		return nil, err
	}
	if action == "" {
		return nil, fmt.Errorf("%w: asyncStorage.mutation action: missing", errReactotronMessage)
	}
	var out jsonObject
	out.raw("action", appendJSONString(nil, action, false))
	switch data := m["data"]; rawKind(data) {
	case "nothing", "null":
	case "object":
		err = reactotronEachMember(data, func(name string, value json.RawMessage) error {
			if name != "action" {
				out.raw(name, value)
			}
			return nil
		})
	default:
		out.raw("data", data)
	}
	return out.close(), err
}

// reactotronMMKVEvent recognises the MMKV plugin's display message
// {name: "MMKV", value: {key, value}}.
func reactotronMMKVEvent(payload json.RawMessage) (json.RawMessage, bool) {
	name, value, ok := reactotronDisplay(payload)
	if !ok || name != "MMKV" {
		return nil, false
	}
	var kv struct {
		Key   *string         `json:"key"`
		Value json.RawMessage `json:"value"`
	}
	if json.Unmarshal(value, &kv) != nil || kv.Key == nil {
		return nil, false
	}
	ev := struct {
		Instance string          `json:"instance"`
		Key      string          `json:"key"`
		Op       string          `json:"op"`
		Value    json.RawMessage `json:"value,omitempty"`
	}{Instance: reactotronMMKVInstance, Key: *kv.Key, Op: "set", Value: kv.Value}
	if kv.Value == nil || string(kv.Value) == `"undefined"` {
		ev.Op, ev.Value = "delete", nil
	}
	p, err := reactotronMarshal(ev)
	return p, err == nil
}

// reactotronDisplay reads a display message {name, value} whose value is
// an object.
func reactotronDisplay(payload json.RawMessage) (name string, value json.RawMessage, ok bool) {
	var d struct {
		Name  string          `json:"name"`
		Value json.RawMessage `json:"value"`
	}
	if rawKind(payload) != "object" || json.Unmarshal(payload, &d) != nil || rawKind(d.Value) != "object" {
		return "", nil, false
	}
	return d.Name, d.Value, true
}

// reactotronEachPayloadMember is reactotronEachMember for a payload, which must be an object.
func reactotronEachPayloadMember(what string, payload json.RawMessage, fn func(name string, value json.RawMessage) error) error {
	if k := rawKind(payload); k != "object" {
		return fmt.Errorf("%w: %s payload: want an object, got %s", errReactotronMessage, what, k)
	}
	return reactotronEachMember(payload, fn)
}

func reactotronWantBool(name string, value json.RawMessage) (bool, error) {
	if k := rawKind(value); k != "boolean" {
		return false, fmt.Errorf("%w: %s: want a boolean, got %s", errReactotronMessage, name, k)
	}
	return string(value) == "true", nil
}
