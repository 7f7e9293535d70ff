package main

// metro_console.go turns a page's Runtime events into `console` events of
// the wire protocol's shape (PROTOCOL.md §3: log {level, message, stack?}),
// the shape the other links produce, so that debug_get_logs, the queries,
// resources and subscriptions read them unchanged.
//
//	Runtime.consoleAPICalled  log {level, message, stack?}: the arguments
//	                          formatted as React Native's console prints
//	                          them, joined by spaces; the stack for warn,
//	                          error, assert and trace calls
//	Runtime.exceptionThrown   log {level: error, message: "Uncaught …", stack}

import (
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
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
	Subtype    string `json:"subtype"`
	Overflow   bool   `json:"overflow"`
	Properties []struct {
		Name    string `json:"name"`
		Type    string `json:"type"`
		Subtype string `json:"subtype"`
		Value   string `json:"value"`
	} `json:"properties"`
}

type cdpStackTrace struct {
	CallFrames []struct {
		FunctionName string `json:"functionName"`
		URL          string `json:"url"`
		LineNumber   int64  `json:"lineNumber"`
		ColumnNumber int64  `json:"columnNumber"`
	} `json:"callFrames"`
}

// metroConsoleEvent reads Runtime.consoleAPICalled.
func metroConsoleEvent(params []byte, now time.Time) (metroEvent, error) {
	var p struct {
		Type       string            `json:"type"`
		Args       []json.RawMessage `json:"args"`
		Timestamp  float64           `json:"timestamp"`
		StackTrace *cdpStackTrace    `json:"stackTrace"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return metroEvent{}, fmt.Errorf("%w: Runtime.consoleAPICalled params: %v", errCDPFrame, err)
	}
	args := make([]cdpRemoteObject, 0, min(len(p.Args), maxMetroArgs))
	for _, raw := range p.Args[:min(len(p.Args), maxMetroArgs)] {
		var o cdpRemoteObject
		if json.Unmarshal(raw, &o) != nil {
			o = cdpRemoteObject{Type: "object", Description: "(unreadable value)"}
		}
		args = append(args, o)
	}
	message := formatConsoleArgs(args)
	if n := len(p.Args) - len(args); n > 0 {
		message += fmt.Sprintf(" … (%d more arguments)", n)
	}
	level := metroLevel(p.Type)
	ev := struct {
		Level   string `json:"level"`
		Message string `json:"message"`
		Stack   string `json:"stack,omitempty"`
	}{Level: level, Message: clipMetroText(message, maxMetroMessageChars)}
	if level == "warn" || level == "error" || p.Type == "trace" {
		ev.Stack = formatCDPStack(p.StackTrace)
	}
	payload, err := json.Marshal(ev)
	return metroEvent{Stream: "console", Type: "log", Payload: payload, Time: cdpTime(p.Timestamp, now)}, err
}

// metroExceptionEvent reads Runtime.exceptionThrown: an uncaught error,
// written as an error log whose message starts "Uncaught", as consoles
// show it.
func metroExceptionEvent(params []byte, now time.Time) (metroEvent, error) {
	var p struct {
		Timestamp float64 `json:"timestamp"`
		Details   struct {
			Text       string           `json:"text"`
			StackTrace *cdpStackTrace   `json:"stackTrace"`
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
	stack := formatCDPStack(p.Details.StackTrace)
	if stack == "" {
		stack = strings.TrimSpace(rest) // Hermes writes the stack into the error's description too
	}
	payload, err := json.Marshal(struct {
		Level   string `json:"level"`
		Message string `json:"message"`
		Stack   string `json:"stack,omitempty"`
	}{"error", clipMetroText(cmp.Or(message, "Uncaught exception"), maxMetroMessageChars), clipMetroText(stack, maxMetroMessageChars)})
	return metroEvent{Stream: "console", Type: "log", Payload: payload, Time: cdpTime(p.Timestamp, now)}, err
}

// metroLevel maps a console call's type to the wire protocol's levels.
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
	var b strings.Builder
	next := 0
	if len(args) > 0 && args[0].Type == "string" {
		format, _ := wireString(args[0].Value)
		format = clipMetroText(format, maxMetroArgChars)
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
	for _, a := range args[next:] {
		if b.Len() > 0 || next > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(clipMetroText(formatRemoteObject(a), maxMetroArgChars))
		if b.Len() > 4*maxMetroMessageChars {
			break // the message is cut anyway
		}
	}
	return b.String()
}

// formatArgFor formats an argument taken by a printf directive.
func formatArgFor(o cdpRemoteObject, verb byte) string {
	if (verb == 'd' || verb == 'i') && o.Type == "number" {
		if f, err := strconv.ParseFloat(string(o.Value), 64); err == nil {
			return strconv.FormatInt(int64(f), 10)
		}
	}
	return clipMetroText(formatRemoteObject(o), maxMetroArgChars)
}

// formatRemoteObject writes one value: a string itself, a number, boolean or undefined as JavaScript prints it, an
// object as its JSON value when the page sent one, else as its preview
// ({a: 1, b: "x"}, [1, 2]), else as its description (Error: … with its
// stack, Array(3), Object).
func formatRemoteObject(o cdpRemoteObject) string {
	switch o.Type {
	case "string":
		s, _ := wireString(o.Value)
		return s
	case "undefined":
		return "undefined"
	case "number", "boolean", "bigint":
		if o.UnserializableValue != "" {
			return o.UnserializableValue
		}
		if len(o.Value) > 0 {
			return string(o.Value)
		}
		return o.Description
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
	if o.Description != "" {
		return o.Description
	}
	return o.Type
}

// formatPreview writes an object's preview, as consoles show it.
func formatPreview(p *cdpPreview) string {
	var b strings.Builder
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

// formatCDPStack writes a CDP stack trace as the lines engines print,
// "at fn (url:line:column)", 1-based as engines print them (CDP counts
// from 0); "" when there is none.
func formatCDPStack(st *cdpStackTrace) string {
	if st == nil || len(st.CallFrames) == 0 {
		return ""
	}
	var b strings.Builder
	for i, f := range st.CallFrames {
		if i == maxMetroStackFrames {
			fmt.Fprintf(&b, "\n... skipping %d frames", len(st.CallFrames)-i)
			break
		}
		if i > 0 {
			b.WriteByte('\n')
		}
		fn := f.FunctionName
		if fn == "" {
			fn = "<anonymous>"
		}
		fmt.Fprintf(&b, "at %s (%s:%d:%d)", clipMetroText(fn, 256), clipMetroText(f.URL, 2048), f.LineNumber+1, f.ColumnNumber+1)
	}
	return b.String()
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

// clipMetroText cuts s to at most max characters, saying so.
func clipMetroText(s string, max int) string {
	if len(s) <= max || utf8.RuneCountInString(s) <= max {
		return s
	}
	cut := 0
	for n := 0; n < max; n++ {
		_, size := utf8.DecodeRuneInString(s[cut:])
		cut += size
	}
	return s[:cut] + fmt.Sprintf("… (%d characters cut)", utf8.RuneCountInString(s[cut:]))
}
