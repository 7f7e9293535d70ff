package main

// resolvePath is the test oracle of path resolution: it walks a decoded
// value where the product (resolveRaw in json_raw.go) walks the bytes, and
// the tests hold the two to the same answers.

// resolvePath walks root, a value as encoding/json decodes it into any with
// UseNumber, along segs. On an object a segment names the key it spells; on
// an array an unquoted canonical decimal names that index; anything else
// (including any step into a scalar or null) is a miss, described by the
// returned pathMiss.
func resolvePath(root any, segs []pathSegment) (any, *pathMiss) {
	node := root
	for i, seg := range segs {
		switch n := node.(type) {
		case map[string]any:
			if v, ok := n[seg.Key]; ok {
				node = v
				continue
			}
		case []any:
			if idx, ok := parseIndex(seg); ok && idx < len(n) {
				node = n[idx]
				continue
			}
		}
		return nil, newPathMiss(root, segs[:i], node, seg)
	}
	return node, nil
}

// newPathMiss describes a miss at seg after resolved led from root to node.
// It runs only on a miss, so it can afford to walk the prefix again.
func newPathMiss(root any, resolved []pathSegment, node any, seg pathSegment) *pathMiss {
	var prefix []byte
	at := root
	for _, s := range resolved {
		switch n := at.(type) {
		case map[string]any:
			prefix = appendPathKey(prefix, s.Key)
			at = n[s.Key]
		case []any:
			idx, _ := parseIndex(s)
			prefix = appendPathIndex(prefix, idx)
			at = n[idx]
		}
	}
	miss := &pathMiss{
		ResolvedPrefix: string(prefix),
		Segment:        string(appendPathSegment(nil, seg)),
	}
	switch n := node.(type) {
	case map[string]any:
		miss.Available = smallestKeys(n, maxAvailableKeys)
		if len(n) > maxAvailableKeys {
			miss.AvailableTotal = len(n)
		}
	case []any:
		miss.Available = map[string]int{"length": len(n)}
	}
	return miss
}
