package main

import (
	"context"
	"encoding/json"
	"time"
)

// rtron_requests.go is what a Reactotron session asks its app: the whole
// state (state.backup.request), the value at a path (state.values.request),
// dispatches and custom commands, matched to answers as rtron_asks.go says.

// reactotronAnswer is what the client sent back for a request: the value,
// or missing when the app had nothing at the path, or, for a backup, when
// it answered with named stores only (handleState).
type reactotronAnswer struct {
	value   json.RawMessage
	missing bool
}

// Keys under which answers are matched to the requests waiting for them.
func valuesKey(path string) string { return "values:" + path }

func keysKey(path string) string { return "keys:" + path }

const backupKey = "backup"

// deliver hands an answer to the oldest request waiting for it; never to
// a request of the desktop app's (rtron_desktop.go), which may head the
// queue when a backup's second answer comes (backupAnswers).
func (c *reactotronConn) deliver(key string, a reactotronAnswer) {
	c.mu.Lock()
	list := c.waiters[key]
	var w chan reactotronAnswer
	if len(list) > 0 && (c.relay == nil || !c.relay.ownsLocked(list[0])) {
		w = list[0]
		c.dropWaiterLocked(key, w)
	}
	c.mu.Unlock()
	if w == nil {
		c.bridge.logger.Debug("dropping an unrequested Reactotron answer", "remote", c.remote, "key", key)
		return
	}
	w <- a
}

// maxReactotronWaiters bounds the requests waiting on one connection.
const maxReactotronWaiters = 256

// request answers what the session asks in Reactotron's terms: the Redux
// state or a value in it from the app (reduxSnapshot), the MMKV keys
// observed so far; everything else from the session's buffers.
func (c *reactotronConn) request(ctx context.Context, method string, params any) (json.RawMessage, error) {
	switch p := params.(type) {
	case dispatchParams:
		frame, err := reactotronDispatch(p.Action)
		if err != nil {
			return nil, &reactotronBadActionError{Argument: "action", Problem: err.Error()}
		}
		// Not before a store exists (rtron_storeprobe.go); apps whose plugins
		// keep no Redux state (TanStack Query's refetch by dispatch) get it now.
		if s := c.attached(); s != nil && canAnswerRedux(s.statePlugins()) {
			if err := c.awaitStore(ctx, "redux", "state.action.dispatch"); err != nil {
				return nil, err
			}
		}
		return c.tell(ctx, frame)
	case runCommandParams:
		frame, err := reactotronRunCommand(p.Command, p.Args)
		if err != nil {
			return nil, &reactotronBadActionError{Argument: "command", Problem: err.Error()}
		}
		return c.tell(ctx, frame)
	}
	p, ok := params.(snapshotParams)
	if method != "snapshot.get" || !ok || p.Seq != 0 {
		return nil, errAnswerLocally
	}
	s := c.attached()
	switch {
	case s == nil:
		return nil, errAnswerLocally
	case p.Stream == "mmkv":
		return s.observedMMKV(), nil
	case p.Stream == "react_query":
		// From the cache the session keeps; a path is then resolved by the
		// session in that snapshot.
		if answer, err := s.queryCacheSnapshot(c); err == nil && p.Path == nil {
			return answer, nil
		}
		return nil, errAnswerLocally
	case p.Stream != "redux":
		return nil, errAnswerLocally
	}
	return c.reduxSnapshot(ctx, s, p)
}

// reduxSnapshot asks the app for its Redux state, or for the value at
// p.Path when it names one, and records the whole state as a
// state_snapshot event, so that snapshots can be diffed.
func (c *reactotronConn) reduxSnapshot(ctx context.Context, s reactotronSession, p snapshotParams) (json.RawMessage, error) {
	if !canAnswerRedux(s.statePlugins()) {
		return nil, noReduxPlugin(s)
	}
	if err := c.awaitStore(ctx, "redux", "snapshot.get"); err != nil {
		return nil, err
	}
	if p.Path != nil {
		if answer, err := c.valueAt(ctx, s, p.Path); answer != nil || err != nil {
			return answer, err
		}
	}
	a, err := c.ask(ctx, "state.backup.request", reactotronAsk{key: backupKey, frame: reactotronBackupRequest()})
	if err == nil && a.missing {
		err = noReduxPlugin(s)
	}
	if err != nil {
		return nil, err
	}
	var payload jsonObject
	payload.raw("state", a.value)
	event := s.appendEvent(c, "redux", "state_snapshot", time.Now(), payload.close())
	if event == nil {
		return nil, &errNotConnected{Reason: linkReasonReplaced}
	}
	answer := snapshotAnswer(event)
	if p.Path == nil {
		return answer, nil
	}
	// valueAt gave nothing: slice the whole state, which also tells what exists.
	segs := pathFromWire(p.Path)
	value, miss, err := resolveRaw(a.value, segs)
	if err != nil {
		return nil, malformedAnswer("state.backup.request", "state is not valid JSON")
	}
	if miss != nil {
		return nil, notFound(formatPath(segs), miss)
	}
	var o jsonObject
	o.raw("seq", rawMember(event, "seq"))
	o.raw("timestamp", rawMember(event, "timestamp"))
	o.raw("state", value)
	return o.close(), nil
}

// tell sends a message Reactotron does not answer (a dispatch, a custom
// command); its effects arrive as events. The answer is an empty object.
func (c *reactotronConn) tell(ctx context.Context, frame []byte) (json.RawMessage, error) {
	if err := c.send(ctx, frame); err != nil {
		return nil, errReactotronGone
	}
	return json.RawMessage("{}"), nil
}

// valueAt asks for the value at path with state.values.request, so only
// that value crosses the network. It answers nil, nil when the caller
// should fall back to the whole state: Reactotron cannot name the path, or
// the app had nothing there.
func (c *reactotronConn) valueAt(ctx context.Context, s reactotronSession, path []any) (json.RawMessage, error) {
	dotted, err := reactotronPath(pathFromWire(path))
	if err != nil || dotted == "" {
		return nil, nil
	}
	a, err := c.askValue(ctx, dotted)
	if err != nil || a.missing {
		return nil, err
	}
	var o jsonObject
	o.value("seq", s.latestSeq("redux"))
	o.value("timestamp", time.Now().UTC().Format(timeFormat))
	o.raw("state", a.value)
	return o.close(), nil
}
