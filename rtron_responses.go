package main

import (
	"encoding/json"
	"fmt"
)

// Reading the Reactotron messages that are not stream events: the client's
// introduction, answers to the server's state requests, and the custom
// commands an app registers.

// reactotronIntro is what a client.intro says about the app. Fields the
// client left out or sent as null are empty; a number where a string is
// expected (Android's platformVersion) is written in decimal.
type reactotronIntro struct {
	Name               string
	ClientID           string // "" when the client has none yet: send setClientId
	Environment        string
	Platform           string // "ios", "android", …
	PlatformVersion    string
	OSRelease          string
	Model              string
	SystemName         string
	ReactNativeVersion string
	LibraryName        string // reactotronLibraryName, e.g. reactotron-react-native
	LibraryVersion     string
	CoreClientVersion  string          // reactotronCoreClientVersion
	Fields             json.RawMessage // the whole decoded payload, for display
}

func parseReactotronIntro(payload json.RawMessage) (reactotronIntro, error) {
	in := reactotronIntro{Fields: payload}
	fields := map[string]*string{
		"name":                        &in.Name,
		"clientId":                    &in.ClientID,
		"environment":                 &in.Environment,
		"platform":                    &in.Platform,
		"platformVersion":             &in.PlatformVersion,
		"osRelease":                   &in.OSRelease,
		"model":                       &in.Model,
		"systemName":                  &in.SystemName,
		"reactNativeVersion":          &in.ReactNativeVersion,
		"reactotronLibraryName":       &in.LibraryName,
		"reactotronLibraryVersion":    &in.LibraryVersion,
		"reactotronCoreClientVersion": &in.CoreClientVersion,
	}
	err := reactotronEachPayloadMember("client.intro", payload, func(name string, value json.RawMessage) error {
		dst, ok := fields[name]
		if !ok {
			return nil
		}
		if rawKind(value) == "number" {
			*dst = string(value)
			return nil
		}
		s, err := reactotronWantString("client.intro "+name, value, true)
		*dst = s
		return err
	})
	return in, err
}

type reactotronValuesResponse struct {
	Path  string
	Value json.RawMessage // nil when the app had nothing at Path (undefined)
	Valid bool
}

// parseReactotronValuesResponse reads a decoded state.values.response
// payload. valid defaults to true, as the client's stateValuesResponse does.
func parseReactotronValuesResponse(payload json.RawMessage) (reactotronValuesResponse, error) {
	r := reactotronValuesResponse{Valid: true}
	err := reactotronEachPayloadMember("state.values.response", payload, func(name string, value json.RawMessage) (err error) {
		switch name {
		case "path":
			r.Path, err = reactotronWantString("state.values.response path", value, true)
		case "value":
			r.Value = value
		case "valid":
			r.Valid, err = reactotronWantBool("state.values.response valid", value)
		}
		return err
	})
	return r, err
}

// reactotronKeysResponse is a state.keys.response. State is set, and Keys
// nil, when it answers a values request without a path (rtron_protocol.go).
type reactotronKeysResponse struct {
	Path  string   // "" for the top level (the client sends null)
	Keys  []string // nil when the value at Path is not an object
	State json.RawMessage
	Valid bool
}

func parseReactotronKeysResponse(payload json.RawMessage) (reactotronKeysResponse, error) {
	r := reactotronKeysResponse{Valid: true}
	err := reactotronEachPayloadMember("state.keys.response", payload, func(name string, value json.RawMessage) (err error) {
		switch name {
		case "path":
			r.Path, err = reactotronWantString("state.keys.response path", value, true)
		case "keys":
			switch k := rawKind(value); k {
			case "object":
				r.State = value
			case "array":
				r.Keys = []string{}
				if err := json.Unmarshal(value, &r.Keys); err != nil {
					return fmt.Errorf("%w: state.keys.response keys: want an array of strings", errReactotronMessage)
				}
			case "null":
			default:
				return fmt.Errorf("%w: state.keys.response keys: want an array or object, got %s", errReactotronMessage, k)
			}
		case "valid":
			r.Valid, err = reactotronWantBool("state.keys.response valid", value)
		}
		return err
	})
	return r, err
}

// reactotronAnswerOf reads a state.values.response or state.keys.response:
// the key it is matched under (see reactotronKeysResponse) and the answer.
func reactotronAnswerOf(f reactotronFrame) (key string, a reactotronAnswer, err error) {
	switch f.Type {
	case "state.values.response":
		r, err := parseReactotronValuesResponse(f.Payload)
		return valuesKey(r.Path), reactotronAnswer{value: r.Value, missing: r.Value == nil}, err
	case "state.keys.response":
		r, err := parseReactotronKeysResponse(f.Payload)
		if r.State != nil {
			return valuesKey(""), reactotronAnswer{value: r.State}, err
		}
		keys, _ := json.Marshal(r.Keys)
		return keysKey(r.Path), reactotronAnswer{value: keys, missing: r.Keys == nil}, err
	}
	return "", reactotronAnswer{}, errReactotronMessage // not an answer
}

func parseReactotronBackup(payload json.RawMessage) (json.RawMessage, error) {
	return reactotronRequiredMember("state.backup.response", payload, "state")
}

func reactotronRequiredMember(what string, payload json.RawMessage, name string) (json.RawMessage, error) {
	m, err := reactotronMembers(what, payload)
	if err == nil && m[name] == nil {
		err = fmt.Errorf("%w: %s %s: missing", errReactotronMessage, what, name)
	}
	return m[name], err
}

// reactotronCommand is a custom command an app announced.
type reactotronCommand struct {
	ID          int64 // the client's id for this registration; 0 when not given
	Command     string
	Title       string
	Description string
	Args        []reactotronCommandArg
}

// reactotronCommandArg is one argument of a custom command. Reactotron
// knows one type, "string".
type reactotronCommandArg struct {
	Name string `json:"name"`
	Type string `json:"type"`
}

// parseReactotronCommand reads a decoded customCommand.register payload, or
// the {id, command} of a customCommand.unregister.
func parseReactotronCommand(payload json.RawMessage) (reactotronCommand, error) {
	var c reactotronCommand
	const what = "customCommand"
	err := reactotronEachPayloadMember(what, payload, func(name string, value json.RawMessage) (err error) {
		switch name {
		case "id":
			if k := rawKind(value); k == "null" {
				return nil
			} else if k != "number" {
				return fmt.Errorf("%w: %s id: want a number, got %s", errReactotronMessage, what, k)
			}
			id, ok := wireInt(value)
			if !ok {
				return fmt.Errorf("%w: %s id: want an integer, got %s", errReactotronMessage, what, value)
			}
			c.ID = id
		case "command":
			c.Command, err = reactotronWantString(what+" command", value, false)
		case "title":
			c.Title, err = reactotronWantString(what+" title", value, true)
		case "description":
			c.Description, err = reactotronWantString(what+" description", value, true)
		case "args":
			if rawKind(value) == "null" {
				return nil
			}
			if err := json.Unmarshal(value, &c.Args); err != nil {
				return fmt.Errorf("%w: %s args: want an array of {name, type} with string members", errReactotronMessage, what)
			}
			for i, a := range c.Args {
				if a.Name == "" {
					return fmt.Errorf("%w: %s args[%d].name: empty", errReactotronMessage, what, i)
				}
			}
		}
		return err
	})
	if err == nil && c.Command == "" {
		err = fmt.Errorf("%w: %s command: missing", errReactotronMessage, what)
	}
	return c, err
}
