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

const (
	// maxMessageStacks is how many stacks of one message are mapped.
	maxMessageStacks = 4
	// maxStackScan bounds the bytes of a message searched for stacks: far
	// more than the maxLogMessage characters shown of it, which mapped
	// frames, shorter than the bundle's, bring forward.
	maxStackScan = 64 << 10
)

// logStack says where a stack sent to be mapped came from: an entry's
// stack member, or a run of frame lines in its message (inMessage, at
// span), and how many frames it had before it was cut to maxMappedFrames.
type logStack struct {
	entry     int
	inMessage bool
	span      textStack
	total     int
}

// mapLogStacks maps every stack the entries (read from events, in order)
// carry to source, in one request: the stack member (for a Metro app, the
// console call's), and each stack in the message text (the stack of an
// Error logged, as CDP describes it, or an adapter or Reactotron client
// sends it as text). It rewrites the entries it could map, and returns the
// note to add to the answer, if any.
func (ts *toolSet) mapLogStacks(ctx context.Context, events [][]byte, entries []logEntry) *stackNote {
	var stacks []jsStack
	var from []logStack
	messages := make([][]string, len(events)) // the lines of a message with stacks to map
	unscanned := make([]string, len(events))  // and what follows them, past maxStackScan
	bytecode, source := false, false
	for i, ev := range events {
		payload := rawMember(ev, "payload")
		if st, ok := readJSStack(rawMember(payload, "stack")); ok {
			for _, f := range st.Frames {
				bytecode = bytecode || f.Kind == frameBytecode
				source = source || (f.Kind == framePath && f.File != "" && f.Line > 0)
			}
			if sendable(st.Frames) {
				from = append(from, logStack{entry: i, total: len(st.Frames)})
				st.Frames = st.Frames[:min(len(st.Frames), maxMappedFrames)]
				stacks = append(stacks, st)
			}
		}
		message, ok := wireString(rawMember(payload, "message"))
		if !ok {
			continue
		}
		var rest string
		if len(message) > maxStackScan {
			cut := strings.LastIndexByte(message[:maxStackScan], '\n')
			if cut < 0 {
				cut = maxStackScan
			}
			message, rest = message[:cut], message[cut:]
		}
		lines, found := findStacks(message)
		for _, span := range found[:min(len(found), maxMessageStacks)] {
			if !sendable(span.frames) {
				continue
			}
			messages[i], unscanned[i] = lines, rest
			from = append(from, logStack{entry: i, inMessage: true, span: span, total: len(span.frames)})
			stacks = append(stacks, jsStack{Frames: span.frames[:min(len(span.frames), maxMappedFrames)]})
		}
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
	rewritten := make([]bool, len(events))
	// Stacks in a message are replaced from its last to its first, so
	// that the spans of the earlier ones still hold.
	for k := len(stacks) - 1; k >= 0; k-- {
		src, st := from[k], stacks[k]
		e := &entries[src.entry]
		if !src.inMessage {
			text, hidden, more, ok := mappedStackText(st, mapped[k])
			if !ok {
				continue
			}
			anyMapped = true
			e.Stack, _ = json.Marshal(text)
			e.HiddenFrames, e.MoreFrames, e.Symbolicated = hidden, more+src.total-len(st.Frames), true
			continue
		}
		frames, hidden, more, ok := mappedFrameLines(st, mapped[k])
		if !ok {
			continue
		}
		anyMapped, rewritten[src.entry], e.Symbolicated = true, true, true
		if left := leftOutLine(hidden, more+src.total-len(st.Frames)); left != "" {
			frames = append(frames, left)
		}
		lines := messages[src.entry]
		messages[src.entry] = append(append(lines[:src.span.first:src.span.first], frames...), lines[src.span.end:]...)
	}
	for i, lines := range messages {
		if rewritten[i] {
			entries[i].Message = clipText(strings.Join(lines, "\n")+unscanned[i], maxLogMessage)
		}
	}
	if err == nil && !anyMapped {
		return &stackNote{Status: "unavailable", Reason: "Metro mapped none of the frames (the bundle may have changed since they were printed)"}
	}
	if err == nil {
		return nil
	}
	return stackNoteFor(err, anyMapped)
}

// sendable reports whether frames hold one in a bundle the dev server
// served: a stack worth mapping.
func sendable(frames []jsFrame) bool {
	for _, f := range frames {
		if f.Kind == frameURL {
			return true
		}
	}
	return false
}

// mappedStackText writes a stack whose frames Metro mapped: its message's
// first lines, then its frames as mappedFrameLines writes them. ok is
// false when Metro mapped none of its frames.
func mappedStackText(st jsStack, frames []mappedFrame) (text string, hidden, more int, ok bool) {
	lines := append([]string(nil), st.Message[:min(len(st.Message), maxMessageLines)]...)
	for i := range lines {
		lines[i] = clipText(lines[i], maxLogMessage)
	}
	shown, hidden, more, ok := mappedFrameLines(st, frames)
	if !ok {
		return "", 0, 0, false
	}
	return strings.Join(append(lines, shown...), "\n"), hidden, more, true
}

// mappedFrameLines writes up to maxStackFrames frames of a stack Metro
// mapped, indented as engines indent them; frames Metro marks collapse
// (framework internals) are left out and counted, unless no frame that
// names a place in code is left. ok is false when Metro mapped none of
// its frames.
func mappedFrameLines(st jsStack, frames []mappedFrame) (lines []string, hidden, more int, ok bool) {
	placed := 0 // frames naming a file, not collapsed
	for _, f := range frames {
		ok = ok || f.Mapped
		switch {
		case f.Mapped && f.Collapse:
			hidden++
		case f.Kind == frameURL || f.Kind == framePath:
			placed++
		}
	}
	if !ok {
		return nil, 0, 0, false
	}
	showCollapsed := placed == 0
	if showCollapsed {
		hidden = 0
	}
	for i, f := range frames {
		if f.Mapped && f.Collapse && !showCollapsed {
			continue
		}
		if len(lines) == maxStackFrames {
			more++
			continue
		}
		frame := st.Frames[i]
		if f.Mapped {
			frame = f.jsFrame
		}
		lines = append(lines, "    "+frame.text())
	}
	return lines, hidden, more, true
}

// leftOutLine says, under a stack mapped inside a message, what was left
// out of it; "" when nothing was.
func leftOutLine(hidden, more int) string {
	var parts []string
	if hidden > 0 {
		parts = append(parts, plural(hidden, "framework frame")+" hidden")
	}
	if more > 0 {
		parts = append(parts, plural(more, "more frame"))
	}
	if len(parts) == 0 {
		return ""
	}
	return "    ... " + strings.Join(parts, ", ")
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
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
