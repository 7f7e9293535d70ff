package main

// Words for what the state plugins of an app can and cannot answer, and the
// actions of state libraries that name actions instead of typing them
// (MobX-State-Tree and libraries like it).

import (
	"encoding/json"
	"fmt"
	"strings"
)

// namedAction reports whether action is a {name, path, args} action that
// the session's state library takes.
func namedAction(s *session, action json.RawMessage) bool {
	return s != nil && isMSTAction(action) && s.takesNamedActions()
}

// namedActionPath is the path of a named action, "" (the root) when absent.
func namedActionPath(action json.RawMessage) string {
	p, _ := wireString(rawMember(action, "path"))
	return p
}

// sameAction reports whether a recorded action is the one dispatched: by
// type, or for a named action by name and path.
func sameAction(recorded, dispatched json.RawMessage) bool {
	if typ, ok := wireString(rawMember(dispatched, "type")); ok && typ != "" {
		got, _ := wireString(rawMember(recorded, "type"))
		return got == typ
	}
	name, _ := wireString(rawMember(dispatched, "name"))
	got, _ := wireString(rawMember(recorded, "name"))
	return got == name && namedActionPath(recorded) == namedActionPath(dispatched)
}

// stateStreams says where each kind of state plugin puts its state.
var stateStreams = map[string]string{
	statePluginStores:     "stores (named stores, e.g. Zustand)",
	statePluginReactQuery: "react_query (TanStack Query's cache)",
}

// noStoreError words a state read or dispatch asked of a Reactotron app
// that has no store yet (errors.go's table calls it): nothing was sent to
// the app, which reactotron-redux would have thrown on.
func noStoreError(e *errNoStore) *toolError {
	te := newToolError(codeStreamUnavailable, map[string]any{"stream": e.Stream, "noStoreYet": true},
		"the app has no store yet: reactotron-redux has no Redux store, or reactotron-mst tracks no tree, so stream %q has no state to read", e.Stream)
	te.Suggestion = "Create the store in the app (createStore with Reactotron.createEnhancer(), or Reactotron.setReduxStore(store)), " +
		"or call Reactotron.trackMstNode(rootStore), then ask again: the first read after that answers with it."
	return te
}

// noStatePluginError words a read none of the app's state plugins can answer,
// pointing at the streams holding its state (errors.go's table calls it).
func noStatePluginError(e *errNoStatePlugin) *toolError {
	var streams []string
	for _, p := range e.Plugins {
		if s, ok := stateStreams[p]; ok {
			streams = append(streams, s)
		}
	}
	te := newToolError(codeStreamUnavailable, map[string]any{"stream": e.Stream, "statePlugins": e.Plugins},
		"stream %q cannot be read: none of the app's Reactotron state plugins (%s) keeps a Redux or MobX-State-Tree state",
		e.Stream, strings.Join(e.Plugins, ", "))
	if len(streams) > 0 {
		te.Suggestion = fmt.Sprintf("Read the app's state from stream %s with debug_get_snapshot.", strings.Join(streams, " or "))
	}
	return te
}
