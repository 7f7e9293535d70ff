package main

// metro_console.go turns a page's Runtime events into `console` events of
// the wire protocol's shape (docs/protocol.md §3: log {level, message, stack?}),
// the shape the other links produce, so that debug_get_logs, the queries,
// resources and subscriptions read them unchanged.
//
//	Runtime.consoleAPICalled  log {level, message, stack?}: the arguments
//	                          as formatConsoleArgs writes them; the stack
//	                          for warn, error, assert and trace calls
//	Runtime.exceptionThrown   log {level: error, message: "Uncaught …", stack}

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Bounds of what one console call keeps: the characters of one argument,
// of the whole message, the arguments read and the frames of a stack.
const (
	maxMetroArgChars     = 4096
	maxMetroMessageChars = 16384
	maxMetroArgs         = 64
	maxMetroStackFrames  = 64
)

// metroEvent is the stream event one CDP event becomes.
type metroEvent struct {
	Stream, Type string
	Payload      []byte
	Time         time.Time
}

// cdpRemoteObject is a value as Runtime events show it.
type cdpRemoteObject struct {
	Type                string          `json:"type"`
	Subtype             string          `json:"subtype"`
	Description         string          `json:"description"`
	Value               json.RawMessage `json:"value"`
	UnserializableValue string          `json:"unserializableValue"`
	Preview             *cdpPreview     `json:"preview"`
}

type cdpPreview struct {
	Subtype    string               `json:"subtype"`
	Overflow   bool                 `json:"overflow"`
	Properties []cdpPropertyPreview `json:"properties"`
}

type cdpPropertyPreview struct {
	Name    string `json:"name"`
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	Value   string `json:"value"`
}

// metroConsoleEvent reads Runtime.consoleAPICalled. It walks the params
// without decoding them through reflection (this is the flood path); what
// it keeps is re-encoded, so the event is valid JSON whatever was sent.
func metroConsoleEvent(params []byte, now time.Time) (metroEvent, error) {
	var typ string
	var argsRaw, stackRaw []byte
	var ms float64
	if rawKind(params) != "object" {
		return metroEvent{}, fmt.Errorf("%w: Runtime.consoleAPICalled params: want an object", errCDPFrame)
	}
	err := eachMemberRaw(params, func(name, v []byte) bool {
		switch string(name) {
		case `"type"`:
			typ = cdpWord(v)
		case `"args"`:
			argsRaw = v
		case `"timestamp"`:
			ms, _ = strconv.ParseFloat(string(v), 64)
		case `"stackTrace"`:
			stackRaw = v
		}
		return true
	})
	if err != nil {
		return metroEvent{}, fmt.Errorf("%w: Runtime.consoleAPICalled params: %v", errCDPFrame, err)
	}
	var args []cdpRemoteObject
	total := 0
	if rawKind(argsRaw) == "array" {
		args = make([]cdpRemoteObject, 0, 4)
		err = eachElement(argsRaw, func(_ int, v []byte) bool {
			if total++; total <= maxMetroArgs {
				args = append(args, readRemoteObject(v))
			}
			return true
		})
		if err != nil {
			return metroEvent{}, fmt.Errorf("%w: Runtime.consoleAPICalled args: %v", errCDPFrame, err)
		}
	}
	message := formatConsoleArgs(args)
	if n := total - len(args); n > 0 {
		message += fmt.Sprintf(" … (%d more arguments)", n)
	}
	level := metroLevel(typ)
	var stack string
	if level == "warn" || level == "error" || typ == "trace" {
		frames := cdpStackFrames(stackRaw)
		stack = framesText(frames)
		if note := rnUncaughtNote(args, frames); note != "" && level == "error" {
			message, stack = message+"\n"+note, "" // React Native's handler's frames (metro_uncaught.go)
		}
	}
	return metroEvent{Stream: "console", Type: "log", Payload: metroLogPayload(level, clipText(message, maxMetroMessageChars), stack),
		Time: cdpTime(ms, now)}, nil
}

// metroLogPayload is a console log event's payload {level, message, stack?}.
func metroLogPayload(level, message, stack string) []byte {
	out := make([]byte, 0, len(message)+len(stack)+48)
	out = appendJSONString(append(out, `{"level":`...), level, false)
	out = appendJSONString(append(out, `,"message":`...), message, false)
	if stack != "" {
		out = appendJSONString(append(out, `,"stack":`...), stack, false)
	}
	return append(out, '}')
}

// readRemoteObject reads one argument; an argument that is not an object
// of the documented members is shown as unreadable.
func readRemoteObject(raw []byte) cdpRemoteObject {
	o, _, preview, err := readCDPObject(raw)
	if err != nil || o.Type == "" {
		return cdpRemoteObject{Type: "object", Description: "(unreadable value)"}
	}
	if preview != nil {
		o.Preview = readPreview(preview)
	}
	return o
}

