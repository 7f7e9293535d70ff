package main

// What a session keeps of its app's state plugins beyond events: the kinds
// of plugin that have spoken (so that nothing waits for a request no plugin
// answers), TanStack Query's cache as the react_query events built it, and
// the named stores (Zustand and the like). The Reactotron bridge feeds it
// through reactotronStateSink.

import (
	"encoding/json"
	"maps"
	"slices"
	"time"
)

// Bounds on what one session keeps of its plugins.
const (
	maxKeptQueries   = 1024
	maxKeptMutations = 256
)

// keptState is guarded by session.mu.
type keptState struct {
	plugins   []string // kinds of state plugin that have spoken, sorted
	queries   map[string]*keptQuery
	mutations map[string]json.RawMessage // by mutationId: the last mutation event's payload
	version   int64                      // bumped by every change of queries or mutations
	// snapshotVersion is version when the last cache_snapshot was recorded,
	// snapshotAnswer that snapshot as snapshot.get answers it.
	snapshotVersion int64
	snapshotAnswer  json.RawMessage
	stores          map[string]json.RawMessage
}

// keptQuery is one query of the cache snapshot.
type keptQuery struct {
	QueryKey json.RawMessage `json:"queryKey"`
	reactQueryState
	ObserverCount int `json:"observerCount"`
}

func (s *session) keptLocked() *keptState {
	if s.kept == nil {
		s.kept = &keptState{queries: map[string]*keptQuery{}, mutations: map[string]json.RawMessage{}, stores: map[string]json.RawMessage{}}
	}
	return s.kept
}

func (s *session) noteStatePlugin(kind string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keptLocked()
	if i, found := slices.BinarySearch(k.plugins, kind); !found {
		k.plugins = slices.Insert(k.plugins, i, kind)
	}
}

func (s *session) statePlugins() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.kept == nil {
		return nil
	}
	return slices.Clone(s.kept.plugins)
}

// takesNamedActions reports whether the app's state library dispatches
// {name, path, args} (MobX-State-Tree and libraries like it) rather than {type}.
func (s *session) takesNamedActions() bool {
	return slices.Contains(s.statePlugins(), statePluginMST)
}

// keepQueryEvent records a react_query event and applies it to the cache.
func (s *session) keepQueryEvent(from any, typ string, at time.Time, payload json.RawMessage) {
	feed, _ := from.(sessionFeed)
	if s.appendEvent(feed, "react_query", typ, at, payload) == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	k := s.keptLocked()
	var m reactQueryMutationEvent
	var q reactQueryEvent
	switch typ {
	case "mutation_added", "mutation_updated", "mutation_removed":
		if json.Unmarshal(payload, &m) != nil {
			return
		}
		if id := string(m.MutationID); typ == "mutation_removed" {
			delete(k.mutations, id)
		} else if _, ok := k.mutations[id]; ok || len(k.mutations) < maxKeptMutations {
			k.mutations[id] = payload
		}
	case "query_removed":
		if json.Unmarshal(payload, &q) != nil {
			return
		}
		delete(k.queries, q.QueryHash)
	default:
		if json.Unmarshal(payload, &q) != nil || q.QueryHash == "" {
			return
		}
		entry := k.queries[q.QueryHash]
		if entry == nil {
			if len(k.queries) >= maxKeptQueries {
				return
			}
			entry = &keptQuery{}
			k.queries[q.QueryHash] = entry
		}
		entry.QueryKey, entry.reactQueryState = q.QueryKey, q.reactQueryState
		if q.ObserverCount != nil {
			entry.ObserverCount = *q.ObserverCount
		}
	}
	k.version++
}

// queryCacheSnapshot answers snapshot.get for react_query: the cache,
// recorded as a cache_snapshot event when it changed since the last one.
func (s *session) queryCacheSnapshot(from any) (json.RawMessage, error) {
	s.mu.Lock()
	k := s.keptLocked()
	if k.snapshotAnswer != nil && k.snapshotVersion == k.version {
		answer := k.snapshotAnswer
		s.mu.Unlock()
		return answer, nil
	}
	version := k.version
	state := map[string]any{"queries": k.queries, "mutations": k.mutations}
	body, err := reactotronMarshal(map[string]any{"state": state})
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	feed, _ := from.(sessionFeed)
	event := s.appendEvent(feed, "react_query", "cache_snapshot", time.Now(), body)
	if event == nil {
		return nil, errAnswerLocally
	}
	answer := snapshotAnswer(event)
	s.mu.Lock()
	if k.version == version {
		k.snapshotVersion, k.snapshotAnswer = version, answer
	}
	s.mu.Unlock()
	return answer, nil
}

// keepStores merges named stores into those held and, when any changed,
// records them all as a stores_snapshot event {state: {<name>: state},
// changed: [names]}. It returns the names held, sorted, without "*" and ""
// (which plugins read as "everything").
func (s *session) keepStores(from any, at time.Time, stores []reactotronStoreValue) []string {
	s.mu.Lock()
	k := s.keptLocked()
	changed := []string{}
	for _, st := range stores {
		old, ok := k.stores[st.Name]
		if !ok && len(k.stores) >= maxStoreNames {
			continue
		}
		if !ok || string(old) != string(st.Value) {
			changed = append(changed, st.Name)
		}
		k.stores[st.Name] = st.Value
	}
	state := maps.Clone(k.stores)
	s.mu.Unlock()
	names := slices.DeleteFunc(slices.Sorted(maps.Keys(state)), func(name string) bool { return name == "" || name == "*" })
	if len(changed) == 0 {
		return names // a change that changes nothing (a plugin resends every store it reports) is no event
	}
	slices.Sort(changed)
	body, err := reactotronMarshal(map[string]any{"state": state, "changed": changed})
	if err != nil {
		return names
	}
	feed, _ := from.(sessionFeed)
	s.appendEvent(feed, "stores", "stores_snapshot", at, body)
	return names
}
