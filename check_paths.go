package main

// check_paths.go checks the optional path requests (docs/protocol.md §4 "Paths
// in requests"): for paths picked from the adapter's own state, the
// answers of snapshot.get with a path and of snapshot.keys must be what
// resolving the path in the whole snapshot gives, as the server's own
// resolver (json_path.go) resolves it.

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
)

// checkPath is a path picked from a state, as sent on the wire;
// pathFromWire reads it as the server does (a string is always a key).
type checkPath struct {
	why  string // what kind of path it is, for the report
	wire []any  // strings and ints
}

// maxCheckWalk bounds the nodes pickPaths visits in a large state.
const maxCheckWalk = 5000

// pickPaths picks, from a decoded state, paths of every kind the rules
// distinguish: the root, object keys near and deep, array elements, keys
// that need escaping, a key of digits sent as an integer, and paths that
// must miss (a missing key, an index past the end, a step into a scalar,
// "-0" on an array).
func pickPaths(root any) []checkPath {
	paths := []checkPath{{why: "the root", wire: []any{}}}
	var misses []checkPath // asked last: a wrong hit is the clearer report
	found := map[string]bool{}
	addTo := func(list *[]checkPath, kind string, wire []any) {
		if !found[kind] {
			found[kind] = true
			*list = append(*list, checkPath{why: kind, wire: slices.Clone(wire)})
		}
	}
	add := func(kind string, wire []any) { addTo(&paths, kind, wire) }
	addMiss := func(kind string, wire []any) { addTo(&misses, kind, wire) }
	type node struct {
		value any
		wire  []any
	}
	queue := []node{{root, nil}}
	for visited := 0; len(queue) > 0 && visited < maxCheckWalk; visited++ {
		n := queue[0]
		queue = queue[1:]
		switch v := n.value.(type) {
		case map[string]any:
			if len(n.wire) == 0 {
				addMiss("a missing key", []any{"check-adapter: no such key"})
			}
			for _, key := range slices.Sorted(maps.Keys(v)) {
				wire := append(slices.Clip(n.wire), key)
				switch {
				case isCanonicalDecimal(key) && len(key) < 10:
					add("a key of digits, as a string", wire)
					i, _ := strconv.Atoi(key)
					add("a key of digits, as an integer", append(slices.Clip(n.wire), i))
				case needsQuoting(key):
					add("a key that needs escaping", wire)
				case len(wire) == 1:
					add("a top-level key", wire)
				case len(wire) >= 3:
					add("a nested key", wire)
				}
				queue = append(queue, node{v[key], wire})
			}
		case []any:
			addMiss("an index past the end", append(slices.Clip(n.wire), len(v)))
			if len(v) > 0 {
				addMiss(`"-0" on an array`, append(slices.Clip(n.wire), "-0"))
				addMiss(`"0" as a string on an array`, append(slices.Clip(n.wire), "0"))
			}
			for i, e := range v {
				wire := append(slices.Clip(n.wire), i)
				add("an array element", wire)
				queue = append(queue, node{e, wire})
			}
		default:
			if len(n.wire) > 0 {
				addMiss("a step into a scalar", append(slices.Clip(n.wire), "x"))
			}
		}
	}
	return append(paths, misses...)
}

func checkSnapshotPath(ctx context.Context, k *checkKit) *checkOutcome {
	return checkEachPath(ctx, k, "snapshot.get", checkPathValue)
}

// checkPathAnswer is an answer to a request with a path that resolves in
// the whole state, and what the answer is held to.
type checkPathAnswer struct {
	sent   string // the request, for the report
	path   checkPath
	seq    int64 // the snapshot's seq, sent with the path
	root   any   // the whole state
	want   any   // the value at the path
	result json.RawMessage
}

