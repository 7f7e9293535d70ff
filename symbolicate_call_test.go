package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The product's own client maps through Metro, and follows no redirect
// elsewhere: only Metro is dialled.
func TestSymbolicateProductClient(t *testing.T) {
	fm := startFakeMetro(t)
	m := newSymbolicator(fm.srv.URL)
	t.Cleanup(m.close)
	if got, err := m.mapStacks(t.Context(), []jsStack{testStackAt(fm.bundleOf())}); err != nil || !got[0][0].Mapped {
		t.Fatalf("err %v, mapped %v", err, got[0][0].Mapped)
	}
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	gone := newSymbolicator(closed.URL)
	t.Cleanup(gone.close)
	var unreachable *errMetro
	goneBundle := strings.Replace(deviceBundle, "10.0.2.2:8081", strings.TrimPrefix(closed.URL, "http://"), 1)
	if _, err := gone.mapStacks(t.Context(), []jsStack{testStackAt(goneBundle)}); !isMetroErr(err, &unreachable, metroUnreachable) || unreachable.Origin != closed.URL {
		t.Errorf("a Metro not running: err %v", err)
	}
	elsewhere := startFakeMetro(t)
	redirected := startFakeMetro(t)
	redirected.redirect = elsewhere.srv.URL + "/symbolicate"
	m2 := newSymbolicator(redirected.srv.URL)
	t.Cleanup(m2.close)
	_, err := m2.mapStacks(t.Context(), []jsStack{testStackAt(redirected.bundleOf())})
	var refused *errMetro
	if !isMetroErr(err, &refused, metroRefused) || refused.Status != http.StatusTemporaryRedirect || elsewhere.postCount() != 0 {
		t.Errorf("a redirect: err %v, %d requests elsewhere; want a 307 refusal, none", err, elsewhere.postCount())
	}
}

// FuzzReadSymbolicateAnswer: whatever Metro answers, every frame asked
// gets an answer, a mapped one names a file that is no URL, a line and a
// 1-based column; an answer written from frames reads back as them.
func FuzzReadSymbolicateAnswer(f *testing.F) {
	keys := []symbolicateKey{{deviceBundle, 1, 0}, {deviceBundle, 2, 5}, {deviceBundle, 3, 9}}
	method := map[symbolicateKey]string{keys[0]: "a"}
	f.Add(`{"stack":[{"file":"/p/src/a.ts","lineNumber":4,"column":2,"methodName":"f","devtoolsMcpFrame":1,"collapse":true}],"codeFrame":null}`)
	f.Add(`{"stack":[{"file":"` + deviceBundle + `","lineNumber":1,"column":0,"devtoolsMcpFrame":0},{"file":null,"lineNumber":null,"column":null,"devtoolsMcpFrame":2}]}`)
	f.Add(`{"stack":[{"devtoolsMcpFrame":1e300},{"devtoolsMcpFrame":-1},{"devtoolsMcpFrame":"0"},{"file":"x","lineNumber":0.5,"column":1,"devtoolsMcpFrame":0}]}`)
	f.Add(`{"stack":null}`)
	f.Fuzz(func(t *testing.T, data string) {
		out, err := readSymbolicateAnswer([]byte(data), keys, method)
		if err != nil {
			return
		}
		for _, k := range keys {
			mf, ok := out[k]
			if !ok {
				t.Fatalf("no answer for %+v", k)
			}
			if mf.Mapped && (mf.File == "" || classifyFile(mf.File) == frameURL || mf.Line < 1 || mf.Column < 1) {
				t.Fatalf("a mapped frame that names no place: %+v", mf)
			}
		}
		// Written back as Metro would, the mapped frames read the same.
		var stack []map[string]any
		for i, k := range keys {
			if mf := out[k]; mf.Mapped {
				stack = append(stack, map[string]any{"file": mf.File, "lineNumber": mf.Line, "column": mf.Column - 1,
					"methodName": mf.Method, "collapse": mf.Collapse, "devtoolsMcpFrame": i})
			}
		}
		again, _ := json.Marshal(map[string]any{"stack": append(stack, map[string]any{})})
		back, err := readSymbolicateAnswer(again, keys, method)
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range keys {
			if want := out[k]; want.Mapped {
				if diff := cmp.Diff(want, back[k], cmp.AllowUnexported(mappedFrame{})); diff != "" {
					t.Fatalf("written back and read again (-first +again):\n%s", diff)
				}
			}
		}
	})
}
