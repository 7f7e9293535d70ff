package main

// session_pushdown.go moves only the asked part of a state over the wire. An app
// that names capSnapshotPath in its handshake resolves paths itself:
// snapshot.get with a `path` answers just the value there, so reading one
// leaf of a 5 MB store costs what it costs on a 5 KB one. Apps that do not
// offer it send the whole state, which session_queries.go slices.
//
// A value too large for one frame is refused by the app (or dropped by
// wire_conn.go) with PAYLOAD_TOO_LARGE. The server does not ask snapshot.keys
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

// stateAtPushed reads the value at segs of stream's current state by asking
// the app for that value only.
func (q *adapterQueries) stateAtPushed(ctx context.Context, s *session, stream, path string, segs []pathSegment) (snapshot, []byte, error) {
	snap, err := q.fetchSnapshotWith(ctx, s, snapshotParams{Stream: stream, Path: wirePath(segs)})
	if err == nil {
		return snap, compactJSON(snap.state), nil
	}
	switch e := err.(type) {
	case *errPathNotFound: // answered from the session's buffers, or by a bridge
		return snapshot{}, nil, notFound(path, e.Miss)
	case *errAdapterAnswered:
		switch {
		case e.Code == wireCodePathNotFound:
			miss, perr := pathMissFromAnswer(e.Details, segs)
			if perr != nil {
				return snapshot{}, nil, malformedAnswer("snapshot.get", "PATH_NOT_FOUND details: "+perr.Error())
			}
			return snapshot{}, nil, notFound(path, miss)
		case e.Code == wireCodePayloadTooLarge && s.offers(capSnapshotKeys):
			return snapshot{}, nil, q.outlineTooLarge(ctx, s, stream, segs, err)
		}
	case *errFrameTooLarge:
		if s.offers(capSnapshotKeys) {
			return snapshot{}, nil, q.outlineTooLarge(ctx, s, stream, segs, err)
		}
	}
	return snapshot{}, nil, err
}

// pathMissFromAnswer reads the details of a PATH_NOT_FOUND answer to a
// request for segs: the app's {resolvedPrefix: [segments], available: [keys]
// or {length}, availableTotal?}.
func pathMissFromAnswer(raw []byte, segs []pathSegment) (*pathMiss, error) {
	var prefixRaw, availableRaw, totalRaw []byte
	if err := scanFields(raw, map[string]*[]byte{"resolvedPrefix": &prefixRaw, "available": &availableRaw, "availableTotal": &totalRaw}); err != nil {
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
	default: // absent ("nothing") is malformed too: the protocol requires available
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

// outlineTooLarge is the outline the header describes, or, when the
// snapshot.keys call fails, the refusal as it was.
func (q *adapterQueries) outlineTooLarge(ctx context.Context, s *session, stream string, segs []pathSegment, tooLarge error) error {
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
	return &errValueTooLarge{Stream: stream, Path: formatPath(segs), Size: size, Limit: q.cfg.MaxPayloadSize, Outline: outline}
}

// parseKeysAnswer reads a snapshot.keys answer for segs: the value's size,
// and its children as outline entries, largest first, at most
// maxOutlineEntries.
func parseKeysAnswer(raw []byte, segs []pathSegment) (int64, []outlineEntry, error) {
	var sizeRaw, childrenRaw []byte
	if err := scanFields(raw, map[string]*[]byte{"size": &sizeRaw, "children": &childrenRaw}); err != nil {
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
		if err := scanFields(v, map[string]*[]byte{"key": &keyRaw, "index": &indexRaw, "type": &typeRaw, "size": &childSize}); err != nil {
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
		return nil, notFound(formatPath(pathFromWire(p.Path)), miss)
	}
	var o jsonObject
	o.raw("seq", rawMember(whole, "seq"))
	o.raw("timestamp", orNull(rawMember(whole, "timestamp")))
	o.raw("state", value)
	return o.close(), nil
}
