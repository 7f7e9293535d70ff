package main

// check_snapshot.go holds check-adapter's snapshot.get check (docs/protocol.md
// §4 "snapshot.get") and the JSON comparison the path checks share.

import (
	"context"
	"encoding/json"
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
		first, errA := decodeState(snap.State)
		second, errB := decodeState(again.State)
		if errA != nil || errB != nil || !checkEqualValues(first, second) {
			return checkFailed(checkSent("snapshot.get", params), "a state different from the one answered with seq %d: %s", *snap.Seq, clipJSON(again.State))
		}
		if out := k.expectError(ctx, "snapshot.get", map[string]any{"stream": name, "seq": *snap.Seq + 1_000_000}, wireCodeSnapshotNotFound); out != nil {
			return out
		}
	}
	return nil
}

// checkEqualValues compares decoded JSON as the server's diff does
// (diffValues): numbers by value, exactly.
func checkEqualValues(a, b any) bool {
	_, changes := diffValues(a, b, 0)
	return changes == 0
}
