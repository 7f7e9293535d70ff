package main

// config_values.go reads the values of settings: switches, on/off, integer
// ranges and comma lists. config.go's table names which reader each
// setting uses.

import (
	"fmt"
	"strings"
)

// parseSwitch reads a boolean setting.
func parseSwitch(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not one of true, false", v)
}

// parseOnOff reads a setting that is on or off (any case), and nothing else.
func parseOnOff(v string) (bool, error) {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not one of on, off", v)
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
