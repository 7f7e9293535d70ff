package main

// tool_stacks.go shows the stacks of debug_get_logs mapped to source: a
// frame in Metro's bundle (`index.bundle?platform=ios…:48211:17`) becomes
// `at handleAdd (src/CartButton.tsx:42:9)`, whatever kind of app sent it.
// Mapping happens when logs are read, in one request for the whole page
// (session_stacks.go); when it cannot happen, the stacks stay as the app
// sent them and one note says why.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

const (
	// maxMappedFrames is how many frames of a stack are sent to be mapped:
	// more than are shown, since framework frames are hidden after mapping.
	maxMappedFrames = 3 * maxStackFrames
	// maxMessageLines is how many lines of a stack's message text a mapped
	// stack keeps: the entry's message says it already.
	maxMessageLines = 2
)

// stackNote says once per answer why stacks were not mapped to source.
type stackNote struct {
	Status string `json:"status"`
	Reason string `json:"reason"`
	Hint   string `json:"hint,omitempty"`
}

// mapLogStacks maps the stacks of entries (read from events, in order) to
// source, rewriting the entries it could map, and returns the note to add
// to the answer, if any.
func (ts *toolSet) mapLogStacks(ctx context.Context, events [][]byte, entries []logEntry) *stackNote {
	var stacks []jsStack
	var at []int // entry index of each stack sent
	var totals []int
	bytecode, source := false, false
	for i, ev := range events {
		st, ok := readJSStack(rawMember(rawMember(ev, "payload"), "stack"))
		if !ok {
			continue
		}
		sendable := false
		for _, f := range st.Frames {
			switch f.Kind {
			case frameURL:
				sendable = true
			case frameBytecode:
				bytecode = true
			case framePath:
				source = source || (f.File != "" && f.Line > 0)
			}
		}
		if !sendable {
			continue
		}
		totals = append(totals, len(st.Frames))
		st.Frames = st.Frames[:min(len(st.Frames), maxMappedFrames)]
		stacks, at = append(stacks, st), append(at, i)
	}
	if len(stacks) == 0 {
		switch {
		case bytecode:
			return &stackNote{Status: "unavailable", Reason: "the stacks are Hermes bytecode offsets (`address at`, a release build): Metro cannot map them",
				Hint: "map them with the build's source map and metro-symbolicate, or reproduce in a development build"}
		case source:
			return &stackNote{Status: "not needed", Reason: "the stacks already name source files"}
		}
		return nil
	}
	mapped, err := ts.mapStacks(ctx, stacks)
	anyMapped := false
	for k, st := range stacks {
		e := &entries[at[k]]
		text, hidden, more, ok := mappedStackText(st, mapped[k])
		if !ok {
			continue
		}
		anyMapped = true
		e.Stack, _ = json.Marshal(text)
		e.HiddenFrames, e.MoreFrames, e.Symbolicated = hidden, more+totals[k]-len(st.Frames), true
	}
	if err == nil && !anyMapped {
		return &stackNote{Status: "unavailable", Reason: "Metro mapped none of the frames (the bundle may have changed since they were printed)"}
	}
	if err == nil {
		return nil
	}
	return stackNoteFor(err, anyMapped)
}

// mappedStackText writes a stack whose frames Metro mapped: its message's
// first lines, then up to maxStackFrames frames; frames Metro marks
// collapse (framework internals) are left out and counted, unless nothing
// else is left. ok is false when Metro mapped none of its frames.
func mappedStackText(st jsStack, frames []mappedFrame) (text string, hidden, more int, ok bool) {
	lines := append([]string(nil), st.Message[:min(len(st.Message), maxMessageLines)]...)
	for i := range lines {
		lines[i] = clipText(lines[i], maxLogMessage)
	}
	shown := 0
	for _, f := range frames {
		ok = ok || f.Mapped
		if f.Mapped && f.Collapse {
			hidden++
		}
	}
	if !ok {
		return "", 0, 0, false
	}
	showCollapsed := hidden == len(frames)
	if showCollapsed {
		hidden = 0
	}
	for i, f := range frames {
		if f.Mapped && f.Collapse && !showCollapsed {
			continue
		}
		if shown == maxStackFrames {
			more++
			continue
		}
		shown++
		line := st.Frames[i].text()
		if f.Mapped {
			line = mappedFrameText(f)
		}
		lines = append(lines, "    "+line)
	}
	return strings.Join(lines, "\n"), hidden, more, true
}

// mappedFrameText writes a mapped frame as the engines write source frames.
func mappedFrameText(f mappedFrame) string {
	method := f.Method
	if method == "" {
		method = "<anonymous>"
	}
	loc := f.File + ":" + strconv.Itoa(f.Line)
	if f.Column > 0 {
		loc += ":" + strconv.Itoa(f.Column)
	}
	return "at " + method + " (" + loc + ")"
}

// stackNoteFor words why frames were not mapped.
func stackNoteFor(err error, someMapped bool) *stackNote {
	status := "unavailable"
	if someMapped {
		status = "partial"
	}
	var unreachable *errMetroUnreachable
	var slow *errMetroSlow
	var refused *errMetroRefused
	var otherPort *errMetroOtherPort
	switch {
	case errors.Is(err, errStacksOff):
		return &stackNote{Status: "off", Reason: "stacks are not mapped to source: METRO_URL is off",
			Hint: "set METRO_URL to the Metro serving the app (default http://127.0.0.1:8081)"}
	case errors.As(err, &unreachable):
		return &stackNote{Status: status, Reason: "Metro not reachable at " + unreachable.Origin + "; stacks are as the app sent them",
			Hint: "start Metro in the app's project (npx expo start, npx react-native start), or set METRO_URL to where it runs"}
	case errors.As(err, &slow):
		if !someMapped {
			status = "pending"
		}
		return &stackNote{Status: status, Reason: "Metro did not answer within " + slow.Wait.Round(time.Millisecond).String() + " (it may be building the bundle); stacks are as the app sent them",
			Hint: "read the logs again in a few seconds: Metro's answer is kept"}
	case errors.As(err, &otherPort):
		return &stackNote{Status: status, Reason: "the stacks' bundle is served on port " + otherPort.Port + ", not by the Metro at " + otherPort.Origin,
			Hint: "set METRO_URL to the Metro serving the app (the one on port " + otherPort.Port + ")"}
	case errors.As(err, &refused):
		return &stackNote{Status: status, Reason: fmt.Sprintf("Metro could not map the stacks (%d: %s)", refused.Status, refused.Message),
			Hint: "the bundle may not build as it is now; frames are as the app sent them"}
	}
	return &stackNote{Status: status, Reason: "stacks were not mapped: " + err.Error()}
}
