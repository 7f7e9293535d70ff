package main

import (
	"strings"
	"testing"
)

// TestEventsAnswerNestsAnEventAtTheDepthBound: an event whose frame is read
// within the depth bound stays readable in an events.query answer, which
// nests it deeper still: the answer's members are taken, not revalidated.
func TestEventsAnswerNestsAnEventAtTheDepthBound(t *testing.T) {
	payload := strings.Repeat("[", scanMaxDepth-1) + strings.Repeat("]", scanMaxDepth-1) // the event object is the first level
	event := `{"stream":"redux","seq":1,"timestamp":"2026-01-01T00:00:00.000Z","type":"action","payload":` + payload + `}`
	var m wireMessage
	if err := m.parse([]byte(`{"type":"event","event":` + event + `}`)); err != nil {
		t.Fatalf("the event's frame: %v, want it read", err)
	}
	answer := `{"events":[` + event + `],"hasMore":false,"oldestSeq":1,"latestSeq":1}`
	events, _, _, _, ok := splitWireEventsAnswer([]byte(answer))
	if !ok || string(events) != "["+event+"]" {
		t.Errorf("splitWireEventsAnswer ok = %v, events of %d bytes; want the one event", ok, len(events))
	}
}
