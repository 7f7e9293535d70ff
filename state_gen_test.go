package main

// Test-only generators of large, realistic application states, shared by the
// benchmarks of every file that walks decoded snapshots.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// largeReduxState builds the decoded state of an imaginary shop's Redux store
// whose JSON encoding is about targetBytes long (it stops on the first
// record, about a kilobyte, past the target). The same seed gives the same state. It holds only what
// encoding/json with UseNumber decodes into: map[string]any, []any,
// json.Number, string, bool and nil. Its shape is the usual normalised one —
// catalog.byId with nested product records, users.byId keyed by numeric ids
// (which paths must quote), keys with dots, nulls, a cart, ui flags — so
// walks over it meet what real snapshots contain.
func largeReduxState(targetBytes int, seed int64) map[string]any {
	g := stateGen{rng: rand.New(rand.NewPCG(uint64(seed), 0x5eed))}
	productsByID := map[string]any{}
	var productIDs []any
	usersByID := map[string]any{}
	var userIDs []any

	cart := map[string]any{
		"items":  []any{},
		"coupon": nil,
		"totals": map[string]any{"subtotal": g.price(), "tax": g.price(), "total": g.price(), "currency": "EUR"},
		"status": "idle",
	}
	ui := map[string]any{
		"theme":   "dark",
		"locale":  "de-DE",
		"loading": false,
		"modals": map[string]any{
			"checkout": map[string]any{"open": false, "step": json.Number("1")},
			"login":    map[string]any{"open": false, "reason": nil},
		},
		"toasts": []any{
			map[string]any{"id": "t1", "kind": "info", "text": "Welcome back!", "dismissed": true},
		},
		"settings":  map[string]any{"theme.dark": true, "list.density": "compact", "": "empty key"},
		"lastError": nil,
	}
	state := map[string]any{
		"catalog": map[string]any{
			"byId":    productsByID,
			"allIds":  nil, // filled in below
			"loading": false,
			"error":   nil,
			"filters": map[string]any{"category": "all", "priceRange": []any{json.Number("0"), json.Number("500")}, "inStockOnly": false},
			"page":    map[string]any{"index": json.Number("0"), "size": json.Number("24")},
		},
		"cart":    cart,
		"users":   map[string]any{"byId": usersByID, "allIds": nil, "currentUserId": nil},
		"ui":      ui,
		"session": map[string]any{"token": g.token(), "expiresAt": g.timestamp(), "refreshing": false},
	}

	// Grow until the estimate reaches the target. Each record is measured on
	// its own; the rest is a fixed overhead measured once.
	size := len(mustMarshalState(state)) + 64
	for n := 0; size < targetBytes; n++ {
		id := fmt.Sprintf("sku-%06d", n)
		product := g.product(id)
		productsByID[id] = product
		productIDs = append(productIDs, id)
		size += len(mustMarshalState(product)) + len(id)*2 + 6
		if n%10 == 0 {
			uid := strconv.Itoa(1000 + len(userIDs))
			user := g.user(uid, productIDs)
			usersByID[uid] = user
			userIDs = append(userIDs, json.Number(uid))
			size += len(mustMarshalState(user)) + len(uid)*2 + 6
		}
		if n%40 == 0 && len(cart["items"].([]any)) < 50 {
			item := map[string]any{"productId": id, "quantity": json.Number(strconv.Itoa(1 + g.rng.IntN(3))), "addedAt": g.timestamp()}
			cart["items"] = append(cart["items"].([]any), item)
			size += len(mustMarshalState(item)) + 1
		}
	}
	state["catalog"].(map[string]any)["allIds"] = orEmpty(productIDs)
	users := state["users"].(map[string]any)
	users["allIds"] = orEmpty(userIDs)
	if len(userIDs) > 0 {
		users["currentUserId"] = userIDs[0]
	}
	return state
}

// orEmpty keeps an empty list an empty JSON array rather than null.
func orEmpty(s []any) []any {
	if s == nil {
		return []any{}
	}
	return s
}

