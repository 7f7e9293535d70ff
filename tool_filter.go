package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// tool_filter.go is the one filter of a stream's events that debug_get_logs,
// debug_get_network and debug_wait_for share, so that a filter argument
// means the same in every tool that takes it.

// The filter arguments, described once for every tool that takes them.
var (
	levelArg       = argSpec{name: "level", kind: argString, description: "Minimum: debug, info, warn, error."}
	containsArg    = argSpec{name: "contains", kind: argString, description: "Text to find, any case."}
	statusArg      = argSpec{name: "status", kind: argString, description: "2xx…5xx, failed, or a code."}
	methodArg      = argSpec{name: "method", kind: argString, description: "e.g. POST."}
	urlContainsArg = argSpec{name: "url_contains", kind: argString, description: "Text to find, any case."}
)

// eventFilter is the test of stream's events that a call's filter arguments
// ask for, nil when they ask for none. level applies to the console stream,
// status, method and url_contains to the network stream; given for another
// stream they are INVALID_PARAMS. contains looks, in any case, through the
// text of the event as the answer shows it, redacted: a hidden secret is
// found by no search, so a filter cannot be used to guess it.
func (ts *toolSet) eventFilter(stream string, a toolArgs) (func(event []byte) bool, error) {
	var keeps []func(event []byte) bool
	if level, ok := a.str("level"); ok {
		if stream != consoleStream {
			return nil, invalidParams("level", "applies to the console stream only")
		}
		minRank := slices.Index(appLogLevels, strings.ToLower(level))
		if minRank < 0 {
			return nil, invalidParams("level", fmt.Sprintf("%q is not one of debug, info, warn, error", level))
		}
		if minRank > 0 {
			keeps = append(keeps, func(ev []byte) bool {
				level, _ := wireString(rawMember(rawMember(ev, "payload"), "level"))
				return logLevelRank(level) >= minRank
			})
		}
	}
	for _, name := range []string{"status", "method", "url_contains"} {
		if _, ok := a.str(name); ok && stream != networkStream {
			return nil, invalidParams(name, "applies to the network stream only")
		}
	}
	if arg, ok := a.str("status"); ok {
		match, err := statusFilter(arg)
		if err != nil {
			return nil, err
		}
		keeps = append(keeps, func(ev []byte) bool { return match(rawMember(rawMember(ev, "payload"), "status")) })
	}
	if method, ok := a.str("method"); ok {
		keeps = append(keeps, func(ev []byte) bool {
			m, _ := wireString(rawMember(rawMember(ev, "payload"), "method"))
			return strings.EqualFold(m, method)
		})
	}
	if part, ok := a.str("url_contains"); ok {
		part = strings.ToLower(part)
		keeps = append(keeps, func(ev []byte) bool {
			url, ok := wireString(rawMember(rawMember(ev, "payload"), "url")) // as the summary shows it: a string or nothing
			return ok && strings.Contains(strings.ToLower(url), part)
		})
	}
	if text, ok := a.str("contains"); ok && text != "" {
		lower := strings.ToLower(text)
		keeps = append(keeps, func(ev []byte) bool {
			shaped := ts.redact.JSON(shapeEvent(stream, ev))
			fields := textFields[stream]
			if fields == nil || (stream == consoleStream && rawMember(shaped, "message") == nil) ||
				(stream == networkStream && rawMember(shaped, "url") == nil) {
				return textContains(shaped, lower) // an event the tool shows as the app sent it
			}
			return slices.ContainsFunc(fields, func(name string) bool { return textContains(rawMember(shaped, name), lower) })
		})
	}
	if len(keeps) == 0 {
		return nil, nil
	}
	return func(ev []byte) bool {
		return !slices.ContainsFunc(keeps, func(keep func([]byte) bool) bool { return !keep(ev) })
	}, nil
}

// filteredScan is the scan of stream's events of eventType that a call's
// filter arguments (eventFilter) and paging arguments (limit, since_seq)
// ask for, once the session is known to hold stream.
func (ts *toolSet) filteredScan(a toolArgs, stream, eventType string) (eventScan, error) {
	keep, err := ts.eventFilter(stream, a)
	if err != nil {
		return eventScan{}, err
	}
	if err := ts.checkStream(a.session, stream); err != nil {
		return eventScan{}, consoleMissing(err, stream, a.session)
	}
	sc := eventScan{stream: stream, eventType: eventType, keep: keep}
	sc.limit, _ = a.int("limit")
	if since, ok := a.int("since_seq"); ok {
		sc.since = &since
	}
	return sc, nil
}

// textFields are the members of a shaped log entry or request summary that
// `contains` looks through: its text, not its seq, time or level, which
// would match nearly every entry for a number or "error".
var textFields = map[string][]string{
	consoleStream: {"message", "stack"},
	networkStream: {"method", "url", "error"},
}

// shapeEvent is an event as the tool of its stream shows it: a console log
// as a log entry, a network request as its one-line summary, any other
// event as the app sent it.
func shapeEvent(stream string, event []byte) json.RawMessage {
	typ, _ := wireString(rawMember(event, "type"))
	var v any
	switch {
	case stream == consoleStream && typ == logEventType:
		v = readLogEntry(event)
	case stream == networkStream && typ == requestEvent:
		v = summarizeRequest(event)
	default:
		return compactJSON(event)
	}
	data, err := json.Marshal(v)
	if err != nil {
		return compactJSON(event)
	}
	return data
}

// textContains reports whether a JSON value's strings or numbers hold lower
// (lower-case), read as text: escapes decoded, member names left out.
func textContains(v []byte, lower string) bool {
	found := false
	switch rawKind(v) {
	case "string":
		s, _ := wireString(v)
		found = strings.Contains(strings.ToLower(s), lower)
	case "number":
		found = strings.Contains(string(v), lower)
	case "object":
		_ = eachMember(v, func(_ string, m []byte) bool { found = textContains(m, lower); return !found })
	case "array":
		_ = eachElement(v, func(_ int, e []byte) bool { found = textContains(e, lower); return !found })
	}
	return found
}
