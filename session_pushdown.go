package main

// pushdown.go moves only the asked part of a state over the wire. An app
// that names capSnapshotPath in its handshake resolves paths itself:
// snapshot.get with a `path` answers just the value there, so reading one
// leaf of a 5 MB store costs what it costs on a 5 KB one. Apps that do not
// offer it send the whole state, which queries.go slices.
//
// A value too large for one frame is refused by the app (or dropped by
// adapterconn.go) with PAYLOAD_TOO_LARGE. The server does not ask snapshot.keys
// before every read to learn sizes in advance: that would double the round
// trips of every read to spare one on the rare read that fails. Instead,
// after a PAYLOAD_TOO_LARGE, an app that names capSnapshotKeys is asked
// once for the children of that value and their sizes, and the tool's
// error carries them as the outline, so the agent narrows in one call.

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
)

// maxWirePathSegments bounds a path read from the wire: an app's
// resolvedPrefix, or a path the demo app is asked for.
const maxWirePathSegments = 256

// maxWireIndex bounds the indexes sent as integers: an app in JavaScript
// reads every integer below it exactly. A longer bare decimal is sent as
// its key string, which misses on an array as the index would (no array
// is that long) and names the same key on an object.
const maxWireIndex = 1_000_000_000

// wirePath encodes parsed segments as a wire path: an index that a bare
// canonical decimal may name becomes an int64 (on an object the app takes
// it as the key of its decimal spelling, as resolvePath does), every other
// segment the key string. The root is nil, so it is left out of params.
func wirePath(segs []pathSegment) []any {
	if len(segs) == 0 {
		return nil
	}
	out := make([]any, len(segs))
	for i, seg := range segs {
		if idx, ok := parseIndex(seg); ok && idx < maxWireIndex {
			out[i] = int64(idx)
		} else {
			out[i] = seg.Key
		}
	}
	return out
}

// pathFromWire turns wirePath's segments back into pathSegments.
func pathFromWire(path []any) []pathSegment {
	segs := make([]pathSegment, 0, len(path))
	for _, v := range path {
		switch v := v.(type) {
		case int64:
			segs = append(segs, pathSegment{Key: strconv.FormatInt(v, 10)})
		case string:
			segs = append(segs, pathSegment{Key: v, Quoted: isCanonicalDecimal(v)})
		}
	}
	return segs
}

// parseWirePath reads a wire path, a JSON array of strings (object keys)
// and non-negative integers (indexes; on an object, the key of their
// decimal spelling).
func parseWirePath(raw []byte) ([]pathSegment, error) {
	if len(raw) == 0 || raw[0] != '[' {
		return nil, fmt.Errorf("must be an array of keys and indexes, got %s", clipJSON(raw))
	}
	var segs []pathSegment
	err := scanArray(raw, func(i int, v []byte) error {
		if i >= maxWirePathSegments {
			return fmt.Errorf("at most %d segments", maxWirePathSegments)
		}
		if s, ok := wireString(v); ok {
			segs = append(segs, pathSegment{Key: s, Quoted: isCanonicalDecimal(s)})
			return nil
		}
		if n, ok := wireInt(v); ok && n >= 0 {
			segs = append(segs, pathSegment{Key: strconv.FormatInt(n, 10)})
			return nil
		}
		return fmt.Errorf("[%d]: must be a string or a non-negative integer, got %s", i, clipJSON(v))
	})
	return segs, err
}

