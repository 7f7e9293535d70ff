package main

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"
)

// encodeURI is JavaScript's encodeURI, as Expo applies it to the project
// root: every byte of a character outside its unescaped set becomes %XX.
func encodeURI(s string) string {
	const unescaped = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789" +
		";,/?:@&=+$#" + "-_.!~*'()"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < utf8.RuneSelf && strings.IndexByte(unescaped, c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

func TestEncodeURIAsJavaScript(t *testing.T) {
	// encodeURI("/Users/ana/shop app/Café/100%+x#y") in Node.
	if got, want := encodeURI("/Users/ana/shop app/Café/100%+x#y"), "/Users/ana/shop%20app/Caf%C3%A9/100%25+x#y"; got != want {
		t.Errorf("encodeURI = %q, want %q", got, want)
	}
}

func TestMetroProjectRoot(t *testing.T) {
	for _, tc := range []struct {
		name   string
		header http.Header
		want   string
	}{
		{"expo: a space and a non-ASCII letter", http.Header{"X-React-Native-Project-Root": {"/Users/ana/shop%20app/Caf%C3%A9"}}, "/Users/ana/shop app/Café"},
		{"expo: a literal percent sign", http.Header{"X-React-Native-Project-Root": {"/Users/ana/100%25%20done"}}, "/Users/ana/100% done"},
		{"expo: '+' and '#' are not escaped by encodeURI and stay", http.Header{"X-React-Native-Project-Root": {"/w/c++/a#b"}}, "/w/c++/a#b"},
		{"expo: plain ASCII", http.Header{"X-React-Native-Project-Root": {"/Users/ana/shop"}}, "/Users/ana/shop"},
		{"sent as it is: a space beside a percent sign", http.Header{"X-React-Native-Project-Root": {"/Users/ana/100% done"}}, "/Users/ana/100% done"},
		{"sent as it is: an escape that is not two hex digits", http.Header{"X-React-Native-Project-Root": {"/Users/ana/50%off"}}, "/Users/ana/50%off"},
		{"sent as it is: a truncated escape", http.Header{"X-React-Native-Project-Root": {"/Users/ana/x%2"}}, "/Users/ana/x%2"},
		{"escapes that are no UTF-8", http.Header{"X-React-Native-Project-Root": {"/Users/ana/%FF%FE"}}, "/Users/ana/%FF%FE"},
		{"react native cli: Project-Root as it is", http.Header{"Project-Root": {"/Users/ana/shop%20app"}}, "/Users/ana/shop%20app"},
		{"expo's header first", http.Header{"Project-Root": {"/other"}, "X-React-Native-Project-Root": {"/a%20b"}}, "/a b"},
		{"none", http.Header{}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := metroProjectRoot(tc.header); got != tc.want {
				t.Errorf("metroProjectRoot = %q, want %q", got, tc.want)
			}
		})
	}
	// Header names are matched in any case, as HTTP has them: both
	// spellings as a server may send them, through a real parse.
	for _, name := range []string{"X-React-Native-Project-Root", "x-react-native-project-root", "Project-Root", "project-root"} {
		h := http.Header{}
		h.Set(name, encodeURI("/Users/ana/shop app"))
		want := "/Users/ana/shop app"
		if strings.EqualFold(name, "project-root") {
			want = encodeURI(want) // the React Native CLI's header is never encoded
		}
		if got := metroProjectRoot(h); got != want {
			t.Errorf("%s: metroProjectRoot = %q, want %q", name, got, want)
		}
	}
}

// TestSymbolicateEncodedProjectRoot: under Expo, a project whose path holds
// a space and a non-ASCII letter gets paths relative to it, with either
// spelling of the header.
func TestSymbolicateEncodedProjectRoot(t *testing.T) {
	const root = "/Users/ana/shop app/Café"
	for _, header := range []string{"X-React-Native-Project-Root", "x-react-native-project-root"} {
		t.Run(header, func(t *testing.T) {
			fm := startFakeMetro(t)
			fm.mu.Lock()
			fm.header, fm.root = header, encodeURI(root)
			fm.sources[fakeBundlePos{48211, 16}] = fakeSource{root + "/src/CartButton.tsx", 42, 8, "handleAdd", false}
			fm.mu.Unlock()
			m, _ := newTestSymbolicator(t, fm)
			got, err := m.mapStacks(t.Context(), []jsStack{testStack()})
			if err != nil {
				t.Fatal(err)
			}
			if got[0][0].File != "src/CartButton.tsx" {
				t.Errorf("file = %q, want src/CartButton.tsx", got[0][0].File)
			}
		})
	}
}

// FuzzDecodeProjectRoot: whatever path Expo encodes comes back as it was,
// and only a value encodeURI could have made (escapes, no space) is
// decoded, to shorter valid UTF-8.
func FuzzDecodeProjectRoot(f *testing.F) {
	for _, s := range []string{"/Users/ana/shop", "/Users/ana/shop app/Café", "/w/100%/a+b#c", "C:\\Users\\Zoë\\app", "/tmp/日本語", "/x/%41", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, path string) {
		if !utf8.ValidString(path) {
			return
		}
		if got := decodeProjectRoot(encodeURI(path)); got != path {
			t.Errorf("decodeProjectRoot(encodeURI(%q)) = %q", path, got)
		}
		got := decodeProjectRoot(path)
		if got != path && (!strings.Contains(path, "%") || strings.ContainsAny(path, " ") || !utf8.ValidString(got) || len(got) >= len(path)) {
			t.Errorf("decodeProjectRoot(%q) = %q: decoded a value encodeURI cannot have made", path, got)
		}
	})
}
