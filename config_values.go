package main

// config_values.go reads the values of settings: switches, integer
// ranges and comma lists. config.go's table names which reader each
// setting uses.

import (
	"fmt"
	"net"
	"slices"
	"strings"
)

// switchWords are the words of every boolean setting, in any case.
var switchWords = map[string]bool{"true": true, "1": true, "yes": true, "on": true,
	"false": false, "0": false, "no": false, "off": false}

// setSwitch reads a boolean setting into b: every one reads the same words.
func setSwitch(b *bool, v string) error {
	on, ok := switchWords[strings.ToLower(strings.TrimSpace(v))]
	if !ok {
		return fmt.Errorf("%q is not one of true, false, 1, 0, yes, no, on, off", v)
	}
	*b = on
	return nil
}

// setInt reads an integer setting in lo-hi into n.
func setInt[T ~int | ~int64](n *T, v string, lo, hi int64) error {
	x, inRange, ok := decimalInteger([]byte(strings.TrimSpace(v)))
	switch {
	case !ok:
		return fmt.Errorf("%q is not an integer", v)
	case !inRange:
		return fmt.Errorf("%s is outside %d-%d", strings.TrimSpace(v), lo, hi)
	case x < lo || x > hi:
		return fmt.Errorf("%d is outside %d-%d", x, lo, hi)
	}
	*n = T(x)
	return nil
}

// setWord reads a setting that is one of words, in any case, into w.
func setWord(w *string, v string, words ...string) error {
	if word := strings.ToLower(strings.TrimSpace(v)); slices.Contains(words, word) {
		*w = word
		return nil
	}
	return fmt.Errorf("%q is not one of %s", v, strings.Join(words, ", "))
}

// splitList splits a comma list, trims and lower-cases the items, drops
// empty ones and checks each with valid, when set.
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
		if valid != nil {
			if err := valid(item); err != nil {
				return nil, err
			}
		}
		out = append(out, item)
	}
	return out, nil
}

// validItem makes a list item's check from a test: an item that fails it is
// named, followed by problem.
func validItem(valid func(string) bool, problem string) func(string) error {
	return func(item string) error {
		if !valid(item) {
			return fmt.Errorf("%q %s", item, problem)
		}
		return nil
	}
}

// validHost reports whether h is a host name or an IP address, no port.
func validHost(h string) bool { return net.ParseIP(h) != nil || validHostName(h) }

// parseHostPort reads host:port, the port 1-65535, and writes it back as
// net.JoinHostPort does.
func parseHostPort(v string) (string, error) {
	host, port, err := net.SplitHostPort(strings.TrimSpace(v))
	if err != nil || !validHost(host) || !validPort(port) || port == "" {
		return "", fmt.Errorf("%q is not host:port (port 1-65535)", v)
	}
	return net.JoinHostPort(host, port), nil
}