// stateAtPushed reads the value at segs of stream's current state by asking
// the app for that value only.
func (q *adapterQueries) stateAtPushed(ctx context.Context, s *session, stream, path string, segs []pathSegment, missCode string) (snapshot, []byte, error) {
	snap, err := q.fetchSnapshotWith(ctx, s, snapshotParams{Stream: stream, Path: wirePath(segs)})
	if err == nil {
		return snap, q.redact.At(segs, compactJSON(snap.state)), nil
	}
	// The Reactotron bridge resolves the path itself and says where it
	// stopped.
	var rmiss *reactotronPathMissError
	if errors.As(err, &rmiss) {
		return snapshot{}, nil, notFound(missCode, path, rmiss.Miss)
	}
	te := asToolError(err)
	switch {
	case te == nil:
	case te.Code == codePathNotFound:
		miss, perr := pathMissFromAnswer(te.Details, segs)
		if perr != nil {
			return snapshot{}, nil, malformedAnswer("snapshot.get", "PATH_NOT_FOUND details: "+perr.Error())
		}
		return snapshot{}, nil, notFound(missCode, path, miss)
	case te.Code == codePayloadTooLarge && s.offers(capSnapshotKeys):
		return snapshot{}, nil, q.outlineTooLarge(ctx, s, stream, segs, te)
	}
	return snapshot{}, nil, err
}

