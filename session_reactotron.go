package main

// session_reactotron.go is what a Reactotron session keeps beyond events:
// the MMKV keys observed (a Reactotron app tells no MMKV snapshot) and the
// custom commands the app registered.

import (
	"bytes"
	"encoding/json"
	"slices"
	"time"
)

// maxObservedMMKVKeys bounds the MMKV keys a session remembers per instance.
const maxObservedMMKVKeys = 4096

// observeMMKV remembers a mutation's effect on the MMKV keys seen so far.
func (s *session) observeMMKV(payload json.RawMessage) {
	var m struct {
		Instance, Key, Op string
		Value             json.RawMessage
	}
	if json.Unmarshal(payload, &m) != nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.mmkvObserved == nil {
		s.mmkvObserved = map[string]map[string]json.RawMessage{}
	}
	keys := s.mmkvObserved[m.Instance]
	if keys == nil {
		if len(s.mmkvObserved) >= maxWireInstances {
			return
		}
		keys = map[string]json.RawMessage{}
		s.mmkvObserved[m.Instance] = keys
	}
	switch m.Op {
	case "set":
		if _, ok := keys[m.Key]; ok || len(keys) < maxObservedMMKVKeys {
			keys[m.Key] = bytes.Clone(m.Value)
		}
	case "delete":
		delete(keys, m.Key)
	case "clear":
		clear(keys)
	}
	if i, ok := s.streamIndex["mmkv"]; ok && !slices.Contains(s.info.Streams[i].Instances, m.Instance) {
		s.info.Streams[i].Instances = append(s.info.Streams[i].Instances, m.Instance)
	}
}

// observedMMKV is the MMKV snapshot of a Reactotron session: the keys
// observed since the session began, in the wire protocol's mmkv_snapshot
// shape, each instance marked observedOnly.
func (s *session) observedMMKV() json.RawMessage {
	s.mu.Lock()
	defer s.mu.Unlock()
	state := map[string]any{}
	for name, keys := range s.mmkvObserved {
		size := 0
		for k, v := range keys {
			size += len(k) + len(v)
		}
		state[name] = map[string]any{"keys": keys, "totalSize": size, "observedOnly": true}
	}
	var seq int64
	if i, ok := s.streamIndex["mmkv"]; ok {
		seq = s.info.Streams[i].LatestSeq
	}
	body, _ := json.Marshal(map[string]any{"seq": seq, "timestamp": time.Now().UTC().Format(timeFormat), "state": state})
	return body
}

// registerCommand records a custom command the app announced, or forgets
// one it withdrew. Fast Refresh announces every command again: a command is
// kept once, by name.
func (s *session) registerCommand(cmd reactotronCommand, register bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands = slices.DeleteFunc(s.commands, func(raw json.RawMessage) bool {
		var c struct{ Command string }
		return json.Unmarshal(raw, &c) == nil && c.Command == cmd.Command
	})
	if !register || len(s.commands) >= maxReactotronCommands {
		return
	}
	// Members in the order commands.list has always written them: by name.
	raw, _ := json.Marshal(struct {
		Args        []reactotronCommandArg `json:"args,omitempty"`
		Command     string                 `json:"command"`
		Description string                 `json:"description,omitempty"`
		Title       string                 `json:"title,omitempty"`
	}{cmd.Args, cmd.Command, cmd.Description, cmd.Title})
	s.commands = append(s.commands, raw)
}

// maxReactotronCommands bounds the commands recorded per session.
const maxReactotronCommands = 256
