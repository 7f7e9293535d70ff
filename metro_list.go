package main

// metro_list.go reads Metro's page list (GET /json/list, served by the
// inspector proxy of @react-native/dev-middleware, under Metro and under
// `expo start` alike): one entry per debuggable page, React Native's
// carrying a reactNative member.

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// maxMetroPages bounds the pages read from one list; more are ignored.
const maxMetroPages = 64

// maxMetroListBytes bounds the body of /json/list that is read.
const maxMetroListBytes = 1 << 20

// metroPageInfo is one React Native page of /json/list.
type metroPageInfo struct {
	ID, Title, AppID, DeviceName string
	LogicalDeviceID              string
	DebuggerURL                  string // webSocketDebuggerUrl
	DevtoolsFrontendURL          string // devtoolsFrontendUrl: what the dev server says of its own host (metro_origin.go)
	// MultipleDebuggers: the page keeps its other debuggers when one more
	// connects (reactNative.capabilities.supportsMultipleDebuggers).
	MultipleDebuggers bool
}

// errMetroList is a /json/list answer that is not a list of pages.
var errMetroList = errors.New("Metro's /json/list answer is not a list of pages")

// parseMetroList reads a /json/list body. Entries without a reactNative
// member (other targets Metro may list) and entries that lack an id or a
// debugger URL are skipped; a body that is not an array of objects is an
// errMetroList saying what it is.
func parseMetroList(body []byte) ([]metroPageInfo, error) {
	if k := rawKind(body); k != "array" {
		return nil, fmt.Errorf("%w: got %s", errMetroList, k)
	}
	var entries []json.RawMessage
	if err := json.Unmarshal(body, &entries); err != nil {
		return nil, fmt.Errorf("%w: %v", errMetroList, err)
	}
	var pages []metroPageInfo
	for _, raw := range entries {
		if len(pages) == maxMetroPages {
			break
		}
		var e struct {
			ID, Title, AppID, DeviceName string
			Description                  string // unread, but a mistyped one skips the entry as the rest do
			WebSocketDebuggerURL         string `json:"webSocketDebuggerUrl"`
			DevtoolsFrontendURL          string `json:"devtoolsFrontendUrl"`
			ReactNative                  *struct {
				LogicalDeviceID string `json:"logicalDeviceId"`
				Capabilities    struct {
					SupportsMultipleDebuggers bool `json:"supportsMultipleDebuggers"`
				} `json:"capabilities"`
			} `json:"reactNative"`
		}
		// A mistyped member skips the entry, not the list: one odd page must
		// not hide the others.
		if rawKind(raw) != "object" || json.Unmarshal(raw, &e) != nil || e.ReactNative == nil ||
			e.ID == "" || e.WebSocketDebuggerURL == "" {
			continue
		}
		pages = append(pages, metroPageInfo{ID: e.ID, Title: e.Title, AppID: e.AppID, DeviceName: e.DeviceName,
			LogicalDeviceID: e.ReactNative.LogicalDeviceID, DebuggerURL: e.WebSocketDebuggerURL,
			DevtoolsFrontendURL: e.DevtoolsFrontendURL,
			MultipleDebuggers:   e.ReactNative.Capabilities.SupportsMultipleDebuggers})
	}
	return pages, nil
}

// metroDialURL is the page's debugger URL with its host replaced by Metro's
// own: the proxy names the host it was reached by, or the one it was told
// (a LAN address, a tunnel), and the link dials the Metro it polls.
func metroDialURL(debuggerURL, metroURL string) (string, error) {
	u, err := url.Parse(debuggerURL)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") {
		return "", fmt.Errorf("%w: webSocketDebuggerUrl %q is not a ws:// URL", errMetroList, debuggerURL)
	}
	m, err := url.Parse(metroURL)
	if err != nil {
		return "", err
	}
	u.Host = m.Host
	u.Scheme = "ws"
	if strings.EqualFold(m.Scheme, "https") {
		u.Scheme = "wss"
	}
	return u.String(), nil
}

// appKey is how a page's app is known across reloads; nameKey is the
// fallback when the logical device id changes (metro_identity.go).
func (p metroPageInfo) appKey() string  { return p.LogicalDeviceID + "\x00" + p.AppID }
func (p metroPageInfo) nameKey() string { return p.AppID + "\x00" + p.DeviceName }
