package main

// metro_cdp.go is the Chrome DevTools Protocol as the Metro link speaks it:
// the only methods it ever sends, written down once, and the reader of the
// frames a page sends back. The link is read only by construction: a frame
// is built only from metroSentMethods, with no parameters, so nothing that
// runs code in the app, pauses it or changes it can go out.

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// metroKeepaliveMethod is sent now and then on an idle page: Metro's proxy
// drops debugger sockets that send nothing for a while, and WebSocket pings
// do not count. Runtime.getHeapUsage answers two numbers about the engine's
// heap; it reads none of the app's data and changes nothing.
const metroKeepaliveMethod = "Runtime.getHeapUsage"

// metroSentMethods is every CDP method the Metro link sends, each without
// parameters: Runtime.enable for console calls and uncaught exceptions,
// Network.enable for the requests of apps that report them, and
// ReactNativeApplication.enable, which tells React Native a client that
// knows it is attached. Never Runtime.evaluate, never Debugger.*:
// docs/metro.md ("Read only, by construction") lists the same methods, and
// a test holds both to what goes out.
var metroSentMethods = []string{"Runtime.enable", "Network.enable", "ReactNativeApplication.enable", metroKeepaliveMethod}

// errMetroNotAllowed is a send of a method not in metroSentMethods: a bug,
// refused before anything is written.
var errMetroNotAllowed = errors.New("not a method the Metro link sends")

// metroRequestFrame is the frame of request id for method.
func metroRequestFrame(id int64, method string) ([]byte, error) {
	if !slices.Contains(metroSentMethods, method) {
		return nil, fmt.Errorf("%w: %q", errMetroNotAllowed, method)
	}
	return fmt.Appendf(nil, `{"id":%d,"method":%s}`, id, strconv.Quote(method)), nil
}

// cdpFrame is one message a page sends: an answer {id, result|error} or an
// event {method, params}.
type cdpFrame struct {
	ID     int64 // 0 for an event
	Method string
	Params json.RawMessage
	Error  json.RawMessage // an answer's error, nil when it succeeded
}

// errCDPFrame is a frame that is not a CDP message.
var errCDPFrame = errors.New("malformed CDP frame")

// parseCDPFrame reads one frame. Member names are matched exactly; a frame
// is an event (a method and, optionally, params object) or an answer (a
// positive integer id); anything else is an errCDPFrame naming what was
// wrong.
func parseCDPFrame(data []byte) (cdpFrame, error) {
	var f cdpFrame
	if rawKind(data) != "object" {
		return f, fmt.Errorf("%w: want a JSON object", errCDPFrame)
	}
	var id json.RawMessage
	err := eachMember(data, func(name string, v []byte) bool {
		switch name {
		case "id":
			id = v
		case "method":
			f.Method, _ = wireString(v)
			if f.Method == "" {
				f.Method = "\x00" // present but not a non-empty string
			}
		case "params":
			f.Params = v
		case "error":
			f.Error = v
		}
		return true
	})
	if err != nil {
		return cdpFrame{}, fmt.Errorf("%w: %v", errCDPFrame, err)
	}
	switch {
	case f.Method == "\x00":
		return cdpFrame{}, fmt.Errorf("%w: method is not a non-empty string", errCDPFrame)
	case id != nil:
		n, ok := wireInt(id)
		if !ok || n < 1 {
			return cdpFrame{}, fmt.Errorf("%w: id is not a positive integer", errCDPFrame)
		}
		f.ID = n
		f.Method = "" // an answer; a method beside the id says nothing
	case f.Method == "":
		return cdpFrame{}, fmt.Errorf("%w: neither an id nor a method", errCDPFrame)
	case f.Params != nil && rawKind(f.Params) != "object":
		return cdpFrame{}, fmt.Errorf("%w: %s params is not an object", errCDPFrame, f.Method)
	}
	return f, nil
}

// errMetroNoState: a Metro session was asked for what Metro does not carry
// (an app's state, storage, commands). Stream is the stream asked for, ""
// when the request named none; Method the request.
type errMetroNoState struct {
	Stream, Method string
}

func (e *errMetroNoState) Error() string {
	if e.Stream != "" {
		return fmt.Sprintf("stream %q is not reachable through Metro", e.Stream)
	}
	return fmt.Sprintf("%s is not reachable through Metro", e.Method)
}
