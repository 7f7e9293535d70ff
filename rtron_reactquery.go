package main

// What reactotron-react-query 2.0.2 sends, and the react_query events it
// becomes. The plugin subscribes to TanStack Query's query and mutation
// caches and forwards their notifications in three disguises:
//
//   - display {name: <type><queryHash>, value: <the whole Query object>}
//     for the query cache's added, removed, observerAdded and
//     observerRemoved (it drops updated and observerOptionsUpdated). The
//     Query object carries options, observers (each a serialised
//     QueryObserver), queryKey, queryHash and state.
//   - an unrequested state.values.response {path: "React Query
//     (observerResultsUpdated) <queryHash>", value: <query.state>} for
//     observerResultsUpdated: the only message that carries a query's new
//     state after a fetch.
//   - state.action.complete {name: "mutation", action: {type, mutation}} for
//     the mutation cache's added, updated and removed (it drops the
//     observer notifications). The Mutation object carries mutationId,
//     options (with mutationKey) and state {status, variables, data, error,
//     failureCount, submittedAt, …}.
//
// queryHash is TanStack's JSON text of the query key (object keys sorted),
// so the key is read back from it when a message carries only the hash.
// An Error thrown by a query or mutation function arrives as {}: the
// client's serialiser keeps no message of it.

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strings"
)

// reactQueryValuesPrefix starts the path of the plugin's unrequested
// state.values.response.
const reactQueryValuesPrefix = "React Query ("

// reactQueryDisplayTypes maps the query cache notifications the plugin
// sends as display messages to event types.
var reactQueryDisplayTypes = map[string]string{
	"observerAdded":          "observer_added",
	"observerRemoved":        "observer_removed",
	"observerResultsUpdated": "query_updated",
	"added":                  "query_added",
	"removed":                "query_removed",
	"updated":                "query_updated",
}

// reactQueryState is the part of a query's state that events carry. A
// member the app left out is nil, which encodes as null: every event has
// every field.
type reactQueryState struct {
	Status         json.RawMessage `json:"status"`
	FetchStatus    json.RawMessage `json:"fetchStatus"`
	Data           json.RawMessage `json:"data"`
	Error          json.RawMessage `json:"error"`
	DataUpdatedAt  json.RawMessage `json:"dataUpdatedAt"`
	ErrorUpdatedAt json.RawMessage `json:"errorUpdatedAt"`
	IsInvalidated  json.RawMessage `json:"isInvalidated"`
}

type reactQueryEvent struct {
	QueryHash string          `json:"queryHash"`
	QueryKey  json.RawMessage `json:"queryKey"`
	reactQueryState
	ObserverCount *int `json:"observerCount,omitempty"` // when the message says (query_updated does not)
}

type reactQueryMutationEvent struct {
	MutationID  json.RawMessage `json:"mutationId"`
	MutationKey json.RawMessage `json:"mutationKey,omitempty"`
	reactQueryMutationState
}

// reactQueryMutationState is the part of a mutation's state events carry.
type reactQueryMutationState struct {
	Status       json.RawMessage `json:"status"`
	Variables    json.RawMessage `json:"variables"`
	Data         json.RawMessage `json:"data"`
	Error        json.RawMessage `json:"error"`
	FailureCount json.RawMessage `json:"failureCount"`
	SubmittedAt  json.RawMessage `json:"submittedAt"`
}

// reactQueryFromValues recognises the plugin's unrequested values response;
// ok is false for any other (an answer to the server's request).
func reactQueryFromValues(payload json.RawMessage) (typ string, ev json.RawMessage, ok bool, err error) {
	r, err := parseReactotronValuesResponse(payload)
	if err != nil || !strings.HasPrefix(r.Path, reactQueryValuesPrefix) {
		return "", nil, false, nil
	}
	notification, hash, found := strings.Cut(strings.TrimPrefix(r.Path, reactQueryValuesPrefix), ") ")
	if !found || hash == "" {
		return "", nil, true, fmt.Errorf("%w: React Query values path %q: want \"React Query (<type>) <queryHash>\"", errReactotronMessage, r.Path)
	}
	typ = cmp.Or(reactQueryEventType(notification+hash, hash), "query_updated")
	ev, err = reactotronMarshal(reactQueryEvent{QueryHash: hash, QueryKey: reactQueryKey(hash, nil), reactQueryState: readReactQueryState(r.Value)})
	return typ, ev, true, err
}

