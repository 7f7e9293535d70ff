package main

// config_values.go reads the values of settings: switches, integer
// ranges and comma lists. config.go's table names which reader each
// setting uses.

import (
	"fmt"
	"strings"
)

// switchWords are the words of every boolean setting, in any case.
var switchWords = map[string]bool{"true": true, "1": true, "yes": true, "on": true,
	"false": false, "0": false, "no": false, "off": false}

// parseSwitch reads a boolean setting: every one reads the same words.
func parseSwitch(v string) (bool, error) {
	b, ok := switchWords[strings.ToLower(strings.TrimSpace(v))]
	if !ok {
		return false, fmt.Errorf("%q is not one of true, false, 1, 0, yes, no, on, off", v)
	}
	return b, nil
}

func parseIntRange(v string, lo, hi int64) (int64, error) {
	n, inRange, ok := decimalInteger([]byte(strings.TrimSpace(v)))
	switch {
	case !ok:
		return 0, fmt.Errorf("%q is not an integer", v)
	case !inRange:
		return 0, fmt.Errorf("%s is outside %d-%d", strings.TrimSpace(v), lo, hi)
	case n < lo || n > hi:
		return 0, fmt.Errorf("%d is outside %d-%d", n, lo, hi)
	}
	return n, nil
}

// splitList splits a comma list, trims and lower-cases the items, drops
// empty ones and checks each with valid.
func splitList(v string, valid func(string) error) ([]string, error) {
	return splitListCase(strings.ToLower(v), valid)
}

// splitListCase is splitList keeping each item's case: package and bundle
// ids are case-sensitive.
func splitListCase(v string, valid func(string) error) ([]string, error) {
	var out []string
	for item := range strings.SplitSeq(v, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if err := valid(item); err != nil {
			return nil, err
		}
		out = append(out, item)
	}
	return out, nil
}
