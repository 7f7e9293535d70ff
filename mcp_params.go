package main

import (
	"encoding/json"
	"errors"
)

// Reading the params of MCP requests: decoded as encoding/json decodes
// them, with errors that name the member at fault and never echo much of
// the client's input.

// decodeParams decodes method params into dst; absent params decode as {}.
// Member names of method params are matched as encoding/json does; tool
// arguments, where a misspelt name must be reported, are decoded strictly in
// tool_call.go.
func decodeParams(params json.RawMessage, dst any) error {
	if params == nil {
		return nil
	}
	if err := json.Unmarshal(params, dst); err != nil {
		return rpcErrorf(errInvalidParams, nil, "invalid params: %v", describeJSONError(err))
	}
	return nil
}

// decodeRequired decodes params into p, of which *field is the member named
// member, and refuses them when that member is absent or null.
func decodeRequired[T any](params json.RawMessage, p any, member string, field **T) error {
	if err := decodeParams(params, p); err != nil {
		return err
	}
	if *field == nil {
		return rpcErrorf(errInvalidParams, nil, "invalid params: %q is required", member)
	}
	return nil
}

func describeJSONError(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		value := te.Value
		if value == "bool" {
			value = "boolean"
		}
		return "\"" + te.Field + "\" must be " + jsonTypeName(te.Type.Kind().String()) + ", not " + article(value)
	}
	return err.Error()
}

func jsonTypeName(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "struct", "map", "ptr":
		return "an object"
	case "slice", "array":
		return "an array"
	case "bool":
		return "a boolean"
	}
	return "a number"
}

func uriParam(params json.RawMessage) (string, error) {
	var p struct {
		URI *string `json:"uri"`
	}
	if err := decodeRequired(params, &p, "uri", &p.URI); err != nil {
		return "", err
	}
	return *p.URI, nil
}

// refuseCursor rejects a pagination cursor: every list fits one page, so
// the server never hands out cursors and any cursor is invalid.
func refuseCursor(params json.RawMessage) error {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	if err := decodeParams(params, &p); err != nil {
		return err
	}
	if p.Cursor != nil {
		return rpcErrorf(errInvalidParams, nil, "invalid params: unknown cursor %q; this list has a single page", *p.Cursor)
	}
	return nil
}