// reactQueryFromDisplay recognises the plugin's display message for a
// query cache notification.
func reactQueryFromDisplay(payload json.RawMessage) (typ string, ev json.RawMessage, ok bool) {
	name, value, ok := reactotronDisplay(payload)
	if !ok {
		return "", nil, false
	}
	var q struct {
		QueryHash *string           `json:"queryHash"`
		QueryKey  json.RawMessage   `json:"queryKey"`
		State     json.RawMessage   `json:"state"`
		Observers []json.RawMessage `json:"observers"`
	}
	if json.Unmarshal(value, &q) != nil || q.QueryHash == nil {
		return "", nil, false
	}
	if typ = reactQueryEventType(name, *q.QueryHash); typ == "" {
		return "", nil, false
	}
	n := len(q.Observers)
	ev, err := reactotronMarshal(reactQueryEvent{QueryHash: *q.QueryHash, QueryKey: reactQueryKey(*q.QueryHash, q.QueryKey),
		reactQueryState: readReactQueryState(q.State), ObserverCount: &n})
	return typ, ev, err == nil
}

// reactQueryFromAction recognises the plugin's mutation notification in a
// state.action.complete.
func reactQueryFromAction(payload json.RawMessage) (typ string, ev json.RawMessage, ok bool, err error) {
	var p struct {
		Name   string `json:"name"`
		Action struct {
			Type     string          `json:"type"`
			Mutation json.RawMessage `json:"mutation"`
		} `json:"action"`
	}
	if rawKind(payload) != "object" || json.Unmarshal(payload, &p) != nil || p.Name != "mutation" || rawKind(p.Action.Mutation) != "object" {
		return "", nil, false, nil
	}
	switch p.Action.Type {
	case "added", "updated", "removed":
		typ = "mutation_" + p.Action.Type
	default:
		return "", nil, true, fmt.Errorf("%w: React Query mutation type: want added, updated or removed, got %q", errReactotronMessage, p.Action.Type)
	}
	var m struct {
		MutationID json.RawMessage `json:"mutationId"`
		Options    struct {
			MutationKey json.RawMessage `json:"mutationKey"`
		} `json:"options"`
		State reactQueryMutationState `json:"state"`
	}
	if err := json.Unmarshal(p.Action.Mutation, &m); err != nil {
		return "", nil, true, fmt.Errorf("%w: React Query mutation: want {mutationId, options, state}", errReactotronMessage)
	}
	ev, err = reactotronMarshal(reactQueryMutationEvent{
		MutationID: m.MutationID, MutationKey: m.Options.MutationKey,
		reactQueryMutationState: m.State,
	})
	return typ, ev, true, err
}

// reactQueryKey is the query's key: as sent, else read back from its hash,
// else the hash itself.
func reactQueryKey(hash string, key json.RawMessage) json.RawMessage {
	if key != nil && rawKind(key) != "null" {
		return key
	}
	if json.Valid([]byte(hash)) {
		if v, err := decodeReactotronValue([]byte(hash)); err == nil {
			return v
		}
	}
	return appendJSONString(nil, hash, false)
}

// reactQueryEventType is the event type of the notification called
// <notification><queryHash>; "" for one the plugin does not send.
func reactQueryEventType(name, hash string) string {
	if notification, ok := strings.CutSuffix(name, hash); ok {
		return reactQueryDisplayTypes[notification]
	}
	return ""
}

// readReactQueryState reads the state of a query; a state that is not an
// object reads as empty.
func readReactQueryState(v json.RawMessage) (st reactQueryState) {
	if rawKind(v) == "object" {
		_ = json.Unmarshal(v, &st)
	}
	return st
}