func mustMarshalState(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

type stateGen struct{ rng *rand.Rand }

var stateWords = []string{
	"wireless", "mouse", "keyboard", "ergonomic", "usb-c", "charger", "cable", "lamp", "desk",
	"chair", "oak", "steel", "compact", "travel", "bag", "bottle", "insulated", "organic", "cotton",
	"shirt", "sneaker", "running", "waterproof", "jacket", "kids", "garden", "hose", "coffee",
	"grinder", "espresso", "mug", "ceramic", "blue", "red", "black", "premium", "classic", "über",
}

func (g stateGen) words(n int) string {
	var b []byte
	for i := range n {
		if i > 0 {
			b = append(b, ' ')
		}
		b = append(b, stateWords[g.rng.IntN(len(stateWords))]...)
	}
	return string(b)
}

func (g stateGen) price() json.Number {
	return json.Number(fmt.Sprintf("%d.%02d", g.rng.IntN(500), g.rng.IntN(100)))
}

func (g stateGen) count(n int) json.Number { return json.Number(strconv.Itoa(g.rng.IntN(n))) }

func (g stateGen) timestamp() string {
	return fmt.Sprintf("2025-%02d-%02dT%02d:%02d:%02d.%03dZ", 1+g.rng.IntN(12), 1+g.rng.IntN(28),
		g.rng.IntN(24), g.rng.IntN(60), g.rng.IntN(60), g.rng.IntN(1000))
}

func (g stateGen) token() string { return fmt.Sprintf("%016x%016x", g.rng.Uint64(), g.rng.Uint64()) }

func (g stateGen) product(id string) map[string]any {
	var tags []any
	for range 1 + g.rng.IntN(4) {
		tags = append(tags, stateWords[g.rng.IntN(len(stateWords))])
	}
	var images []any
	for i := range 1 + g.rng.IntN(3) {
		images = append(images, map[string]any{
			"url":    fmt.Sprintf("https://cdn.example.com/p/%s/%d.jpg", id, i),
			"width":  json.Number("800"),
			"height": json.Number("600"),
			"alt":    g.words(3),
		})
	}
	var variants []any
	for i := range g.rng.IntN(4) {
		variants = append(variants, map[string]any{
			"sku":   fmt.Sprintf("%s-%d", id, i),
			"color": stateWords[32+g.rng.IntN(3)],
			"size":  []string{"S", "M", "L", "XL"}[g.rng.IntN(4)],
			"price": g.price(),
			"stock": g.count(40),
		})
	}
	var discount any
	if g.rng.IntN(5) == 0 {
		discount = map[string]any{"percent": g.count(50), "until": g.timestamp()}
	}
	return map[string]any{
		"id":          id,
		"title":       g.words(3),
		"description": g.words(12 + g.rng.IntN(20)),
		"price":       g.price(),
		"currency":    "EUR",
		"inStock":     g.rng.IntN(4) != 0,
		"tags":        tags,
		"images":      images,
		"variants":    orEmpty(variants),
		"rating":      map[string]any{"average": json.Number(fmt.Sprintf("%d.%d", 1+g.rng.IntN(4), g.rng.IntN(10))), "count": g.count(2000)},
		"stock":       map[string]any{"warehouse.berlin": g.count(100), "warehouse.paris": g.count(100)},
		"discount":    discount,
		"updatedAt":   g.timestamp(),
	}
}

func (g stateGen) user(id string, productIDs []any) map[string]any {
	var orders []any
	for range g.rng.IntN(4) {
		orders = append(orders, map[string]any{
			"orderId":   g.token()[:12],
			"productId": productIDs[g.rng.IntN(len(productIDs))],
			"total":     g.price(),
			"placedAt":  g.timestamp(),
		})
	}
	return map[string]any{
		"id":    json.Number(id),
		"name":  g.words(2),
		"email": fmt.Sprintf("user%s@example.com", id),
		"addresses": []any{map[string]any{
			"street": g.words(2) + " " + strconv.Itoa(1+g.rng.IntN(200)),
			"city":   []string{"Berlin", "Paris", "Wien", "Zürich"}[g.rng.IntN(4)],
			"zip":    fmt.Sprintf("%05d", g.rng.IntN(100000)),
		}},
		"preferences": map[string]any{"newsletter": g.rng.IntN(2) == 0, "language": "de"},
		"orders":      orEmpty(orders),
		"lastSeenAt":  g.timestamp(),
		"avatarUrl":   nil,
	}
}

// mutateLeaves returns a deep copy of v in which each scalar leaf was changed
// with probability fraction: numbers gain 1, strings gain a character, bools
// flip, and nulls become 0 (a change of type, as when a field gets loaded).
// Objects are walked in sorted key order so the same seed changes the same
// leaves. v itself is left untouched.
func mutateLeaves(v any, fraction float64, seed int64) any {
	rng := rand.New(rand.NewPCG(uint64(seed), 0x1eaf))
	var walk func(v any) any
	walk = func(v any) any {
		switch v := v.(type) {
		case map[string]any:
			out := make(map[string]any, len(v))
			keys := make([]string, 0, len(v))
			for k := range v {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				out[k] = walk(v[k])
			}
			return out
		case []any:
			out := make([]any, len(v))
			for i, e := range v {
				out[i] = walk(e)
			}
			return out
		}
		if rng.Float64() >= fraction {
			return v
		}
		switch v := v.(type) {
		case json.Number:
			f, err := strconv.ParseFloat(string(v), 64)
			if err != nil {
				panic(err)
			}
			return json.Number(strconv.FormatFloat(f+1, 'g', -1, 64))
		case string:
			return v + "~"
		case bool:
			return !v
		case nil:
			return json.Number("0")
		}
		panic(fmt.Sprintf("mutateLeaves: unexpected %T", v))
	}
	return walk(v)
}

// decodeStateJSON decodes s the way snapshots are decoded: into any, with
// UseNumber.
func decodeStateJSON(tb testing.TB, s string) any {
	tb.Helper()
	v, err := decodeState([]byte(s))
	if err != nil {
		tb.Fatalf("decode %q: %v", s, err)
	}
	return v
}

// cloneDecoded deep-copies a decoded JSON value.
func cloneDecoded(v any) any {
	switch v := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = cloneDecoded(e)
		}
		return out
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = cloneDecoded(e)
		}
		return out
	}
	return v
}

