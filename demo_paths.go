package main

// demo_paths.go is the simulated app's side of the optional path requests
// (wire protocol "Paths in requests"): snapshot.get with a `path`, and
// snapshot.keys. A real app resolves a path on its live store object without
// serialising the rest; the simulated app does the same on the decoded
// tree of its snapshot, decoded once per snapshot, so that a path read of a
// 5 MB state costs what one of a 5 KB state does.

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sync"
)

// demoTrees holds the decoded tree of the latest snapshot asked for with a
// path, per stream. Snapshot encodings never change once recorded, so an
// encoding's identity says whether its tree is still the right one.
type demoTrees struct {
	mu      sync.Mutex
	streams map[string]demoTree
}

type demoTree struct {
	encoding json.RawMessage
	root     any
}

// tree returns the decoded form of encoding, the state of stream, and
// keeps it as the stream's.
func (t *demoTrees) tree(stream string, encoding json.RawMessage) (any, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if c, ok := t.streams[stream]; ok && len(c.encoding) == len(encoding) && len(encoding) > 0 && &c.encoding[0] == &encoding[0] {
		return c.root, nil
	}
	root, err := decodeState(encoding)
	if err != nil {
		return nil, err
	}
	t.streams[stream] = demoTree{encoding: encoding, root: root}
	return root, nil
}

// demoAt is a resolved path: the snapshot it was resolved in, the decoded
// value, and the path's segments.
type demoAt struct {
	snap  *demoSnapshotResult
	value any
	segs  []pathSegment
}

// resolveAt takes the snapshot that snapshot.get would answer with p
// and resolves p's path in it.
func (a *demoApp) resolveAt(p demoParams) (demoAt, *wireError) {
	method := p.method
	rawPath, werr := p.get("path", true)
	if werr != nil {
		return demoAt{}, werr
	}
	segs, err := parseWirePath(rawPath)
	if err != nil {
		return demoAt{}, demoInvalidParams(method, "path", err.Error())
	}
	snap, werr := a.getSnapshot(p)
	if werr != nil {
		return demoAt{}, werr
	}
	stream, _, _ := p.str("stream", true) // getSnapshot has checked it
	root, err := a.paths.tree(stream, snap.state)
	if err != nil {
		return demoAt{}, &wireError{Code: "INTERNAL", Message: fmt.Sprintf("%s: the snapshot does not decode: %v", method, err)}
	}
	value, werr := demoResolve(method, root, segs)
	if werr != nil {
		return demoAt{}, werr
	}
	return demoAt{snap: snap, value: value, segs: segs}, nil
}

// demoResolve walks root along segs by the rules of resolveRaw. A miss is
// PATH_NOT_FOUND with the segments that resolved, each spelt as what it
// selected (a key string or an index), and what is available there.
func demoResolve(method string, root any, segs []pathSegment) (any, *wireError) {
	node := root
	prefix := make([]any, 0, len(segs))
	for _, seg := range segs {
		switch n := node.(type) {
		case map[string]any:
			if v, ok := n[seg.Key]; ok {
				node = v
				prefix = append(prefix, seg.Key)
				continue
			}
		case []any:
			if idx, ok := parseIndex(seg); ok && idx < len(n) {
				node = n[idx]
				prefix = append(prefix, int64(idx))
				continue
			}
		}
		details := map[string]any{"resolvedPrefix": prefix, "available": nil}
		switch n := node.(type) {
		case map[string]any:
			details["available"] = smallestKeys(n, maxAvailableKeys)
			if len(n) > maxAvailableKeys {
				details["availableTotal"] = len(n)
			}
		case []any:
			details["available"] = map[string]int{"length": len(n)}
		}
		return nil, &wireError{Code: demoCodePathNotFound, Details: details,
			Message: fmt.Sprintf("%s: %q has no %s", method, formatPath(pathFromWire(prefix)), formatPath([]pathSegment{seg}))}
	}
	return node, nil
}

// getSnapshotAt answers snapshot.get with a path: the value there as state.
func (a *demoApp) getSnapshotAt(p demoParams) (*demoSnapshotResult, *wireError) {
	at, werr := a.resolveAt(p)
	if werr != nil {
		return nil, werr
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(at.value); err != nil {
		return nil, &wireError{Code: "INTERNAL", Message: "snapshot.get: " + err.Error()}
	}
	return &demoSnapshotResult{seq: at.snap.seq, timestamp: at.snap.timestamp, state: bytes.TrimSuffix(buf.Bytes(), []byte("\n"))}, nil
}

// demoKeysResult is the result of snapshot.keys.
type demoKeysResult struct {
	Seq       int64           `json:"seq"`
	Timestamp string          `json:"timestamp"`
	Type      string          `json:"type"`
	Size      int             `json:"size"`
	Length    *int            `json:"length,omitempty"`
	Total     int             `json:"total"`
	Children  []demoKeysChild `json:"children"`
}

type demoKeysChild struct {
	Key    *string `json:"key,omitempty"`
	Index  *int    `json:"index,omitempty"`
	Type   string  `json:"type"`
	Size   int     `json:"size"`
	Length *int    `json:"length,omitempty"`
}

// snapshotKeys answers snapshot.keys: the children of the value at path,
// largest first, with the bytes of JSON each takes in the snapshot. Sizes
// are measured on the snapshot's encoding, so they are the sizes a
// snapshot.get of that child would carry.
func (a *demoApp) snapshotKeys(p demoParams) (*demoKeysResult, *wireError) {
	const method = "snapshot.keys"
	limit, hasLimit, werr := p.int("limit", false, 1, 100000)
	if werr != nil {
		return nil, werr
	}
	at, werr := a.resolveAt(p)
	if werr != nil {
		return nil, werr
	}
	raw, _, err := resolveRaw(at.snap.state, at.segs)
	if err != nil || raw == nil {
		return nil, &wireError{Code: "INTERNAL", Message: method + ": the snapshot's encoding does not hold the path"}
	}
	res := &demoKeysResult{Seq: at.snap.seq, Timestamp: at.snap.timestamp, Type: rawKind(raw), Size: len(raw), Children: []demoKeysChild{}}
	add := func(c demoKeysChild, v []byte) bool {
		c.Type, c.Size = rawKind(v), len(v)
		if c.Type == "array" {
			c.Length = demoArrayLength(v)
		}
		res.Children = append(res.Children, c)
		return true
	}
	switch res.Type {
	case "object":
		_ = eachMember(raw, func(name string, v []byte) bool { return add(demoKeysChild{Key: &name}, v) })
	case "array":
		_ = eachElement(raw, func(i int, v []byte) bool { return add(demoKeysChild{Index: &i}, v) })
		res.Length = demoArrayLength(raw)
	}
	res.Total = len(res.Children)
	slices.SortStableFunc(res.Children, func(x, y demoKeysChild) int { return cmp.Compare(y.Size, x.Size) })
	if hasLimit && int64(len(res.Children)) > limit {
		res.Children = res.Children[:limit]
	}
	return res, nil
}

func demoArrayLength(v []byte) *int {
	n := 0
	_ = eachElement(v, func(int, []byte) bool { n++; return true })
	return &n
}
