package main

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// wireCorpus seeds the scanner tests: real wire messages and hostile JSON.
var wireCorpus = []string{
	`{"type":"handshake","protocolVersion":1,"sessionId":"8f6c","adapterVersion":"0.3.1","streams":[{"name":"mmkv","active":true,"instances":["default","auth"]}]}`,
	`{"type":"response","id":"17","result":{"events":[{"stream":"redux","seq":42,"type":"action_dispatched","timestamp":"2026-11-21T10:00:03.120Z","payload":{"durationMs":0.4}}],"hasMore":false}}`,
	`{"type":"response","id":"17","error":{"code":"STREAM_UNAVAILABLE","message":"…","details":{}}}`,
	`{"type":"event","event":{"stream":"navigation","seq":1,"payload":{"from":null,"to":{"name":"Cart"}}}}`,
	` { "a" : [ 1 , -2.5e+3 , true , false , null , "\u00e9\n\"" , { } , [ ] ] } `,
	`{"k\u0065y":1,"key":2}`, `{"":0}`, `{"a":"\ud800"}`, "{\"a\":\"\xff\"}", "{\"\xff\":1}",
	`{}`, `{`, `}`, `[]`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,"a":1}`, `{"a":1}}`, `{"a":01}`, `{"a":1.}`,
	`{"a":.5}`, `{"a":-}`, `{"a":1e}`, `{"a":tru}`, `{"a":nul}`, `{"a":"\x"}`, `{"a":"\u12"}`, "{\"a\":\"\t\"}",
	`{"a":[1 2]}`, `{"a":{"b" 1}}`, `{"a":[}`, `{"a":{]}`, `{"a":1} {}`, `{'a':1}`, "\xef\xbb\xbf{}", `{"a":NaN}`,
	`{"a":` + strings.Repeat("[", 200) + strings.Repeat("]", 200) + `}`,
}

// FuzzScanObject checks the scanner against encoding/json: it accepts
// exactly the objects json.Valid accepts, and yields the same members.
func FuzzScanObject(f *testing.F) {
	for _, s := range wireCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		type member struct{ key, value string }
		var got []member
		err := scanObject(data, func(key, value []byte) error {
			got = append(got, member{string(key), string(value)})
			return nil
		})
		trimmed := bytes.TrimLeft(data, " \t\r\n")
		valid := json.Valid(data) && len(trimmed) > 0 && trimmed[0] == '{'
		if (err == nil) != valid {
			t.Fatalf("scanObject(%q) = %v, json.Valid object = %v", data, err, valid)
		}
		if !valid {
			return
		}
		var want map[string]json.RawMessage
		if err := json.Unmarshal(data, &want); err != nil {
			t.Fatal(err)
		}
		last := make(map[string]json.RawMessage) // encoding/json keeps the last of repeated keys
		for _, m := range got {
			last[m.key] = json.RawMessage(m.value)
			// Only a JSON string is a string: null unmarshals into one too,
			// leaving it empty.
			var s string
			if strings.HasPrefix(m.value, `"`) && json.Unmarshal([]byte(m.value), &s) == nil {
				if ws, ok := wireString([]byte(m.value)); !ok || ws != s {
					t.Errorf("wireString(%s) = %q, %v; want %q", m.value, ws, ok, s)
				}
			}
		}
		if diff := cmp.Diff(last, want); diff != "" {
			t.Errorf("members of %q (-got +want):\n%s", data, diff)
		}
	})
}

func TestScanObjectDepthBound(t *testing.T) {
	t.Parallel()
	deep := `{"a":` + strings.Repeat("[", scanMaxDepth+1) + strings.Repeat("]", scanMaxDepth+1) + `}`
	if err := scanObject([]byte(deep), func(_, _ []byte) error { return nil }); err == nil ||
		!strings.Contains(err.Error(), "nested deeper than 10000") {
		t.Errorf("error = %v, want the depth bound named", err)
	}
	ok := `{"a":` + strings.Repeat("[", scanMaxDepth) + strings.Repeat("]", scanMaxDepth) + `}`
	if err := scanObject([]byte(ok), func(_, _ []byte) error { return nil }); err != nil {
		t.Errorf("nesting at the bound: %v", err)
	}
}