// benchState is a generated state with its encoding and a mutated copy,
// built once per size and shared by every benchmark that asks for it.
type benchState struct {
	base, target any
	baseJSON     []byte
	targetJSON   []byte
	leafChanges  int // diffValues total between base and target
}

var (
	benchStatesMu sync.Mutex
	benchStates   = map[int]*benchState{}
)

// benchStateOfSize returns the shared benchmark state of about size bytes,
// its target differing from it in 1% of the leaves. Both are decoded from
// their JSON, as snapshots are: nothing is shared between them and the
// memory layout is the decoder's.
func benchStateOfSize(b *testing.B, size int) *benchState {
	b.Helper()
	benchStatesMu.Lock()
	defer benchStatesMu.Unlock()
	if s, ok := benchStates[size]; ok {
		return s
	}
	generated := largeReduxState(size, 1)
	s := &benchState{
		baseJSON:   mustMarshalState(generated),
		targetJSON: mustMarshalState(mutateLeaves(generated, 0.01, 2)),
	}
	var err error
	if s.base, err = decodeState(s.baseJSON); err != nil {
		b.Fatal(err)
	}
	if s.target, err = decodeState(s.targetJSON); err != nil {
		b.Fatal(err)
	}
	_, s.leafChanges = diffValues(s.base, s.target, 0)
	benchStates[size] = s
	// Building the states left much garbage; collect it now so that a
	// collection does not run through the caller's timed loop.
	runtime.GC()
	return s
}

// benchSizes names the state sizes benchmarks run at.
var benchSizes = []struct {
	name  string
	bytes int
}{
	{"512KB", 512 << 10},
	{"1MB", 1 << 20},
	{"5MB", 5 << 20},
	{"10MB", 10 << 20},
}

// BenchmarkUnmarshal is the reference the walks over decoded states are
// measured against: decoding one state of each size, as snapshots arrive.
func BenchmarkUnmarshal(b *testing.B) {
	for _, size := range benchSizes {
		b.Run(size.name, func(b *testing.B) {
			data := benchStateOfSize(b, size.bytes).baseJSON
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeState(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestLargeReduxState(t *testing.T) {
	t.Parallel()
	for _, target := range []int{8 << 10, 64 << 10, 1 << 20} {
		t.Run(strconv.Itoa(target), func(t *testing.T) {
			state := largeReduxState(target, 7)
			data := mustMarshalState(state)
			// Growth stops on the first record past the target, and records
			// are around a kilobyte; allow 2% of estimation error besides.
			low, high := target-target/50, target+target/50+4096
			if got := len(data); got < low || got > high {
				t.Errorf("encoded size = %d, want within [%d, %d]", got, low, high)
			}
			if diff := cmp.Diff(state, largeReduxState(target, 7)); diff != "" {
				t.Errorf("same seed gave a different state (-first +second):\n%s", diff)
			}
			// Only decoded types: a JSON round trip changes nothing.
			decoded, err := decodeState(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(any(state), decoded); diff != "" {
				t.Errorf("state differs from its own JSON round trip (-state +decoded):\n%s", diff)
			}
		})
	}
}

func TestMutateLeaves(t *testing.T) {
	t.Parallel()
	base := largeReduxState(256<<10, 3)
	before := cloneDecoded(base)
	leaves := countLeaves(base)

	got := mutateLeaves(base, 0.01, 9)
	if diff := cmp.Diff(before, any(base)); diff != "" {
		t.Fatalf("mutateLeaves changed its input (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(got, mutateLeaves(base, 0.01, 9)); diff != "" {
		t.Errorf("same seed gave different mutations (-first +second):\n%s", diff)
	}
	// Every mutation changes one leaf in place, so the diff counts them.
	_, changed := diffValues(base, got, 0)
	if want := float64(leaves) * 0.01; float64(changed) < want*0.7 || float64(changed) > want*1.3 {
		t.Errorf("changed leaves = %d of %d, want about %.0f", changed, leaves, want)
	}
}

func countLeaves(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range v {
			n += countLeaves(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += countLeaves(e)
		}
		return n
	}
	return 1
}
