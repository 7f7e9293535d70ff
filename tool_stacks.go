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
	"slices"
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

// logStacks is what a page of entries has to map: the stacks, where each
// came from, the lines of each message holding one, and what follows
// them past maxStackScan.
type logStacks struct {
	stacks    []jsStack
	from      []logStack
	messages  [][]string
	unscanned []string
	bytecode  bool // frames of Hermes bytecode no map is looked for
	source    bool // frames that already name source files
	release   bool // frames of a release build's bundle
}

// mapLogStacks maps every stack the entries (read from events, in order)
// carry to source, in one request: the stack member (for a Metro app, the
// console call's), and each stack in the message text (the stack of an
// Error logged, as CDP describes it, or an adapter or Reactotron client
// sends it as text; a release build's JavaScript crash in a native
// entry). It rewrites the entries it could map, and returns the note to
// add to the answer, if any.
func (ts *toolSet) mapLogStacks(ctx context.Context, events [][]byte, entries []logEntry) *stackNote {
	ls := collectLogStacks(events)
	if len(ls.stacks) == 0 {
		switch {
		case ls.bytecode:
			return &stackNote{Status: "unavailable", Reason: "the stacks are Hermes bytecode offsets (`address at`) of a bundle that is not index.android.bundle or main.jsbundle",
				Hint: "map them with the build's source map and metro-symbolicate, or reproduce in a development build"}
		case ls.source:
			return &stackNote{Status: "not needed", Reason: "the stacks already name source files"}
		}
		return nil
	}
	mapped, err := ts.mapStacks(ctx, ls.stacks)
	anyMapped := ls.rewrite(entries, mapped)
	if err == nil && !anyMapped {
		if ls.release {
			return &stackNote{Status: "unavailable", Reason: "the source map mapped none of the frames (it may be another build's)"}
		}
		return &stackNote{Status: "unavailable", Reason: "Metro mapped none of the frames (the bundle may have changed since they were printed)"}
	}
	if err == nil {
		return nil
	}
	return stackNoteFor(err, anyMapped)
}

// collectLogStacks finds the stacks worth mapping in the entries' events.
func collectLogStacks(events [][]byte) *logStacks {
	ls := &logStacks{messages: make([][]string, len(events)), unscanned: make([]string, len(events))}
	for i, ev := range events {
		payload := rawMember(ev, "payload")
		message, hasMessage := wireString(rawMember(payload, "message"))
		bundle := releaseBundleIn(message)
		if st, ok := readJSStack(rawMember(payload, "stack")); ok {
			if st.Bundle = bundle; st.Bundle == "" {
				st.Bundle = releaseBundleIn(strings.Join(st.Message, "\n"))
			}
			ls.add(i, st, false, textStack{})
		}
		if !hasMessage {
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
			if ls.add(i, jsStack{Frames: span.frames, Bundle: bundle}, true, span) {
				ls.messages[i], ls.unscanned[i] = lines, rest
			}
		}
	}
	return ls
}

// add keeps a stack of entry i when it has frames to map, cut to
// maxMappedFrames, and reports whether it did.
func (ls *logStacks) add(i int, st jsStack, inMessage bool, span textStack) bool {
	if !mappable(st) {
		for _, f := range st.Frames {
			if inMessage {
				break // only a stack member is a stack for certain
			}
			ls.bytecode = ls.bytecode || f.Kind == frameBytecode
			ls.source = ls.source || (f.Kind == framePath && f.File != "" && f.Line > 0)
		}
		return false
	}
	for _, f := range st.Frames {
		_, _, _, release := releasePosition(f, st.Bundle)
		ls.release = ls.release || release
	}
	ls.from = append(ls.from, logStack{entry: i, inMessage: inMessage, span: span, total: len(st.Frames)})
	st.Frames = st.Frames[:min(len(st.Frames), maxMappedFrames)]
	ls.stacks = append(ls.stacks, st)
	return true
}

// rewrite puts the mapped stacks in the entries, and reports whether any
// frame was mapped. Stacks in a message are replaced from its last to its
// first, so that the spans of the earlier ones still hold.
func (ls *logStacks) rewrite(entries []logEntry, mapped [][]mappedFrame) bool {
	anyMapped := false
	rewritten := make([]bool, len(entries))
	for k := len(ls.stacks) - 1; k >= 0; k-- {
		src, st := ls.from[k], ls.stacks[k]
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
		lines := ls.messages[src.entry]
		frames, hidden, more, ok := mappedFrameLines(st, mapped[k], lines[src.span.first:src.span.end])
		if !ok {
			continue
		}
		anyMapped, rewritten[src.entry], e.Symbolicated = true, true, true
		if left := leftOutLine(hidden, more+src.total-len(st.Frames)); left != "" {
			frames = append(frames, left)
		}
		if used := mapUsedLine(mapped[k]); used != "" {
			frames = append(frames, used)
		}
		ls.messages[src.entry] = append(append(lines[:src.span.first:src.span.first], frames...), lines[src.span.end:]...)
	}
	for i, lines := range ls.messages {
		if rewritten[i] {
			entries[i].Message = clipText(strings.Join(lines, "\n")+ls.unscanned[i], maxLogMessage)
		}
	}
	return anyMapped
}

// mappable reports whether a stack holds a frame worth mapping: one in a
// bundle the dev server served, or in a release build's bundle.
func mappable(st jsStack) bool {
	return slices.ContainsFunc(st.Frames, func(f jsFrame) bool {
		_, _, _, release := releasePosition(f, st.Bundle)
		return f.Kind == frameURL || release
	})
}

