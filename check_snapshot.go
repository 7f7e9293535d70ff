package main

// check_snapshot.go holds check-adapter's snapshot.get check (docs/protocol.md
// §4 "snapshot.get") and the JSON comparison the path checks share.

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// checkSnapshot is a snapshot.get answer.
type checkSnapshot struct {
	Seq       *int64          `json:"seq"`
	Timestamp *string         `json:"timestamp"`
	State     json.RawMessage `json:"state"`
}

// snapshot asks snapshot.get and checks the answer's shape.
func (k *checkKit) snapshot(ctx context.Context, params map[string]any) (checkSnapshot, *checkOutcome) {
	var snap checkSnapshot
	raw, fail := k.call(ctx, "snapshot.get", params)
	if fail != nil {
		return snap, fail
	}
	err := json.Unmarshal(raw, &snap)
	switch {
	case err != nil || snap.Seq == nil || snap.Timestamp == nil || snap.State == nil:
		return snap, checkFailed(checkSent("snapshot.get", params), "%s, not {seq, timestamp, state}", clipJSON(raw))
	case *snap.Seq < 1:
		return snap, checkFailed(checkSent("snapshot.get", params), "seq %d, not >= 1", *snap.Seq)
	}
	if _, err := time.Parse(time.RFC3339Nano, *snap.Timestamp); err != nil {
		return snap, checkFailed(checkSent("snapshot.get", params), "timestamp %q, not RFC 3339", *snap.Timestamp)
	}
	return snap, nil
}

// snapshotStreams are the listed streams that have a snapshot.
func (k *checkKit) snapshotStreams(ctx context.Context) ([]string, *checkOutcome) {
	list, fail := k.streams(ctx)
	if fail != nil {
		return nil, fail
	}
	var names []string
	for _, s := range list {
		if *s.HasSnapshot {
			names = append(names, *s.Name)
		}
	}
	if len(names) == 0 {
		return nil, checkSkip("no stream has a snapshot")
	}
	return names, nil
}

func checkSnapshotGet(ctx context.Context, k *checkKit) *checkOutcome {
	names, out := k.snapshotStreams(ctx)
	if out != nil {
		return out
	}
	for _, name := range names {
		snap, fail := k.snapshot(ctx, map[string]any{"stream": name})
		if fail != nil {
			return fail
		}
		params := map[string]any{"stream": name, "seq": *snap.Seq}
		again, fail := k.snapshot(ctx, params)
		if fail != nil {
			return fail
		}
		if !checkSameJSON(snap.State, again.State) {
			return checkFailed(checkSent("snapshot.get", params), "a state different from the one answered with seq %d: %s", *snap.Seq, clipJSON(again.State))
		}
		if out := k.expectError(ctx, "snapshot.get", map[string]any{"stream": name, "seq": *snap.Seq + 1_000_000}, wireCodeSnapshotNotFound); out != nil {
			return out
		}
	}
	return nil
}

// checkSameJSON reports whether a and b encode the same JSON value.
func checkSameJSON(a, b []byte) bool {
	va, errA := dewireCodeJSON(a)
	vb, errB := dewireCodeJSON(b)
	return errA == nil && errB == nil && checkEqualValues(va, vb)
}

func dewireCodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

// checkEqualValues compares decoded JSON; numbers by value.
func checkEqualValues(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for key, va := range a {
			vb, ok := b[key]
			if !ok || !checkEqualValues(va, vb) {
				return false
			}
		}
		return true
	case []any:
		b, ok := b.([]any)
		if !ok || len(a) != len(b) {
			return false
		}
		for i := range a {
			if !checkEqualValues(a[i], b[i]) {
				return false
			}
		}
		return true
	case json.Number:
		b, ok := b.(json.Number)
		if !ok {
			return false
		}
		if a == b {
			return true
		}
		fa, errA := a.Float64()
		fb, errB := b.Float64()
		return errA == nil && errB == nil && fa == fb
	}
	return a == b
}