// readCDPObject reads the members of a RemoteObject, or of a
// PropertyPreview, which has a name and its value as a string; preview is
// the object's preview, unread.
func readCDPObject(raw []byte) (o cdpRemoteObject, name string, preview []byte, err error) {
	err = eachMemberRaw(raw, func(member, v []byte) bool {
		switch string(member) {
		case `"name"`:
			name, _ = wireString(v)
		case `"type"`:
			o.Type = cdpWord(v)
		case `"subtype"`:
			o.Subtype = cdpWord(v)
		case `"description"`:
			o.Description, _ = wireString(v)
		case `"value"`:
			o.Value = v
		case `"unserializableValue"`:
			o.UnserializableValue, _ = wireString(v)
		case `"preview"`:
			preview = v
		}
		return true
	})
	return o, name, preview, err
}

// cdpWords are the words CDP uses for types and subtypes, by their JSON
// spelling.
var cdpWords = func() map[string]string {
	words := map[string]string{}
	for _, w := range []string{"string", "number", "object", "boolean", "undefined", "function", "null", "array", "error", "log", "warning"} {
		words[strconv.Quote(w)] = w
	}
	return words
}()

// cdpWord decodes a JSON string, without allocating for cdpWords.
func cdpWord(v []byte) string {
	if w, ok := cdpWords[string(v)]; ok {
		return w
	}
	s, _ := wireString(v)
	return s
}

// readPreview reads an object preview; nil when it is not one.
func readPreview(raw []byte) *cdpPreview {
	p := &cdpPreview{}
	var props []byte
	if eachMemberRaw(raw, func(name, v []byte) bool {
		switch string(name) {
		case `"subtype"`:
			p.Subtype = cdpWord(v)
		case `"overflow"`:
			p.Overflow = string(v) == "true"
		case `"properties"`:
			props = v
		}
		return true
	}) != nil {
		return nil
	}
	_ = eachElement(props, func(_ int, v []byte) bool {
		o, name, _, _ := readCDPObject(v) // what was read of a garbled one is kept
		value, _ := wireString(o.Value)
		p.Properties = append(p.Properties, cdpPropertyPreview{Name: name, Type: o.Type, Subtype: o.Subtype, Value: value})
		return len(p.Properties) < maxMetroArgs
	})
	return p
}