// pathMissFromAnswer reads the details of a PATH_NOT_FOUND answer to a
// request for segs: the app's {resolvedPrefix: [segments], available: [keys]
// or {length}, availableTotal?}, or the *pathMiss of a local answer.
func pathMissFromAnswer(details any, segs []pathSegment) (*pathMiss, error) {
	if miss, ok := details.(*pathMiss); ok {
		return miss, nil
	}
	raw, _ := details.(json.RawMessage)
	var prefixRaw, availableRaw, totalRaw []byte
	if err := scanObject(raw, func(key, value []byte) error {
		switch string(key) {
		case "resolvedPrefix":
			prefixRaw = value
		case "available":
			availableRaw = value
		case "availableTotal":
			totalRaw = value
		}
		return nil
	}); err != nil {
		return nil, errors.New("not an object")
	}
	prefix, err := parseWirePath(prefixRaw)
	if err != nil {
		return nil, fmt.Errorf("resolvedPrefix: %w", err)
	}
	if len(prefix) >= len(segs) {
		return nil, fmt.Errorf("resolvedPrefix has %d segments, the path only %d", len(prefix), len(segs))
	}
	miss := &pathMiss{ResolvedPrefix: formatPath(prefix), Segment: formatPath(segs[len(prefix) : len(prefix)+1])}
	switch rawKind(availableRaw) {
	case "array":
		keys := []string{}
		if err := scanArray(availableRaw, func(i int, v []byte) error {
			k, ok := wireString(v)
			if !ok {
				return fmt.Errorf("available[%d]: must be a string", i)
			}
			keys = append(keys, k)
			return nil
		}); err != nil {
			return nil, err
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		total, _ := wireInt(totalRaw)
		if len(keys) > maxAvailableKeys {
			total = max(total, int64(len(keys)))
			keys = keys[:maxAvailableKeys]
		}
		if total > int64(len(keys)) {
			miss.AvailableTotal = int(total)
		}
		miss.Available = keys
	case "object":
		n, found, _ := member(availableRaw, "length")
		length, ok := wireInt(n)
		if !found || !ok || length < 0 {
			return nil, errors.New("available: want an array of keys or {length}")
		}
		miss.Available = map[string]int{"length": int(length)}
	case "":
	default:
		if string(availableRaw) != "null" {
			return nil, errors.New("available: want an array of keys or {length}")
		}
	}
	return miss, nil
}

// keysParams are snapshot.keys's params. Path is never null: [] is the root.
type keysParams struct {
	Stream string `json:"stream"`
	Seq    int64  `json:"seq,omitempty"`
	Path   []any  `json:"path"`
	Limit  int    `json:"limit,omitempty"`
}

// outlineTooLarge answers a read refused as too large with an outline of
// the value from one snapshot.keys call; if that call fails, with the
// refusal as it was.
func (q *adapterQueries) outlineTooLarge(ctx context.Context, s *session, stream string, segs []pathSegment, tooLarge *toolError) error {
	params := keysParams{Stream: stream, Path: wirePath(segs), Limit: maxOutlineEntries}
	if params.Path == nil {
		params.Path = []any{}
	}
	raw, err := s.request(ctx, "snapshot.keys", params)
	if err != nil {
		return tooLarge
	}
	size, outline, err := parseKeysAnswer(raw, segs)
	if err != nil {
		return tooLarge
	}
	path := formatPath(segs)
	details := map[string]any{"size": size, "limit": q.cfg.MaxPayloadSize, "path": path, "outline": outline}
	at := "the whole state"
	if path != "" {
		at = strconv.Quote(path)
	}
	return newToolError(codePayloadTooLarge, details, "%s of stream %q is %d bytes, over MAX_PAYLOAD_SIZE (%d bytes)",
		at, stream, size, q.cfg.MaxPayloadSize)
}

// parseKeysAnswer reads a snapshot.keys answer for segs: the value's size,
// and its children as outline entries, largest first, at most
// maxOutlineEntries.
func parseKeysAnswer(raw []byte, segs []pathSegment) (int64, []outlineEntry, error) {
	var sizeRaw, childrenRaw []byte
	if err := scanObject(raw, func(key, value []byte) error {
		switch string(key) {
		case "size":
			sizeRaw = value
		case "children":
			childrenRaw = value
		}
		return nil
	}); err != nil {
		return 0, nil, errors.New("not an object")
	}
	size, ok := wireInt(sizeRaw)
	if !ok || size < 0 || rawKind(childrenRaw) != "array" {
		return 0, nil, errors.New("want {size, children: [...]}")
	}
	outline := []outlineEntry{}
	prefix := slices.Clip(segs)
	err := scanArray(childrenRaw, func(i int, v []byte) error {
		var keyRaw, indexRaw, typeRaw, childSize []byte
		if err := scanObject(v, func(key, value []byte) error {
			switch string(key) {
			case "key":
				keyRaw = value
			case "index":
				indexRaw = value
			case "type":
				typeRaw = value
			case "size":
				childSize = value
			}
			return nil
		}); err != nil {
			return fmt.Errorf("children[%d]: not an object", i)
		}
		var seg pathSegment
		if k, ok := wireString(keyRaw); ok {
			seg = pathSegment{Key: k, Quoted: isCanonicalDecimal(k)}
		} else if n, ok := wireInt(indexRaw); ok && n >= 0 {
			seg = pathSegment{Key: strconv.FormatInt(n, 10)}
		} else {
			return fmt.Errorf("children[%d]: want a string key or an integer index", i)
		}
		typ, ok := wireString(typeRaw)
		n, ok2 := wireInt(childSize)
		if !ok || !ok2 || n < 0 {
			return fmt.Errorf("children[%d]: want a type and a size", i)
		}
		outline = append(outline, outlineEntry{Path: formatPath(append(prefix, seg)), Type: typ, Size: int(n)})
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	slices.SortStableFunc(outline, func(a, b outlineEntry) int { return cmp.Compare(b.Size, a.Size) })
	return size, outline[:min(len(outline), maxOutlineEntries)], nil
}

// snapshotAtLocked answers snapshot.get with a path from what the session
// holds, as an app offering snapshot.path would.
func (s *session) snapshotAtLocked(p snapshotParams) (json.RawMessage, error) {
	whole, err := s.snapshotLocked(snapshotParams{Stream: p.Stream, Seq: p.Seq})
	if err != nil {
		return nil, err
	}
	value, miss, err := resolveRaw(rawMember(whole, "state"), pathFromWire(p.Path))
	if err != nil {
		return nil, malformedAnswer("snapshot.get", "state is not valid JSON")
	}
	if miss != nil {
		return nil, &toolError{Code: codePathNotFound, Message: "no value at the path", Details: miss}
	}
	ts := rawMember(whole, "timestamp")
	if ts == nil {
		ts = []byte("null")
	}
	var o jsonObject
	o.raw("seq", rawMember(whole, "seq"))
	o.raw("timestamp", ts)
	o.raw("state", value)
	return o.close(), nil
}
