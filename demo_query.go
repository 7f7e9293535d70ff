package main

// demo_query.go gives the simulated shop a small TanStack-Query-like cache,
// offered as the optional react_query stream (docs/protocol.md): the product
// list, which loads and is refetched now and then; the signed-in user,
// whose request fails with a 401; and an add-to-cart mutation. The agent
// sees a failing query without a phone.

import "encoding/json"

// demoQueryRefetchEvery is how many steps pass between refetches of the
// product list.
const demoQueryRefetchEvery = 7

// demoQueryCache is the state behind the react_query stream, guarded by
// demoApp.mu.
type demoQueryCache struct {
	stream    *demoStream
	queries   map[string]*demoQuery
	mutations map[string]*demoMutation // by mutationId
	clock     int64                    // milliseconds since the epoch, advanced per fetch
}

// demoQuery is a query as the cache_snapshot shows it.
type demoQuery struct {
	QueryKey       []any  `json:"queryKey"`
	Status         string `json:"status"`
	FetchStatus    string `json:"fetchStatus"`
	Data           any    `json:"data"`
	Error          any    `json:"error"`
	DataUpdatedAt  int64  `json:"dataUpdatedAt"`
	ErrorUpdatedAt int64  `json:"errorUpdatedAt"`
	IsInvalidated  bool   `json:"isInvalidated"`
	ObserverCount  int    `json:"observerCount"`
}

// demoQueryEvent is the payload of a query event.
type demoQueryEvent struct {
	QueryHash string `json:"queryHash"`
	demoQuery
}

type demoMutation struct {
	MutationID   int    `json:"mutationId"`
	MutationKey  []any  `json:"mutationKey"`
	Status       string `json:"status"`
	Variables    any    `json:"variables"`
	Data         any    `json:"data"`
	Error        any    `json:"error"`
	FailureCount int    `json:"failureCount"`
	SubmittedAt  int64  `json:"submittedAt"`
}

const (
	demoProductsHash = `["products"]`
	demoUserHash     = `["user","me"]`
)

// startQueries adds the react_query stream and records the first screen's
// queries: the products load, the user fails, and one item goes into the
// cart through a mutation.
func (a *demoApp) startQueries() {
	if !a.opts.QueryCache {
		return
	}
	a.queries.stream = a.addStream("react_query", "cache_snapshot", nil, a.encodeQueries)
	a.mutate(func() {
		c := &a.queries
		c.queries = map[string]*demoQuery{}
		c.mutations = map[string]*demoMutation{}
		c.clock = a.now().UnixMilli()
		for _, key := range [][]any{{"products"}, {"user", "me"}} {
			hash := string(demoMarshal(key)) // demoProductsHash, demoUserHash
			c.queries[hash] = &demoQuery{QueryKey: key, Status: "pending", FetchStatus: "idle"}
			a.queryEventLocked("query_added", hash)
			c.queries[hash].ObserverCount = 1
			a.queryEventLocked("observer_added", hash)
		}
		a.fetchLocked(demoProductsHash)
		a.fetchLocked(demoUserHash)
		m := &demoMutation{MutationID: 1, MutationKey: []any{"addToCart"}, Status: "idle"}
		c.mutations["1"] = m
		a.recordLocked(c.stream, "mutation_added", m)
		m.Status, m.Variables, m.SubmittedAt = "pending", map[string]any{"sku": "A-1", "qty": 1}, c.clock
		a.recordLocked(c.stream, "mutation_updated", m)
		m.Status, m.Data = "success", map[string]any{"cartId": "c-77", "items": 1}
		a.recordLocked(c.stream, "mutation_updated", m)
		a.snapshotLocked(c.stream)
	})
}

// queriesStepLocked refetches the product list every few steps.
func (a *demoApp) queriesStepLocked() {
	if a.queries.stream == nil || a.steps%demoQueryRefetchEvery != 0 {
		return
	}
	a.queries.queries[demoProductsHash].IsInvalidated = true
	a.fetchLocked(demoProductsHash)
}

// fetchLocked runs one fetch of a query: fetching, then its result.
func (a *demoApp) fetchLocked(hash string) {
	c := &a.queries
	q := c.queries[hash]
	q.FetchStatus = "fetching"
	a.queryEventLocked("query_updated", hash)
	c.clock += 120
	q.FetchStatus, q.IsInvalidated = "idle", false
	if hash == demoUserHash {
		q.Status, q.Error, q.ErrorUpdatedAt = "error", map[string]any{"message": "401 Unauthorized: session expired", "status": 401}, c.clock
	} else {
		q.Status, q.DataUpdatedAt = "success", c.clock
		q.Data = []map[string]any{
			{"sku": "A-1", "name": "Trail shoe", "price": 89.0},
			{"sku": "B-7", "name": "Rain jacket", "price": 120.0},
			{"sku": "C-3", "name": "Wool socks", "price": 12.5, "stock": a.steps % 4},
		}
	}
	a.queryEventLocked("query_updated", hash)
}

func (a *demoApp) queryEventLocked(typ, hash string) {
	a.recordLocked(a.queries.stream, typ, demoQueryEvent{QueryHash: hash, demoQuery: *a.queries.queries[hash]})
	a.queries.stream.markChanged()
}

// encodeQueries is the cache_snapshot state.
func (a *demoApp) encodeQueries() json.RawMessage {
	return demoMarshal(map[string]any{"queries": a.queries.queries, "mutations": a.queries.mutations})
}
