package main

// Named stores: what reactotron-plugin-zustand 2.0.9 (and any plugin that
// speaks state.values.change) sends, read into {store name: state}.
//
//   - state.backup.request is answered with an array [{path: <store name>,
//     value: <state>}] (reactotron-redux and reactotron-mst answer with an
//     object, the one store's state). Functions are left out of a backup.
//   - state.values.subscribe {paths: [names]} makes the plugin send
//     state.values.change {changes: [{path, value}]} at once and after every
//     change of a named store, each time with every subscribed store's
//     state. Functions stay in these, encoded as "~~~ name() ~~~". "*"
//     subscribes every store (only the bridge's intro probe asks for it,
//     once: rtron_storeprobe.go). An empty list unsubscribes, answered by a change
//     with no entries.
//   - state.values.request and state.keys.request are never answered.
//
// Jotai-style plugins push state.values.change unasked; it is read the same
// way. A change's path names a store; its value is that store's whole state.

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
)

// maxStoreNames bounds the store names one connection subscribes to.
const maxStoreNames = 256

type reactotronStoreValue struct {
	Name  string
	Value json.RawMessage // normalised: see normaliseStoreValue
}

// parseReactotronStoreList reads the [{path, value}] of an array-shaped
// backup or of a state.values.change's changes.
func parseReactotronStoreList(what string, list json.RawMessage) ([]reactotronStoreValue, error) {
	if k := rawKind(list); k != "array" {
		return nil, fmt.Errorf("%w: %s: want an array of {path, value}, got %s", errReactotronMessage, what, k)
	}
	var entries []struct {
		Path  *string         `json:"path"`
		Value json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(list, &entries); err != nil {
		return nil, fmt.Errorf("%w: %s: want an array of {path, value} with a string path", errReactotronMessage, what)
	}
	out := make([]reactotronStoreValue, 0, len(entries))
	for i, e := range entries {
		if e.Path == nil {
			return nil, fmt.Errorf("%w: %s[%d].path: missing", errReactotronMessage, what, i)
		}
		if e.Value == nil {
			// undefined: no store of that name. reactotron-redux answers a
			// subscription so for a name its state lacks.
			continue
		}
		if len(out) >= maxStoreNames {
			break
		}
		out = append(out, reactotronStoreValue{Name: *e.Path, Value: normaliseStoreValue(e.Value)})
	}
	return out, nil
}

func parseReactotronValuesChange(payload json.RawMessage) ([]reactotronStoreValue, error) {
	changes, err := reactotronRequiredMember("state.values.change", payload, "changes")
	if err != nil {
		return nil, err
	}
	return parseReactotronStoreList("state.values.change changes", changes)
}

// reactotronFunctionText is how decodeReactotronValue writes a function.
var reactotronFunctionText = regexp.MustCompile(`^\[function( [^\]]*)?\]$`)

// normaliseStoreValue drops the functions a store holds (object members
// and array elements), as a backup does, so that a backup and a change of
// the same state are equal and diffs between them do not flap.
func normaliseStoreValue(v json.RawMessage) json.RawMessage {
	dec := json.NewDecoder(bytes.NewReader(v))
	dec.UseNumber() // numbers stay as written
	var x any
	if dec.Decode(&x) != nil {
		return v
	}
	out, err := reactotronMarshal(dropFunctions(x))
	if err != nil {
		return v
	}
	return out
}

func isFunctionText(x any) bool {
	s, ok := x.(string)
	return ok && reactotronFunctionText.MatchString(s)
}

func dropFunctions(x any) any {
	switch v := x.(type) {
	case map[string]any:
		maps.DeleteFunc(v, func(_ string, e any) bool { return isFunctionText(e) })
		for k, e := range v {
			v[k] = dropFunctions(e)
		}
	case []any:
		v = slices.DeleteFunc(v, isFunctionText)
		for i, e := range v {
			v[i] = dropFunctions(e)
		}
		return v
	}
	return x
}
