package main

// demo_actions.go lets an agent act on the simulated shop through the
// optional requests of the wire protocol: state.dispatch runs a Redux
// action through the shop's reducers, and commands.list / commands.run
// offer what a developer would wire up for debugging (clearCart, logout,
// simulateOffline).

import (
	"encoding/json"
	"fmt"
	"slices"
)

type demoCommandArg struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

type demoCommand struct {
	Command     string           `json:"command"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Args        []demoCommandArg `json:"args,omitempty"`
}

var demoCommands = []demoCommand{
	{Command: "clearCart", Title: "Clear cart", Description: "Empties the cart and its saved copy in MMKV."},
	{Command: "logout", Title: "Log out", Description: "Signs the user out and clears the auth storage."},
	{Command: "simulateOffline", Title: "Simulate offline", Description: "Makes every request fail without a response (offline true), or restores the network.",
		Args: []demoCommandArg{{Name: "offline", Type: "boolean"}}},
}

func (a *demoApp) dispatchRequest(p demoParams) (any, *wireError) {
	const method = "state.dispatch"
	actionRaw, werr := p.get("action", true)
	if werr != nil {
		return nil, werr
	}
	action, err := demoObject(actionRaw)
	typ, isString := wireString(action["type"])
	if err != nil || !isString || typ == "" {
		return nil, demoInvalidParams(method, "action", "must be an object with a non-empty string type")
	}
	var payload map[string]json.RawMessage
	_ = json.Unmarshal(action["payload"], &payload)
	var seq int64
	a.mutate(func() {
		seq = a.dispatchExternalLocked(typ, action["payload"], payload)
	})
	return map[string]int64{"seq": seq}, nil
}

// dispatchExternalLocked runs an action from outside the app through the
// reducers the shop has and returns the seq of its action_dispatched event.
func (a *demoApp) dispatchExternalLocked(typ string, rawPayload json.RawMessage, p map[string]json.RawMessage) int64 {
	n := len(a.outbox)
	// Unknown types change nothing, as in Redux, yet a non-nil reduce marks
	// the store changed (dispatchLocked), as the demo always has.
	reduce := func(*demoReduxState) {}
	switch typ {
	case "cart/clear":
		reduce = func(s *demoReduxState) { s.Cart.Items, s.Cart.Total = []demoCartItem{}, 0 }
	case "cart/addItem", "cart/setQuantity", "cart/removeItem":
		qty := 0 // removeItem: quantity 0
		if typ != "cart/removeItem" && (json.Unmarshal(p["qty"], &qty) != nil || qty < 0) {
			qty = 1
		}
		sku := demoStr(p, "sku")
		if i := slices.IndexFunc(demoProducts, func(p demoProduct) bool { return p.SKU == sku }); i >= 0 {
			prod := demoProducts[i]
			reduce = func(s *demoReduxState) { s.Cart.setQty(prod, qty, typ == "cart/addItem") }
		}
	case "ui/setTheme":
		if theme := demoStr(p, "theme"); theme != "" {
			reduce = func(s *demoReduxState) { s.UI.Theme = theme }
		}
	case "ui/showToast":
		if msg := demoStr(p, "message"); msg != "" {
			a.toastID++
			toast := demoToast{ID: a.toastID, Message: msg, Kind: "info"}
			reduce = func(s *demoReduxState) { s.UI.Toasts = append(s.UI.Toasts, toast) }
		}
	case "auth/logout":
		reduce = func(s *demoReduxState) { s.Auth = demoAuthState{Status: "anonymous"} }
	}
	var payload any
	if len(rawPayload) > 0 {
		payload = rawPayload
	}
	a.dispatchLocked(typ, payload, reduce)
	seq := a.reduxStream.seq
	switch typ {
	case "cart/clear", "cart/addItem", "cart/setQuantity", "cart/removeItem":
		a.persistCartLocked()
	case "auth/logout":
		a.mmkvLocked("auth", "clear", "", nil)
	}
	a.trafficLocked(a.outbox[n:])
	return seq
}

// setQty sets (or, with add, raises) the quantity of a product in the
// cart, and the total; quantity 0 removes it.
func (c *demoCartState) setQty(p demoProduct, qty int, add bool) {
	out := make([]demoCartItem, 0, len(c.Items)+1)
	found := false
	for _, it := range c.Items {
		if it.SKU == p.SKU {
			found = true
			if add {
				it.Qty += qty
			} else {
				it.Qty = qty
			}
		}
		if it.Qty > 0 {
			out = append(out, it)
		}
	}
	if !found && qty > 0 {
		out = append(out, demoCartItem{SKU: p.SKU, Name: p.Name, Qty: qty, Price: p.Price})
	}
	c.Items, c.Total = out, demoCartTotal(out)
}

func (a *demoApp) runCommandRequest(p demoParams) (any, *wireError) {
	const method = "commands.run"
	command, _, werr := p.str("command", true)
	if werr != nil {
		return nil, werr
	}
	args := map[string]json.RawMessage{}
	if v, _ := p.get("args", false); v != nil {
		if args, _ = demoObject(v); args == nil {
			return nil, demoInvalidParams(method, "args", "must be an object")
		}
	}
	var result any
	switch command {
	case "clearCart":
		a.mutate(func() {
			n := len(a.redux.Cart.Items)
			a.dispatchExternalLocked("cart/clear", nil, nil)
			result = map[string]int{"removedItems": n}
		})
	case "logout":
		a.mutate(func() {
			was := a.redux.Auth.Status
			a.dispatchExternalLocked("auth/logout", nil, nil)
			result = map[string]string{"status": "anonymous", "was": was}
		})
	case "simulateOffline":
		offline := true
		if v, ok := args["offline"]; ok && json.Unmarshal(v, &offline) != nil {
			return nil, demoInvalidParams(method, "args.offline", "must be a boolean")
		}
		a.mutate(func() {
			a.traffic.offline = offline
			if offline {
				a.logLocked("warn", "[net] offline: requests will fail (simulateOffline)", "")
				a.recommendationsLocked()
			} else {
				a.logLocked("info", "[net] back online", "")
			}
			result = map[string]bool{"offline": offline}
		})
	default:
		names := make([]string, len(demoCommands))
		for i, c := range demoCommands {
			names[i] = c.Command
		}
		return nil, &wireError{Code: demoCodeInvalidParams, Message: fmt.Sprintf("%s: unknown command %q", method, command),
			Details: map[string]any{"param": "command", "commands": names}}
	}
	return map[string]any{"result": result}, nil
}