// checkEachPath sends method with each path picked from each stream's
// state. An answer to a path that misses must be PATH_NOT_FOUND; an answer
// to a path that resolves must be a result, which check judges.
func checkEachPath(ctx context.Context, k *checkKit, method string, check func(checkPathAnswer) *checkOutcome) *checkOutcome {
	names, out := k.snapshotStreams(ctx)
	if out != nil {
		return out
	}
	for _, name := range names {
		snap, fail := k.snapshot(ctx, map[string]any{"stream": name})
		if fail != nil {
			return fail
		}
		seq := *snap.Seq
		root, err := decodeState(snap.State)
		if err != nil {
			return checkFailed(checkSent("snapshot.get", map[string]any{"stream": name}), "a state that is not JSON: %v", err)
		}
		for _, p := range pickPaths(root) {
			params := map[string]any{"stream": name, "seq": seq, "path": p.wire}
			sent := checkSent(method, params) + " (" + p.why + ")"
			raw, miss, err := resolveRaw(snap.State, pathFromWire(p.wire))
			var want any
			if err == nil && miss == nil {
				want, err = decodeState(raw)
			}
			if err != nil {
				return checkFailed(sent, "a state the server cannot walk: %v", err)
			}
			a, err := k.conn.request(ctx, method, params)
			if out := k.answerShape(sent, a, err); out != nil {
				return out
			}
			if miss != nil {
				if out := checkPathMiss(sent, a, p, miss); out != nil {
					return out
				}
				continue
			}
			if a.err != nil {
				return checkFailed(sent, "error %s: %s; the path resolves in the whole state", a.err.Code, a.err.Message)
			}
			if out := check(checkPathAnswer{sent: sent, path: p, seq: seq, root: root, want: want, result: a.result}); out != nil {
				return out
			}
		}
	}
	return nil
}

// checkPathValue checks a snapshot.get answer: the seq asked for, and the
// value at the path as the state.
func checkPathValue(a checkPathAnswer) *checkOutcome {
	var got checkSnapshot
	if err := json.Unmarshal(a.result, &got); err != nil || got.Seq == nil || got.State == nil {
		return checkFailed(a.sent, "%s, not {seq, timestamp, state}", clipJSON(a.result))
	}
	if *got.Seq != a.seq {
		return checkFailed(a.sent, "seq %d, not the %d asked for", *got.Seq, a.seq)
	}
	gotValue, _ := decodeState(got.State)
	if !checkEqualValues(gotValue, a.want) {
		what := clipJSON(got.State)
		if len(a.path.wire) > 0 && checkEqualValues(gotValue, a.root) {
			what = fmt.Sprintf("the whole state (%d bytes)", len(got.State))
		}
		wantJSON, _ := json.Marshal(a.want)
		return checkFailed(a.sent, "%s; the value at the path is %s", what, clipJSON(wantJSON))
	}
	return nil
}

// checkPathMiss checks the answer to a path that does not resolve:
// PATH_NOT_FOUND, with a resolvedPrefix as long as the part that resolves
// and an available that describes the value there.
func checkPathMiss(sent string, a checkAnswer, p checkPath, miss *pathMiss) *checkOutcome {
	if a.err == nil {
		return checkFailed(sent, "a result, %s; the path does not resolve (no %s at %q)", clipJSON(a.result), miss.Segment, miss.ResolvedPrefix)
	}
	if a.err.Code != wireCodePathNotFound {
		return checkFailed(sent, "error %s (%s), not PATH_NOT_FOUND", a.err.Code, a.err.Message)
	}
	prefix, _ := parsePath(miss.ResolvedPrefix)
	var details struct {
		ResolvedPrefix *[]any          `json:"resolvedPrefix"`
		Available      json.RawMessage `json:"available"`
	}
	if err := json.Unmarshal(a.err.Details, &details); err != nil || details.ResolvedPrefix == nil {
		return checkFailed(sent, "PATH_NOT_FOUND without details.resolvedPrefix as a segment array: %s", clipJSON(a.err.Details))
	}
	if got := len(*details.ResolvedPrefix); got != len(prefix) {
		return checkFailed(sent, "resolvedPrefix %s of %d segments; %d of the path resolve", clipJSON(mustCheckJSON(*details.ResolvedPrefix)), got, len(prefix))
	}
	wantKind := map[bool]string{true: "array", false: "null"}[miss.Available != nil]
	if _, ok := miss.Available.(map[string]int); ok {
		wantKind = "object"
	}
	if got := rawKind(details.Available); got != wantKind && !(wantKind == "null" && details.Available == nil) {
		return checkFailed(sent, "available is %s %s; at %q it should be %s", checkArticle(got), got, miss.ResolvedPrefix, wantKind)
	}
	return nil
}