// FuzzResolveRaw checks that slicing a path out of JSON text gives what
// decoding the whole document and walking it gives, hit or miss.
func FuzzResolveRaw(f *testing.F) {
	for _, seed := range []struct{ doc, path string }{
		{`{"a":{"b":[1,{"c":"x"}]}}`, "a.b.1.c"},
		{`{"a":{"b":[1,{"c":"x"}]}}`, "a.b.2"},
		{`{"42":{"x":1},"a.b":2}`, `["42"].x`},
		{`{"42":{"x":1},"a.b":2}`, `["a.b"]`},
		{`{"k":1,"k":2}`, "k"},
		{`[[0,1],[2]]`, "1.0"},
		{`{"":{"":3}}`, `[""][""]`},
		{`{"a":"s"}`, "a.b"},
		{` { "a" : [ 1 , 2 ] } `, "a.1"},
		// Numeric segments: only a canonical decimal indexes (issue 13).
		{`[[],1]`, "-0"},
		{`[0,1]`, "+1"},
		{`[0,1]`, "01"},
		{`[0,1]`, "1e0"},
		{`[[0,1]]`, "0.1"},
		{`[0]`, "99999999999999999999"},
		{`{"0":{"1":2},"-0":3}`, "0.1.x"},
	} {
		f.Add([]byte(seed.doc), seed.path)
	}
	f.Fuzz(func(t *testing.T, doc []byte, path string) {
		segs, err := parsePath(path)
		if err != nil || !json.Valid(doc) {
			return
		}
		decoded, err := decodeState(doc)
		if err != nil {
			return
		}
		raw, rawMissed, err := resolveRaw(doc, segs)
		if err != nil {
			t.Fatalf("resolveRaw(%s, %q) on valid JSON: %v", doc, path, err)
		}
		want, missed := resolvePath(decoded, segs)
		if (rawMissed == nil) != (missed == nil) {
			t.Fatalf("resolveRaw(%s, %q): miss %v, resolvePath miss %v", doc, path, rawMissed, missed)
		}
		if missed != nil {
			if !cmp.Equal(rawMissed, missed) {
				t.Fatalf("resolveRaw(%s, %q) miss %+v, resolvePath miss %+v", doc, path, rawMissed, missed)
			}
			return
		}
		got, err := decodeState(raw)
		if err != nil {
			t.Fatalf("resolveRaw(%s, %q) = %q, not JSON: %v", doc, path, raw, err)
		}
		if !cmp.Equal(got, want) {
			t.Fatalf("resolveRaw(%s, %q) = %s, resolvePath = %v", doc, path, raw, want)
		}
	})
}

func TestRawWalkersRefuseMalformedInput(t *testing.T) {
	for _, doc := range []string{``, `{`, `{"a"`, `{"a":`, `{"a":1`, `{"a":1,`, `{"a" 1}`, `{1:2}`, `[1,`, `[1 2]`, `"x`, `{"a":"x}`} {
		count := 0
		errObject := eachMember([]byte(doc), func(string, []byte) bool { count++; return true })
		errArray := eachElement([]byte(doc), func(int, []byte) bool { count++; return true })
		if errObject == nil && errArray == nil {
			t.Errorf("%q: both walkers accepted it", doc)
		}
		if _, _, err := resolveRaw([]byte(doc), []pathSegment{{Key: "a"}}); err == nil && rawKind([]byte(doc)) == "object" {
			t.Errorf("resolveRaw(%q) accepted malformed JSON", doc)
		}
	}
}

