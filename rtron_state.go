package main

// What a Reactotron connection learns of the app's state plugins, and how
// it feeds their data to the session: TanStack Query's cache (react_query),
// named stores (stores), Redux or MobX-State-Tree (redux).
//
// Reactotron requests carry no id and plugins answer only what they know:
// reactotron-plugin-zustand answers a backup but no values or keys
// request, reactotron-react-query answers no request at all. So the
// connection notes which kinds of plugin have spoken, and a request no
// plugin of the app can answer fails at once (errNoStatePlugin) instead of
// waiting for REQUEST_TIMEOUT. No state read is sent before the app has
// shown a store (rtron_storeprobe.go), whose probe also learns the stores of
// a plugin of named stores; the bridge subscribes to those by name
// (rtron_subscribe.go).

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"
)

// Kinds of state plugin a Reactotron app can have.
const (
	statePluginRedux      = "redux"       // answers backups with an object, and values and keys requests
	statePluginMST        = "mst"         // redux, with actions {name, path, args}
	statePluginStores     = "stores"      // answers backups with [{path, value}]; pushes state.values.change
	statePluginReactQuery = "react_query" // sends TanStack Query's cache notifications
)

// reactotronStateSink is what the bridge needs of a session to keep the
// state plugins' data. from is the connection (see reactotronSession).
type reactotronStateSink interface {
	// keepQueryEvent records a react_query event and applies it to the
	// query cache the session keeps.
	keepQueryEvent(from any, typ string, at time.Time, payload json.RawMessage)
	// queryCacheSnapshot answers snapshot.get for react_query from the
	// cache, recording it as a cache_snapshot event when it changed since
	// the last one.
	queryCacheSnapshot(from any) (json.RawMessage, error)
	// keepStores merges named stores into those held and records the
	// result as a stores_snapshot event; it returns every store name held.
	keepStores(from any, at time.Time, stores []reactotronStoreValue) []string
	// noteStatePlugin records that a plugin of kind has spoken.
	noteStatePlugin(kind string)
	// statePlugins lists the kinds of plugin that have spoken, sorted.
	statePlugins() []string
}

// errNoStatePlugin is a request that no state plugin of the app answers.
type errNoStatePlugin struct {
	Stream  string   // the stream asked for
	Plugins []string // the kinds of state plugin the app has shown
}

func (e *errNoStatePlugin) Error() string {
	return "no state plugin of the app answers for stream " + e.Stream + " (it has: " + strings.Join(e.Plugins, ", ") + ")"
}

// canAnswerRedux reports whether a Redux read may be sent to the app:
// false once the app has shown state plugins and none of them is Redux-like.
func canAnswerRedux(plugins []string) bool {
	if len(plugins) == 0 {
		return true // nothing known yet: ask
	}
	return slices.Contains(plugins, statePluginRedux) || slices.Contains(plugins, statePluginMST)
}

// handleState handles the state plugins' messages; it reports false for
// a message that is not theirs.
func (c *reactotronConn) handleState(sink reactotronStateSink, f reactotronFrame) bool {
	switch f.Type {
	case "state.backup.response":
		state, err := parseReactotronBackup(f.Payload)
		if err != nil {
			c.warnUnreadable(f.Type, err)
			return true
		}
		if rawKind(state) != "array" {
			c.noteReduxStore(sink)
			c.deliver(backupKey, reactotronAnswer{value: state})
			return true
		}
		stores, err := parseReactotronStoreList("state.backup.response state", state)
		if err != nil {
			c.warnUnreadable(f.Type, err)
			return true
		}
		sink.noteStatePlugin(statePluginStores)
		c.keepStores(sink, f, stores)
		if !canAnswerRedux(sink.statePlugins()) {
			c.deliver(backupKey, reactotronAnswer{missing: true})
		}
		return true
	case "state.values.change":
		c.noteSubscriptionAnswer(sink, f.Payload)
		stores, err := parseReactotronValuesChange(f.Payload)
		if err != nil {
			c.warnUnreadable(f.Type, err)
			return true
		}
		// A whole Redux state the probe brought is no store of a name.
		stores = slices.DeleteFunc(stores, func(s reactotronStoreValue) bool { return isProbePath(s.Name) })
		if stores = c.ourStores(stores); len(stores) > 0 {
			sink.noteStatePlugin(statePluginStores)
			c.keepStores(sink, f, stores)
		}
		return true
	case "state.values.response", "state.keys.response":
		if r, err := parseReactotronValuesResponse(f.Payload); err == nil && strings.HasPrefix(r.Path, reactQueryValuesPrefix) {
			c.keepEvent(sink, f)
			return true
		}
		c.noteReduxStore(sink)
		return false
	case "state.action.complete":
		if _, _, isMutation, _ := reactQueryFromAction(f.Payload); isMutation {
			return c.keepEvent(sink, f)
		}
		c.noteReduxStore(sink)
		action := rawMember(f.Payload, "action")
		if rawMember(f.Payload, "mst") != nil || (isMSTAction(action) && rawMember(action, "type") == nil) {
			sink.noteStatePlugin(statePluginMST)
		}
		return false // an action event like any other
	case "display":
		return c.keepEvent(sink, f)
	}
	return false
}

// keepEvent hands a react_query event to the session; it reports false for
// a message that is not one.
func (c *reactotronConn) keepEvent(sink reactotronStateSink, f reactotronFrame) bool {
	ev, ok, err := translateReactotron(f)
	if err != nil {
		c.warnUnreadable(f.Type, err)
		return true
	}
	if !ok || ev.Stream != "react_query" {
		return false
	}
	sink.noteStatePlugin(statePluginReactQuery)
	sink.keepQueryEvent(c, ev.Type, cmpTime(ev.Time), ev.Payload)
	return true
}

// keepStores records stores and subscribes to any store not yet named,
// joined with the desktop app's subscription (rtron_subscribe.go).
func (c *reactotronConn) keepStores(sink reactotronStateSink, f reactotronFrame, stores []reactotronStoreValue) {
	names := slices.DeleteFunc(sink.keepStores(c, cmpTime(f.Date), stores), func(n string) bool { return !bridgeSubscribable(n) })
	c.mu.Lock()
	fresh := !slices.Equal(names, c.subscribed) && len(names) > 0
	if fresh {
		c.subscribed = names
	}
	c.mu.Unlock()
	if !fresh {
		return
	}
	c.writeMu.Lock()
	err := c.writeSubscriptionLocked(context.Background())
	c.writeMu.Unlock()
	if err != nil {
		c.bridge.logger.Debug("could not subscribe to the app's stores", "remote", c.remote, "err", err)
	}
}

func (c *reactotronConn) warnUnreadable(typ string, err error) {
	c.bridge.logger.Warn("ignoring unreadable Reactotron message", "remote", c.remote, "type", typ, "err", err)
}

// cmpTime is t, or now when t is zero.
func cmpTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Now()
	}
	return t
}

func noReduxPlugin(sink reactotronStateSink) error {
	return &errNoStatePlugin{Stream: "redux", Plugins: sink.statePlugins()}
}

// reactotronSubscribe sets the paths whose changes the client reports.
func reactotronSubscribe(paths []string) []byte {
	payload := []byte(`{"paths":[`)
	for i, p := range paths {
		if i > 0 {
			payload = append(payload, ',')
		}
		payload = appendJSONString(payload, p, false)
	}
	return reactotronServerFrame("state.values.subscribe", append(payload, "]}"...))
}
