package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/coder/websocket"
)

// TestReadTextOwnedKeepsEachMessage: what readTextOwned returns stays the
// caller's while later messages are read, large ones (which take the read
// buffer with them) and small ones (copied) alike.
func TestReadTextOwnedKeepsEachMessage(t *testing.T) {
	t.Parallel()
	messages := [][]byte{
		bytes.Repeat([]byte("a"), wireHandoffMin+100),
		[]byte("small b"),
		bytes.Repeat([]byte("c"), wireHandoffMin+100),
		bytes.Repeat([]byte("d"), wireHandoffMin+100),
		[]byte("small e"),
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ws, err := websocket.Accept(w, r, nil)
		if err != nil {
			return
		}
		defer ws.CloseNow()
		for _, m := range messages {
			if ws.Write(r.Context(), websocket.MessageText, m) != nil {
				return
			}
		}
		ws.Read(r.Context()) // until the test closes
	}))
	defer srv.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	sock, err := dialSocket(t.Context(), "ws"+strings.TrimPrefix(srv.URL, "http"), nil, &wg, socketOptions{limit: 1 << 20, closeTimeout: linkCloseTimeout, writeTimeout: linkWriteTimeout})
	if err != nil {
		t.Fatal(err)
	}
	var got [][]byte
	for range messages {
		data, _, err := sock.readTextOwned()
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, data)
	}
	for i, m := range messages {
		if !bytes.Equal(got[i], m) {
			t.Errorf("message %d reads %.20q… (%d bytes) once the others were read, want %.20q… (%d bytes)", i, got[i], len(got[i]), m, len(m))
		}
	}
	sock.dropSocket()
	sock.finish()
	wg.Done()
	wg.Wait()
}