// mapUsedLine names the release build's source map that mapped frames,
// and when it was built; "" when Metro mapped them.
func mapUsedLine(frames []mappedFrame) string {
	for _, f := range frames {
		if f.Mapped && f.MapFile != "" {
			return "    (mapped with " + f.MapFile + ", built " + f.MapBuilt.UTC().Format("2006-01-02 15:04 UTC") + ")"
		}
	}
	return ""
}

// mappedStackText writes a stack whose frames Metro mapped: its message's
// first lines, then its frames as mappedFrameLines writes them, with its ok.
func mappedStackText(st jsStack, frames []mappedFrame) (text string, hidden, more int, ok bool) {
	lines := append([]string(nil), st.Message[:min(len(st.Message), maxMessageLines)]...)
	for i := range lines {
		lines[i] = clipText(lines[i], maxLogMessage)
	}
	shown, hidden, more, ok := mappedFrameLines(st, frames, nil)
	if !ok {
		return "", 0, 0, false
	}
	if used := mapUsedLine(frames); used != "" {
		shown = append(shown, used)
	}
	return strings.Join(append(lines, shown...), "\n"), hidden, more, true
}

// mappedFrameLines writes up to maxStackFrames frames of a stack Metro
// mapped, indented as engines indent them; frames Metro marks collapse
// (framework internals) are left out and counted, unless no frame that
// names a place in code is left. ok is false when Metro mapped none of
// its frames. A frame left as it was is written as its line of original
// (the lines of a stack in a message) when given, else as it was read.
func mappedFrameLines(st jsStack, frames []mappedFrame, original []string) (lines []string, hidden, more int, ok bool) {
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
		switch {
		case f.Mapped:
			lines = append(lines, "    "+f.text())
		case i < len(original):
			lines = append(lines, strings.TrimRight(original[i], "\r"))
		default:
			lines = append(lines, "    "+st.Frames[i].text())
		}
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
	var metro *errMetro
	var noMap *errNoSourceMap
	var unread *errSourceMapUnread
	var reading *errSourceMapReading
	switch {
	case errors.As(err, &noMap):
		return noSourceMapNote(noMap, status)
	case errors.As(err, &unread):
		return &stackNote{Status: status, Reason: "the release build's source map " + unread.Path + " could not be read: " + unread.Err.Error(),
			Hint: "build the release again to write a new one, or name another in SOURCE_MAPS"}
	case errors.As(err, &reading):
		if !someMapped {
			status = "pending"
		}
		return &stackNote{Status: status, Reason: fmt.Sprintf("the release build's source map %s (%.1f MB) is still being read; stacks are as the app sent them", reading.Path, float64(reading.Size)/(1<<20)),
			Hint: "read the logs again in a few seconds: the map is kept once read"}
	case errors.Is(err, errMetroOff):
		return &stackNote{Status: "off", Reason: "stacks are not mapped to source: METRO_URL is off",
			Hint: "set METRO_URL to the Metro serving the app (default http://127.0.0.1:8081)"}
	case errors.As(err, &metro) && metro.kind == metroUnreachable:
		return &stackNote{Status: status, Reason: "Metro not reachable at " + metro.Origin + "; stacks are as the app sent them",
			Hint: "start Metro in the app's project (npx expo start, npx react-native start), or set METRO_URL to where it runs"}
	case errors.As(err, &metro) && metro.kind == metroSlow:
		if !someMapped {
			status = "pending"
		}
		return &stackNote{Status: status, Reason: "Metro did not answer within " + metro.Wait.Round(time.Millisecond).String() + " (it may be building the bundle); stacks are as the app sent them",
			Hint: "read the logs again in a few seconds: Metro's answer is kept"}
	case errors.As(err, &metro) && metro.kind == metroOtherPort:
		return &stackNote{Status: status, Reason: "the stacks' bundle is served on port " + metro.Port + ", not by the Metro at " + metro.Origin,
			Hint: "set METRO_URL to the Metro serving the app (the one on port " + metro.Port + ")"}
	case errors.As(err, &metro) && metro.kind == metroRefused:
		return &stackNote{Status: status, Reason: fmt.Sprintf("Metro could not map the stacks (%d: %s)", metro.Status, metro.Message),
			Hint: "the bundle may not build as it is now; frames are as the app sent them"}
	}
	return &stackNote{Status: status, Reason: "stacks were not mapped: " + err.Error()}
}

// noSourceMapNote says where the map of a release build's frames was
// looked for, and how to have one built there.
func noSourceMapNote(e *errNoSourceMap, status string) *stackNote {
	note := &stackNote{Status: status, Reason: "no source map for the release build's frames (" + e.Bundle + "); looked in " + e.Project + " for " + strings.Join(e.Looked, ", ")}
	if e.Bundle == androidBundle {
		note.Hint = "`cd android && ./gradlew assembleRelease` writes it to android/app/build/generated/sourcemaps/react/release/; Expo: `npx expo export --source-maps`; or name the map in SOURCE_MAPS"
	} else {
		note.Hint = "set SOURCEMAP_FILE=\"$(pwd)/../main.jsbundle.map\" in the \"Bundle React Native code and images\" build phase and build for Release; Expo: `npx expo export --source-maps`; or name the map in SOURCE_MAPS"
	}
	return note
}
