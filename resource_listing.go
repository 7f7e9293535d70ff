package main

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
)

// Bounds of one resources/list page: an adapter may advertise any number
// of MMKV instances, and one reply must stay small enough to build, send
// and read without holding up other requests.
const (
	maxListPage      = 500       // resources
	maxListPageBytes = 256 << 10 // bytes of their JSON
)

// listPage encodes one resources/list result: the listing (the static
// resources, then one per advertised MMKV instance) from position start,
// as much of it as the page bounds allow but at least one resource, with
// nextCursor when more follow. A start past the end (the instances changed
// since the cursor was issued) is an empty last page.
func (h *resourceHub) listPage(start int) json.RawMessage {
	instances := h.mmkvInstances()
	total := len(staticResources) + len(instances)
	out := append(make([]byte, 0, 4<<10), `{"resources":[`...)
	first := len(out)
	pos := start
	for ; pos < total && pos-start < maxListPage; pos++ {
		mark := len(out)
		if pos > start {
			out = append(out, ',')
		}
		if pos < len(staticResources) {
			entry, _ := json.Marshal(staticResources[pos]) // static strings: cannot fail
			out = append(out, entry...)
		} else {
			out = appendMMKVResource(out, instances[pos-len(staticResources)])
		}
		if len(out)-first > maxListPageBytes && pos > start {
			out = out[:mark]
			break
		}
	}
	out = append(out, ']')
	if pos < total {
		out = append(out, `,"nextCursor":`...)
		out = appendJSONString(out, listCursor(pos), false)
	}
	return append(out, '}')
}

// appendMMKVResource appends the listing entry of one MMKV instance, its
// members in the order encoding/json gives the static ones.
func appendMMKVResource(out []byte, name string) []byte {
	out = append(out, `{"description":`...)
	out = appendJSONString(out, "Keys, values and total size of MMKV instance "+name+".", false)
	out = append(out, `,"mimeType":"application/json","name":`...)
	out = appendJSONString(out, "mmkv-"+name, false)
	out = append(out, `,"title":`...)
	out = appendJSONString(out, "MMKV instance "+name, false)
	out = append(out, `,"uri":`...)
	out = appendJSONString(out, mmkvURI(name), false)
	return append(out, '}')
}

// listCursor is the opaque cursor of the listing at position pos (> 0):
// clients must not parse it, and only cursors issued here are taken back.
func listCursor(pos int) string {
	return base64.RawURLEncoding.EncodeToString([]byte("list:" + strconv.Itoa(pos)))
}

// parseListCursor returns the position a cursor of listCursor stands for.
// Any other string, including other spellings of the same position, fails
// the round trip through listCursor and is refused.
func parseListCursor(cursor string) (pos int, ok bool) {
	if len(cursor) > 32 { // longer than any cursor issued; do not decode it
		return 0, false
	}
	raw, _ := base64.RawURLEncoding.DecodeString(cursor)
	pos, err := strconv.Atoi(strings.TrimPrefix(string(raw), "list:"))
	if err != nil || pos < 1 || listCursor(pos) != cursor {
		return 0, false
	}
	return pos, true
}
