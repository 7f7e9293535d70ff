package main

// What reactotron-mst 3.1.12 sends: every action of a tracked tree as
// state.action.complete
// {name: "todos.0.toggle()", action: {name, path, args}, mst: {id, parentId,
// rootId, type, modelType, alive, root, protected}, ms}. action has no
// `type`: the path is the node's JSON pointer ("" for the root, "/todos/0")
// and name the action's name. modelType is the serialised MST type of the
// tracked root, of which only its name tells anything. A dispatch is
// {name, path, args} too, applied with MST's applyAction; an action that
// is not of that shape is ignored by the plugin, so no completion comes.
// Backups, values and keys requests are answered as reactotron-redux does.
// Any other plugin whose actions are {name, path, args} without a type is
// taken for the same kind of state library.

import "encoding/json"

// reactotronMSTDetails keeps the plugin's mst details with modelType
// reduced to the type's name; nil when there are none.
func reactotronMSTDetails(mst json.RawMessage) json.RawMessage {
	if rawKind(mst) != "object" {
		return nil
	}
	var out jsonObject
	_ = eachMember(mst, func(name string, value []byte) bool {
		if name == "modelType" {
			if n := rawMember(value, "name"); rawKind(n) == "string" {
				value = n
			} else if rawKind(value) != "string" {
				return true
			}
		}
		out.raw(name, value)
		return true
	})
	return out.close()
}

// isMSTAction reports whether action is shaped as MST names one:
// {name, path?, args?} with a string name.
func isMSTAction(action json.RawMessage) bool {
	return rawKind(rawMember(action, "name")) == "string"
}

// reactotronActionName is the name a state.action.complete gives its
// action when it says more than the type: reactotron-redux names an action
// by its type, MST by path and name ("todos.0.toggle()").
func reactotronActionName(name, action json.RawMessage) string {
	var s string
	if rawKind(name) != "string" || json.Unmarshal(name, &s) != nil {
		return ""
	}
	if typ := rawMember(action, "type"); rawKind(typ) == "string" && string(typ) == string(name) {
		return ""
	}
	return s
}