func checkArticle(kind string) string {
	if kind != "" && slices.Contains([]byte("aeiou"), kind[0]) {
		return "an"
	}
	return "a"
}

func mustCheckJSON(v any) []byte {
	data, _ := json.Marshal(v)
	return data
}

// checkKeysAnswer is a snapshot.keys answer.
type checkKeysAnswer struct {
	Seq      *int64 `json:"seq"`
	Type     string `json:"type"`
	Size     *int64 `json:"size"`
	Total    *int   `json:"total"`
	Length   *int   `json:"length"`
	Children *[]struct {
		Key   *string `json:"key"`
		Index *int    `json:"index"`
		Type  string  `json:"type"`
		Size  int64   `json:"size"`
	} `json:"children"`
}

func checkSnapshotKeys(ctx context.Context, k *checkKit) *checkOutcome {
	return checkEachPath(ctx, k, "snapshot.keys", checkKeys)
}

// checkKeys compares a snapshot.keys answer with the value it describes.
func checkKeys(a checkPathAnswer) *checkOutcome {
	sent, raw, value := a.sent, a.result, a.want
	var ans checkKeysAnswer
	if err := json.Unmarshal(raw, &ans); err != nil || ans.Seq == nil || ans.Size == nil || ans.Total == nil || ans.Children == nil {
		return checkFailed(sent, "%s, not {seq, timestamp, type, size, total, children}", clipJSON(raw))
	}
	valueJSON, _ := json.Marshal(value)
	wantType := rawKind(valueJSON)
	var wantChildren []string
	switch v := value.(type) {
	case map[string]any:
		for key := range v {
			wantChildren = append(wantChildren, strconv.Quote(key))
		}
	case []any:
		for i := range v {
			wantChildren = append(wantChildren, strconv.Itoa(i))
		}
		if ans.Length == nil || *ans.Length != len(v) {
			return checkFailed(sent, "length %v for an array of %d elements", ans.Length, len(v))
		}
	}
	if ans.Type != wantType {
		return checkFailed(sent, "type %q for %s %s", ans.Type, checkArticle(wantType), wantType)
	}
	if *ans.Total != len(wantChildren) {
		return checkFailed(sent, "total %d; the value has %d children", *ans.Total, len(wantChildren))
	}
	var got []string
	for i, c := range *ans.Children {
		switch {
		case wantType == "object" && c.Key != nil:
			got = append(got, strconv.Quote(*c.Key))
		case wantType == "array" && c.Index != nil:
			got = append(got, strconv.Itoa(*c.Index))
		default:
			return checkFailed(sent, "children[%d] has no %s", i, map[bool]string{true: "key", false: "index"}[wantType == "object"])
		}
		if i > 0 && c.Size > (*ans.Children)[i-1].Size {
			return checkFailed(sent, "children[%d] (%d bytes) is larger than children[%d] (%d bytes): not largest first", i, c.Size, i-1, (*ans.Children)[i-1].Size)
		}
	}
	slices.Sort(got)
	slices.Sort(wantChildren)
	if !slices.Equal(got, wantChildren) {
		return checkFailed(sent, "children %s; the value's are %s", clipJSON(mustCheckJSON(got)), clipJSON(mustCheckJSON(wantChildren)))
	}
	return nil
}