// metroExceptionEvent reads Runtime.exceptionThrown, an uncaught error, as
// consoles show it.
func metroExceptionEvent(params []byte, now time.Time) (metroEvent, error) {
	var p struct {
		Timestamp float64 `json:"timestamp"`
		Details   struct {
			Text       string           `json:"text"`
			StackTrace json.RawMessage  `json:"stackTrace"`
			Exception  *cdpRemoteObject `json:"exception"`
		} `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return metroEvent{}, fmt.Errorf("%w: Runtime.exceptionThrown params: %v", errCDPFrame, err)
	}
	var description string
	if e := p.Details.Exception; e != nil {
		description = formatRemoteObject(*e)
	}
	head, rest, _ := strings.Cut(description, "\n")
	text := strings.TrimSpace(p.Details.Text)
	message := text
	switch {
	case head == "":
	case text == "" || strings.EqualFold(text, "uncaught"):
		message = "Uncaught " + head
	case !strings.Contains(text, head):
		message = text + " " + head
	}
	thrown := cdpStackFrames(p.Details.StackTrace)
	stack := framesText(thrown)
	switch own := parseJSStack(rest).Frames; {
	case len(thrown) == 0:
		stack = strings.TrimSpace(rest) // Hermes writes the stack into the error's description too
	case madeElsewhere(own, thrown):
		// Made in one place and thrown in another (rethrown, or thrown
		// later): where it was made stays in the message, as the error
		// prints itself, and is mapped there (tool_stacks.go).
		message += "\n" + strings.TrimRight(rest, "\n")
	}
	payload := metroLogPayload("error", clipText(cmp.Or(message, "Uncaught exception"), maxMetroMessageChars), clipText(stack, maxMetroMessageChars))
	return metroEvent{Stream: "console", Type: "log", Payload: payload, Time: cdpTime(p.Timestamp, now)}, nil
}

func metroLevel(typ string) string {
	switch typ {
	case "warning":
		return "warn"
	case "error", "assert":
		return "error"
	case "debug", "trace":
		return "debug"
	}
	return "info" // log, info, dir, table, group…
}

// formatConsoleArgs writes a call's arguments as React Native's console
// prints them: a first string argument's %s %d %i %f %o %O %c directives
// take the arguments after it, and the rest follow, joined by spaces;
// strings appear as they are, other values as their preview or JSON.
func formatConsoleArgs(args []cdpRemoteObject) string {
	if len(args) == 1 && args[0].Type == "string" && bytes.IndexByte(args[0].Value, '%') < 0 {
		s, _ := wireString(args[0].Value) // the common console.log("text")
		return clipText(s, maxMetroArgChars)
	}
	var b strings.Builder
	b.Grow(128)
	next := 0
	if len(args) > 0 && args[0].Type == "string" {
		format, _ := wireString(args[0].Value)
		format = clipText(format, maxMetroArgChars)
		next = 1
		for i := 0; i < len(format); i++ {
			c := format[i]
			if c != '%' || i+1 == len(format) {
				b.WriteByte(c)
				continue
			}
			verb := format[i+1]
			switch {
			case verb == '%':
				b.WriteByte('%')
			case strings.IndexByte("sdifoOc", verb) >= 0 && next < len(args):
				if verb != 'c' { // %c styles; its argument is not shown
					b.WriteString(formatArgFor(args[next], verb))
				}
				next++
			default:
				b.WriteByte(c)
				continue
			}
			i++
		}
	}
	afterStack := false
	for _, a := range args[next:] {
		switch {
		case afterStack:
			b.WriteByte('\n') // an error's last frame line ends where its stack does
		case b.Len() > 0 || next > 0:
			b.WriteByte(' ')
		}
		afterStack = a.Subtype == "error" && strings.Contains(a.Description, "\n")
		b.WriteString(clipText(formatRemoteObject(a), maxMetroArgChars))
		if b.Len() > 4*maxMetroMessageChars {
			break // the message is cut anyway
		}
	}
	return b.String()
}

func formatArgFor(o cdpRemoteObject, verb byte) string {
	if (verb == 'd' || verb == 'i') && o.Type == "number" {
		if f, err := strconv.ParseFloat(string(o.Value), 64); err == nil {
			return strconv.FormatInt(int64(f), 10)
		}
	}
	return clipText(formatRemoteObject(o), maxMetroArgChars)
}

// formatRemoteObject writes one value: a string itself, a number, boolean
// or undefined as JavaScript prints it, an object as its JSON value when
// the page sent one, else as its preview ({a: 1, b: "x"}, [1, 2]), else as
// its description (Error: … with its stack, Array(3), Object).
func formatRemoteObject(o cdpRemoteObject) string {
	switch o.Type {
	case "string":
		s, _ := wireString(o.Value)
		return s
	case "undefined":
		return "undefined"
	case "number", "boolean", "bigint":
		return cmp.Or(o.UnserializableValue, string(o.Value), o.Description)
	case "object":
		if o.Subtype == "null" {
			return "null"
		}
		if len(o.Value) > 0 && rawKind(o.Value) != "null" {
			return string(compactJSON(o.Value))
		}
		if o.Preview != nil && o.Subtype != "error" {
			return formatPreview(o.Preview)
		}
	}
	return cmp.Or(o.Description, o.Type)
}

func formatPreview(p *cdpPreview) string {
	var b strings.Builder
	b.Grow(16 * (len(p.Properties) + 1))
	array := p.Subtype == "array" || p.Subtype == "typedarray"
	open, close := "{", "}"
	if array {
		open, close = "[", "]"
	}
	b.WriteString(open)
	for i, prop := range p.Properties {
		if i > 0 {
			b.WriteString(", ")
		}
		if !array {
			b.WriteString(prop.Name)
			b.WriteString(": ")
		}
		switch {
		case prop.Type == "string":
			b.WriteString(strconv.Quote(prop.Value))
		case prop.Type == "object" && prop.Subtype == "null":
			b.WriteString("null")
		case prop.Type == "object" && prop.Value == "":
			b.WriteString("{…}")
		default:
			b.WriteString(prop.Value)
		}
	}
	if p.Overflow {
		if len(p.Properties) > 0 {
			b.WriteString(", ")
		}
		b.WriteString("…")
	}
	b.WriteString(close)
	return b.String()
}

// cdpStackFrames reads a Runtime.StackTrace's call frames (readFrameValue),
// up to maxMetroStackFrames and a last one counting the rest.
func cdpStackFrames(stackTrace []byte) []jsFrame {
	var frames []jsFrame
	n := 0
	_ = eachElement(rawMember(stackTrace, "callFrames"), func(_ int, v []byte) bool {
		if n++; n > maxMetroStackFrames {
			return true
		}
		if f, ok := readFrameValue(v); ok {
			f.Method, f.File = clipText(f.Method, 256), clipText(f.File, 2048)
			frames = append(frames, f)
		}
		return true
	})
	if n > maxMetroStackFrames {
		frames = append(frames, jsFrame{Kind: frameSkipped, Skipped: n - maxMetroStackFrames})
	}
	return frames
}

// madeElsewhere reports whether an exception's own stack (from its
// description) starts somewhere else than the stack CDP gives for its
// throw: the first frame each places in a file differs (what each calls
// the function may differ, and so may how many frames each keeps).
func madeElsewhere(own, thrown []jsFrame) bool {
	first := func(frames []jsFrame) (jsFrame, bool) {
		for _, f := range frames {
			if f.Kind == frameURL || f.Kind == framePath {
				return jsFrame{File: f.File, Line: f.Line, Column: f.Column}, true
			}
		}
		return jsFrame{}, false
	}
	a, ok := first(own)
	b, _ := first(thrown)
	return ok && a != b
}

// cdpTime reads a Runtime event's timestamp (milliseconds since the
// epoch); a missing or implausible one is the time of receipt.
func cdpTime(ms float64, now time.Time) time.Time {
	t := time.UnixMilli(int64(ms))
	if ms <= 0 || t.Before(now.Add(-7*24*time.Hour)) || t.After(now.Add(time.Minute)) {
		return now
	}
	return t
}