func TestRawOutlineLargestFirst(t *testing.T) {
	doc := []byte(`{"small":1,"big":{"x":"` + strings.Repeat("y", 100) + `"},"mid":[1,2,3,4,5],"a.b":"q"}`)
	got, err := rawOutline(doc, []pathSegment{{Key: "root"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []outlineEntry{
		{Path: "root.big", Type: "object", Size: 108},
		{Path: "root.mid", Type: "array", Size: 11},
		{Path: `root["a.b"]`, Type: "string", Size: 3},
		{Path: "root.small", Type: "number", Size: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("outline (-want +got):\n%s", diff)
	}
	var many strings.Builder
	many.WriteString("[")
	for i := range 50 {
		if i > 0 {
			many.WriteString(",")
		}
		many.WriteString(strings.Repeat("1", i+1))
	}
	many.WriteString("]")
	got, _ = rawOutline([]byte(many.String()), nil)
	if len(got) != maxOutlineEntries || got[0].Path != "49" || got[0].Size != 50 {
		t.Errorf("outline of 50 elements: %d entries, first %+v", len(got), got[0])
	}
}

func TestCompactJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a":1}`:                    `{"a":1}`,
		"{ \"a\" :\n [1, 2] }":       `{"a":[1,2]}`,
		`{"s":"a b\n"}`:              `{"s":"a b\n"}`,
		"{\"s\":\"x y\"  , \"t\":1}": `{"s":"x y","t":1}`,
	} {
		if got := string(compactJSON([]byte(in))); got != want {
			t.Errorf("compactJSON(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestAppendJSONStringMatchesEncodingJSON(t *testing.T) {
	for _, s := range []string{"", "plain", "quote\" back\\slash", "ctl\x00\x01\x1f\t\n\r\b\f", "é ü 日本", "bad\xff\xfeutf8", "\u2028\u2029"} {
		got := appendJSONString(nil, s, false)
		var back string
		if err := json.Unmarshal(got, &back); err != nil {
			t.Fatalf("appendJSONString(%q) = %s: not a JSON string: %v", s, got, err)
		}
		var want string // encoding/json replaces each invalid byte with U+FFFD
		encoded, _ := json.Marshal(s)
		_ = json.Unmarshal(encoded, &want)
		if back != want {
			t.Errorf("appendJSONString(%q) decodes to %q, want %q", s, back, want)
		}
	}
	if got := appendJSONString(nil, "a\xffb", true); !bytes.Equal(got, []byte("\"a\xffb\"")) {
		t.Errorf("verbatim = %q, want the invalid byte kept", got)
	}
}

// TestResolversAgreeOnNumericSegments pins what every numeric-looking
// segment means (docs/tools.md, "Paths": only an unquoted canonical decimal indexes
// an array; anything else is a key) and that the raw and the decoded
// resolver say the same, hit or miss, with the same canonical spelling.
// Issue 13: the raw resolver once read "-0" as index 0.
func TestResolversAgreeOnNumericSegments(t *testing.T) {
	const array = `[10,11,[20,21]]`
	const object = `{"0":{"x":1},"-0":"minus zero","+1":"plus one","01":"leading zero","1e0":"exponent",` +
		`"1":{"0":"one dot zero"},"99999999999999999999":{"y":2}," 1":"space"}`
	objectKeys := []string{" 1", "+1", "-0", "0", "01", "1", "1e0", "99999999999999999999"}
	length3 := map[string]int{"length": 3}
	tests := []struct {
		name, doc, path string
		canonical       string    // formatPath(parsePath(path))
		want            string    // the value's JSON on a hit
		miss            *pathMiss // or the miss
	}{
		{"0 indexes", array, "0", "0", "10", nil},
		{"last index", array, "2.1", "2.1", "21", nil},
		{"past the end", array, "3", "3", "", &pathMiss{Available: length3, Segment: "3"}},
		{"-0 is a key", array, "-0", "-0", "", &pathMiss{Available: length3, Segment: "-0"}},
		{"-1 is a key", array, "-1", "-1", "", &pathMiss{Available: length3, Segment: "-1"}},
		{"+1 is a key", array, "+1", "+1", "", &pathMiss{Available: length3, Segment: "+1"}},
		{"01 is a key", array, "01", `["01"]`, "", &pathMiss{Available: length3, Segment: `["01"]`}},
		{"00 is a key", array, "00", `["00"]`, "", &pathMiss{Available: length3, Segment: `["00"]`}},
		{"1e0 is a key", array, "1e0", "1e0", "", &pathMiss{Available: length3, Segment: "1e0"}},
		{"0x1 is a key", array, "0x1", "0x1", "", &pathMiss{Available: length3, Segment: "0x1"}},
		{"space then digit is a key", array, " 1", " 1", "", &pathMiss{Available: length3, Segment: " 1"}},
		{"digit then space is a key", array, "1 ", "1 ", "", &pathMiss{Available: length3, Segment: "1 "}},
		{"non-ASCII digit is a key", array, "١", "١", "", &pathMiss{Available: length3, Segment: "١"}},
		{"quoted digit is a key", array, `["1"]`, `["1"]`, "", &pathMiss{Available: length3, Segment: `["1"]`}},
		{"1.0 is two indexes", array, "2.0", "2.0", "20", nil},
		{"index into a scalar", array, "0.0", "0.0", "", &pathMiss{ResolvedPrefix: "0", Segment: "0"}},
		{"past int32", array, "2147483648", "2147483648", "", &pathMiss{Available: length3, Segment: "2147483648"}},
		{"max int64", array, "9223372036854775807", "9223372036854775807", "", &pathMiss{Available: length3, Segment: "9223372036854775807"}},
		{"past int64", array, "9223372036854775808", "9223372036854775808", "", &pathMiss{Available: length3, Segment: "9223372036854775808"}},
		{"past uint64", array, "99999999999999999999", "99999999999999999999", "", &pathMiss{Available: length3, Segment: "99999999999999999999"}},
		{"huge after an index", array, "2.99999999999999999999", "2.99999999999999999999", "",
			&pathMiss{ResolvedPrefix: "2", Available: map[string]int{"length": 2}, Segment: "99999999999999999999"}},

		// On an object every segment names the key it spells.
		{"bare 0 names a key", object, "0.x", "0.x", "1", nil},
		{"quoted 0 names a key", object, `["0"].x`, `["0"].x`, "1", nil},
		{"-0 names a key", object, "-0", "-0", `"minus zero"`, nil},
		{"+1 names a key", object, "+1", "+1", `"plus one"`, nil},
		{"01 names a key", object, "01", `["01"]`, `"leading zero"`, nil},
		{"1e0 names a key", object, "1e0", "1e0", `"exponent"`, nil},
		{"1.0 names two keys", object, "1.0", "1.0", `"one dot zero"`, nil},
		{"huge names a key", object, "99999999999999999999.y", "99999999999999999999.y", "2", nil},
		{"space names a key", object, " 1", " 1", `"space"`, nil},
		{"absent digit key", object, "2", "2", "", &pathMiss{Available: objectKeys, Segment: "2"}},
		{"absent -1", object, "-1", "-1", "", &pathMiss{Available: objectKeys, Segment: "-1"}},
		// A miss below a digit key reports the prefix as the key it named.
		{"miss below bare 0", object, "0.z", "0.z", "", &pathMiss{ResolvedPrefix: `["0"]`, Available: []string{"x"}, Segment: "z"}},
		{"miss below 1.0", object, "1.0.z", "1.0.z", "", &pathMiss{ResolvedPrefix: `["1"]["0"]`, Segment: "z"}},
		{"miss below huge", object, "99999999999999999999.z", "99999999999999999999.z", "",
			&pathMiss{ResolvedPrefix: `["99999999999999999999"]`, Available: []string{"y"}, Segment: "z"}},
		{"regression: -0 in a nested empty array", `[[]]`, "-0", "-0", "", &pathMiss{Available: map[string]int{"length": 1}, Segment: "-0"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			segs, err := parsePath(tt.path)
			if err != nil {
				t.Fatalf("parsePath(%q): %v", tt.path, err)
			}
			if got := formatPath(segs); got != tt.canonical {
				t.Errorf("formatPath(parsePath(%q)) = %q, want %q", tt.path, got, tt.canonical)
			}
			again, err := parsePath(tt.canonical)
			if err != nil || !cmp.Equal(again, segs) {
				t.Errorf("canonical %q parses as %+v (%v), want %+v", tt.canonical, again, err, segs)
			}
			raw, rawMissed, err := resolveRaw([]byte(tt.doc), segs)
			if err != nil {
				t.Fatalf("resolveRaw: %v", err)
			}
			decoded, missed := resolvePath(decodeStateJSON(t, tt.doc), segs)
			if diff := cmp.Diff(tt.miss, rawMissed); diff != "" {
				t.Errorf("resolveRaw(%s, %q) miss (-want +got):\n%s", tt.doc, tt.path, diff)
			}
			if diff := cmp.Diff(tt.miss, missed); diff != "" {
				t.Errorf("resolvePath(%s, %q) miss (-want +got):\n%s", tt.doc, tt.path, diff)
			}
			if tt.miss != nil {
				return
			}
			if string(raw) != tt.want {
				t.Errorf("resolveRaw(%s, %q) = %s, want %s", tt.doc, tt.path, raw, tt.want)
			}
			if diff := cmp.Diff(decodeStateJSON(t, tt.want), decoded); diff != "" {
				t.Errorf("resolvePath(%s, %q) (-want +got):\n%s", tt.doc, tt.path, diff)
			}
		})
	}
}

func TestValidUTF8(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"é 日本 😀 \uFFFD", "é 日本 😀 \uFFFD"},
		{"a\xff\xfeb", "a\uFFFD\uFFFDb"},                 // issue 11: two bytes, two U+FFFD
		{"x\xe6\x97", "x\uFFFD\uFFFD"},                   // a truncated sequence, byte by byte
		{"\xed\xa0\x80", "\uFFFD\uFFFD\uFFFD"},           // an encoded surrogate
		{"\xc0\xaf", "\uFFFD\uFFFD"},                     // an overlong encoding
		{"\x80\xbf", "\uFFFD\uFFFD"},                     // lone continuation bytes
		{"\xf4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"}, // past U+10FFFF
		{"{\"k\xff\":\"v\"}", "{\"k\uFFFD\":\"v\"}"},
	} {
		if got := string(validUTF8([]byte(tt.in))); got != tt.want {
			t.Errorf("validUTF8(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// FuzzValidUTF8 checks the one replacement rule against encoding/json, which
// defines it: validUTF8 gives what a round trip through encoding/json gives,
// and what appendJSONString's string decodes to, and leaves valid text alone.
func FuzzValidUTF8(f *testing.F) {
	for _, s := range []string{"", "a\xff\xfeb", "x\xe6\x97", "\xed\xa0\x80", "é\x80😀", "\xf0\x9f\x98"} {
		f.Add([]byte(s))
	}
	for _, s := range wireCorpus {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := validUTF8(data)
		if !utf8.Valid(got) {
			t.Fatalf("validUTF8(%q) = %q, not valid UTF-8", data, got)
		}
		if utf8.Valid(data) && !bytes.Equal(got, data) {
			t.Fatalf("validUTF8 changed valid UTF-8 %q to %q", data, got)
		}
		encoded, err := json.Marshal(string(data))
		if err != nil {
			t.Fatal(err)
		}
		var want string
		if err := json.Unmarshal(encoded, &want); err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("validUTF8(%q) = %q, encoding/json gives %q", data, got, want)
		}
		var viaString string
		if err := json.Unmarshal(appendJSONString(nil, data, false), &viaString); err != nil || viaString != want {
			t.Fatalf("appendJSONString(%q) decodes to %q (%v), want %q", data, viaString, err, want)
		}
		// In a JSON document the repair keeps the document valid and means
		// what encoding/json decodes from the original. (reflect.DeepEqual:
		// cmp.Equal takes seconds on the corpus's 200-deep nesting.)
		// Numbers decode as json.Number: a valid document may hold numbers
		// past float64's range.
		if json.Valid(data) {
			before, err1 := decodeState(data)
			after, err2 := decodeState(got)
			if err1 != nil || err2 != nil || !reflect.DeepEqual(before, after) {
				t.Fatalf("validUTF8 changed the meaning of %q: %v (%v), then %v (%v)", data, before, err1, after, err2)
			}
		}
	})
}
