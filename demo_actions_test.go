package main

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDemoDispatch(t *testing.T) {
	a := newDemoTestApp(1, 0)
	var res struct {
		Seq int64 `json:"seq"`
	}
	demoMustCall(t, a, "state.dispatch", `{"action":{"type":"cart/addItem","payload":{"sku":"C-3","qty":3}}}`, &res)
	var ev demoTestQuery
	demoMustCall(t, a, "events.query", `{"stream":"redux","limit":1,"event_type":"action_dispatched"}`, &ev)
	if len(ev.Events) != 1 || ev.Events[0].Seq != res.Seq || !strings.Contains(string(ev.Events[0].Payload), `"sku":"C-3"`) {
		t.Errorf("state.dispatch answered seq %d; newest action %+v", res.Seq, ev.Events)
	}
	a.mu.Lock()
	cart := a.redux.Cart
	a.mu.Unlock()
	if len(cart.Items) != 1 || cart.Items[0].Qty != 3 || cart.Total != 3*cart.Items[0].Price {
		t.Errorf("cart after cart/addItem: %+v", cart)
	}

	// An action no reducer knows is recorded and changes nothing, as in Redux.
	var before, after struct{ State json.RawMessage }
	demoMustCall(t, a, "snapshot.get", `{"stream":"redux"}`, &before)
	demoMustCall(t, a, "state.dispatch", `{"action":{"type":"analytics/ping"}}`, &res)
	demoMustCall(t, a, "snapshot.get", `{"stream":"redux"}`, &after)
	if string(before.State) != string(after.State) {
		t.Error("an unknown action changed the state")
	}

	for _, params := range []string{``, `{}`, `{"action":"cart/clear"}`, `{"action":{}}`, `{"action":{"type":""}}`, `{"action":{"type":7}}`} {
		if _, werr := demoCall(t, a, "state.dispatch", params); werr == nil || werr.Code != demoCodeInvalidParams {
			t.Errorf("state.dispatch %s: %v, want INVALID_PARAMS", params, werr)
		}
	}
}

func TestDemoCommands(t *testing.T) {
	a := newDemoTestApp(1, 0)
	var list struct {
		Commands []demoCommand `json:"commands"`
	}
	demoMustCall(t, a, "commands.list", `{}`, &list)
	var names []string
	for _, c := range list.Commands {
		names = append(names, c.Command)
	}
	if strings.Join(names, ",") != "clearCart,logout,simulateOffline" || len(list.Commands[2].Args) != 1 {
		t.Errorf("commands: %+v", list.Commands)
	}

	demoMustCall(t, a, "state.dispatch", `{"action":{"type":"cart/addItem","payload":{"sku":"A-1"}}}`, &struct{}{})
	var run struct {
		Result map[string]any `json:"result"`
	}
	demoMustCall(t, a, "commands.run", `{"command":"clearCart","args":{}}`, &run)
	if run.Result["removedItems"] != 1.0 {
		t.Errorf("clearCart: %v", run.Result)
	}
	demoMustCall(t, a, "commands.run", `{"command":"logout"}`, &run)
	a.mu.Lock()
	status, items, authKeys := a.redux.Auth.Status, len(a.redux.Cart.Items), len(a.mmkv["auth"])
	a.mu.Unlock()
	if status != "anonymous" || items != 0 || authKeys != 0 {
		t.Errorf("after clearCart and logout: status %q, %d items, %d auth keys", status, items, authKeys)
	}

	demoMustCall(t, a, "commands.run", `{"command":"simulateOffline","args":{"offline":true}}`, &run)
	var net demoTestQuery
	demoMustCall(t, a, "events.query", `{"stream":"network","limit":1}`, &net)
	if len(net.Events) != 1 || !strings.Contains(string(net.Events[0].Payload), `"status":null`) {
		t.Errorf("the request after simulateOffline: %+v", net.Events)
	}
	demoMustCall(t, a, "commands.run", `{"command":"simulateOffline","args":{"offline":false}}`, &run)
	if run.Result["offline"] != false {
		t.Errorf("back online: %v", run.Result)
	}

	for _, params := range []string{`{}`, `{"command":"selfDestruct"}`, `{"command":"clearCart","args":[]}`,
		`{"command":"simulateOffline","args":{"offline":"yes"}}`} {
		if _, werr := demoCall(t, a, "commands.run", params); werr == nil || werr.Code != demoCodeInvalidParams {
			t.Errorf("commands.run %s: %v, want INVALID_PARAMS", params, werr)
		}
	}
}
