package main

// demo_streams.go gives the simulated shop the two streams an agent asks
// about first: `console` (what the app's code logs) and `network` (the HTTP
// requests it makes), written as a real app's would be after each Redux
// action: info chatter, a warning now and then, 200s, a 404, a 500 with an
// error log and its stack when a checkout fails, and requests that get no
// response at all. They draw on their own random source and take the
// timestamp of the action they follow, so the redux, navigation and mmkv
// streams are exactly what they would be without them.

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/url"
	"strings"
)

const (
	demoAPI       = "https://api.shop.example.com/v1"
	demoUserAgent = "ShopApp/2.4.0 (iPhone; iOS 18.1)"
)

// demoTraffic is the state behind the console and network streams. It is
// guarded by demoApp.mu.
type demoTraffic struct {
	console, network *demoStream
	rng              *rand.Rand
	requests         int  // X-Request-Id counter
	checkouts        int  // checkouts attempted
	unanswered       int  // requests recorded without a response
	offline          bool // simulateOffline: every request fails without a response
}

// demoLog is the payload of a console `log` event.
type demoLog struct {
	Level   string `json:"level"`
	Message string `json:"message"`
	Stack   string `json:"stack,omitempty"`
}

// demoExchange is the payload of a network `http_request` event. Status
// and Response are null for a request that got no response, which says why
// in Error.
type demoExchange struct {
	Method     string            `json:"method"`
	URL        string            `json:"url"`
	Status     *int              `json:"status"`
	DurationMs float64           `json:"durationMs"`
	Request    demoHTTPRequest   `json:"request"`
	Response   *demoHTTPResponse `json:"response"`
	Error      string            `json:"error,omitempty"`
}

type demoHTTPRequest struct {
	Headers map[string]string `json:"headers"`
	Params  map[string]string `json:"params"`
	Body    any               `json:"body"`
}

type demoHTTPResponse struct {
	Headers map[string]string `json:"headers"`
	Body    any               `json:"body"`
}

// startTraffic adds the console and network streams and logs the start.
func (a *demoApp) startTraffic() {
	a.traffic.console = a.addStream("console", "", nil, nil)
	a.traffic.network = a.addStream("network", "", nil, nil)
	a.mutate(func() {
		a.traffic.rng = rand.New(rand.NewPCG(uint64(a.opts.Seed), 0x7a_ff1c))
		a.logLocked("info", "[app] ShopApp 2.4.0 started (build 2041, dev)", "")
		a.logLocked("debug", "[store] rehydrated auth, cart and settings from MMKV", "")
	})
}

// lastTimestampLocked is the timestamp of the newest event recorded.
func (a *demoApp) lastTimestampLocked() string {
	latest := ""
	for _, s := range a.streams {
		if s.ring.len() > 0 {
			latest = max(latest, s.ring.at(s.ring.len()-1).timestamp)
		}
	}
	if latest == "" {
		latest = demoTimestamp(a.now())
	}
	return latest
}

func (a *demoApp) logLocked(level, message, stack string) {
	a.recordAtLocked(a.traffic.console, "log", a.lastTimestampLocked(), demoLog{Level: level, Message: message, Stack: stack})
}

// requestLocked records one HTTP exchange; status 0 means no response,
// for the reason in failure. It returns the exchange as recorded.
func (a *demoApp) requestLocked(method, path string, params map[string]string, body any, status int, respBody any, respHeaders map[string]string, failure string) demoExchange {
	t := &a.traffic
	t.requests++
	rid := fmt.Sprintf("req-%05d", t.requests)
	u := demoAPI + path
	if len(params) > 0 {
		q := url.Values{}
		for k, v := range params {
			q.Set(k, v)
		}
		u += "?" + q.Encode()
	}
	if params == nil {
		params = map[string]string{}
	}
	headers := map[string]string{"Accept": "application/json", "User-Agent": demoUserAgent, "X-Request-Id": rid}
	if tok := a.redux.Auth.Token; tok != nil && !strings.HasPrefix(path, "/auth/login") {
		headers["Authorization"] = "Bearer " + *tok
	}
	if body != nil {
		headers["Content-Type"] = "application/json"
	}
	ex := demoExchange{Method: method, URL: u, DurationMs: float64(40+t.rng.IntN(260)) + float64(t.rng.IntN(10))/10,
		Request: demoHTTPRequest{Headers: headers, Params: params, Body: body}}
	if t.offline {
		failure = "Network request failed: the Internet connection appears to be offline"
	}
	if failure != "" {
		t.unanswered++
		ex.Error, ex.DurationMs = failure, float64(1+t.rng.IntN(9))
		if strings.Contains(failure, "timed out") {
			ex.DurationMs = 10000
		}
	} else {
		resp := &demoHTTPResponse{Headers: map[string]string{"Content-Type": "application/json; charset=utf-8", "X-Request-Id": rid,
			"Cache-Control": "no-store"}, Body: respBody}
		maps.Copy(resp.Headers, respHeaders)
		ex.Status, ex.Response = &status, resp
	}
	a.recordAtLocked(t.network, "http_request", a.lastTimestampLocked(), ex)
	return ex
}

// demoActionOf reads the action of a recorded action_dispatched event.
func demoActionOf(ev *demoEvent) (string, map[string]json.RawMessage, bool) {
	if ev.typ != "action_dispatched" {
		return "", nil, false
	}
	var e struct {
		Payload struct {
			Action struct {
				Type    string                     `json:"type"`
				Payload map[string]json.RawMessage `json:"payload"`
			} `json:"action"`
		} `json:"payload"`
	}
	if json.Unmarshal(ev.appendJSON(nil), &e) != nil {
		return "", nil, false
	}
	return e.Payload.Action.Type, e.Payload.Action.Payload, true
}

func demoStr(fields map[string]json.RawMessage, name string) string {
	s, _ := wireString(fields[name])
	return s
}

// trafficLocked logs and fetches what the app's code would after the
// Redux actions among events, which were just recorded.
func (a *demoApp) trafficLocked(events []*demoEvent) {
	t := &a.traffic
	for _, ev := range events {
		typ, p, ok := demoActionOf(ev)
		if !ok {
			continue
		}
		switch typ {
		case "catalog/fetchStarted":
			category := demoStr(p, "category")
			var products []map[string]any
			for _, prod := range demoProductsIn(category) {
				products = append(products, map[string]any{"sku": prod.SKU, "name": prod.Name, "price": prod.Price})
			}
			ex := a.requestLocked("GET", "/products", map[string]string{"category": category}, nil, 200,
				map[string]any{"products": products, "page": 1, "total": len(products)}, nil, "")
			if ex.DurationMs > 250 {
				a.logLocked("warn", fmt.Sprintf("[catalog] slow response: GET /products took %.0f ms", ex.DurationMs), "")
			} else {
				a.logLocked("info", fmt.Sprintf("[catalog] loaded %d products in %s", len(products), category), "")
			}
		case "catalog/productViewed":
			sku := demoStr(p, "sku")
			a.requestLocked("GET", "/products/"+sku, nil, nil, 200, map[string]any{"sku": sku, "inStock": t.rng.IntN(5) > 0}, nil, "")
			if t.rng.IntN(3) == 0 {
				a.requestLocked("GET", "/products/"+sku+"/reviews", nil, nil, 404,
					map[string]any{"error": "not_found", "message": "no reviews for " + sku}, nil, "")
				a.logLocked("warn", fmt.Sprintf("[reviews] none for %s (404); hiding the section", sku), "")
			}
		case "cart/addItem":
			a.requestLocked("POST", "/cart/items", nil, map[string]any{"sku": demoStr(p, "sku"), "qty": json.RawMessage(p["qty"])}, 200,
				map[string]any{"items": len(a.redux.Cart.Items), "total": a.redux.Cart.Total}, nil, "")
			a.logLocked("debug", "[cart] added "+demoStr(p, "sku"), "")
		case "cart/removeItem":
			a.requestLocked("DELETE", "/cart/items/"+demoStr(p, "sku"), nil, nil, 204, nil, nil, "")
		case "cart/checkoutSucceeded":
			a.requestLocked("POST", "/orders", nil, map[string]any{"items": len(a.redux.Cart.Items), "paymentMethod": "card_visa_4242"}, 201,
				map[string]any{"orderId": demoStr(p, "orderId"), "status": "confirmed"}, nil, "")
			a.logLocked("info", "[checkout] order "+demoStr(p, "orderId")+" placed", "")
		case "cart/checkoutFailed":
			a.checkoutFailedTrafficLocked()
		case "auth/refreshToken":
			a.requestLocked("POST", "/auth/refresh", nil, map[string]any{"grantType": "refresh_token"}, 200,
				map[string]any{"token": demoStr(p, "token"), "expiresIn": 3600}, demoSetSession(t.rng), "")
			a.logLocked("info", "[auth] token refreshed", "")
		case "auth/loginSucceeded":
			a.requestLocked("POST", "/auth/login", nil, map[string]any{"email": demoAdmin.Email, "password": demoPassword}, 200,
				map[string]any{"token": demoStr(p, "token"), "user": json.RawMessage(p["user"])}, demoSetSession(t.rng), "")
			a.logLocked("info", "[auth] signed in as "+demoAdmin.Email, "")
		case "auth/logout":
			a.requestLocked("POST", "/auth/logout", nil, nil, 204, nil, map[string]string{"Set-Cookie": "sid=; Path=/; Max-Age=0"}, "")
			a.logLocked("info", "[auth] signed out", "")
		case "ui/showToast":
			if demoStr(p, "message") == "Network is slow" {
				a.logLocked("warn", "[net] requests are slow; the app shows a toast", "")
			}
		case "ui/screenChanged":
			a.logLocked("debug", "[analytics] screen_view "+demoStr(p, "name"), "")
			if demoStr(p, "name") == "Home" && t.rng.IntN(2) == 0 {
				a.recommendationsLocked()
			}
		}
	}
	if t.rng.IntN(12) == 0 {
		a.recommendationsLocked()
	}
}

// recommendationsLocked fetches the home screen's recommendations, a
// request that sometimes times out without any response.
func (a *demoApp) recommendationsLocked() {
	if a.traffic.rng.IntN(3) == 0 {
		a.recommendationsTimedOutLocked()
		return
	}
	a.requestLocked("GET", "/recommendations", map[string]string{"user": demoAdmin.ID}, nil, 200,
		map[string]any{"skus": []string{"A-2", "B-4", "C-1"}}, nil, "")
}

func (a *demoApp) recommendationsTimedOutLocked() {
	a.requestLocked("GET", "/recommendations", map[string]string{"user": demoAdmin.ID}, nil, 0, nil, nil,
		"Network request failed: the request timed out after 10000 ms")
	a.logLocked("warn", "[home] recommendations unavailable; showing cached ones", "")
}

// checkoutFailedTrafficLocked is the order request of a failed checkout
// and the error it logs.
func (a *demoApp) checkoutFailedTrafficLocked() {
	ex := a.requestLocked("POST", "/orders", nil, map[string]any{"items": len(a.redux.Cart.Items), "paymentMethod": "card_visa_4242"}, 500,
		map[string]any{"error": "internal_error", "message": "payment provider unavailable", "traceId": "7f3c2a91e4b0"}, nil, "")
	if ex.Status == nil {
		a.logLocked("error", "[checkout] order failed: "+ex.Error, "")
		return
	}
	a.logLocked("error", "[checkout] order failed: POST /v1/orders answered 500 (payment provider unavailable)", demoCheckoutStack)
}

// demoCheckoutStack is the JavaScript stack of a failed checkout: long
// enough for the server to cut it.
const demoCheckoutStack = `Error: Request failed with status code 500
    at createError (node_modules/axios/lib/core/createError.js:16:15)
    at settle (node_modules/axios/lib/core/settle.js:17:12)
    at XMLHttpRequest.onloadend (node_modules/axios/lib/adapters/xhr.js:66:7)
    at placeOrder (src/api/orders.ts:42:11)
    at checkout (src/features/cart/checkoutSlice.ts:88:24)
    at onPressPay (src/screens/CheckoutScreen.tsx:131:9)
    at Pressable.onPress (node_modules/react-native/Libraries/Components/Pressable/Pressable.js:237:7)
    at _performTransitionSideEffects (node_modules/react-native/Libraries/Pressability/Pressability.js:652:5)
    at _receiveSignal (node_modules/react-native/Libraries/Pressability/Pressability.js:589:12)
    at onResponderRelease (node_modules/react-native/Libraries/Pressability/Pressability.js:472:9)
    at invokeGuardedCallbackImpl (node_modules/react-native/Libraries/Renderer/implementations/ReactNativeRenderer-dev.js:2304:16)
    at dispatchEvent (node_modules/react-native/Libraries/Renderer/implementations/ReactNativeRenderer-dev.js:3520:3)`

// demoSetSession is the header of a response that starts a session.
func demoSetSession(rng *rand.Rand) map[string]string {
	return map[string]string{"Set-Cookie": "sid=" + demoRandomKey(rng, "", 24) + "; Path=/; Secure; HttpOnly; SameSite=Lax"}
}

// checkoutFailsLocked decides whether the checkout being attempted fails:
// the first of a session always does (so a demo has one to find), later
// ones one time in four.
func (a *demoApp) checkoutFailsLocked() bool {
	t := &a.traffic
	t.checkouts++
	return t.checkouts == 1 || t.rng.IntN(4) == 0
}

// untilCheckoutFailed steps until a checkout has failed (at most limit
// steps), so that -demo starts with a history worth debugging; if no
// request has gone without a response by then, one does, so that the start
// shows every kind of event the app records.
func (a *demoApp) untilCheckoutFailed(limit int) {
	for range limit {
		a.step()
		a.mu.Lock()
		failed := a.traffic.checkouts > 0
		a.mu.Unlock()
		if failed {
			break
		}
	}
	a.mutate(func() {
		if a.traffic.unanswered == 0 {
			a.recommendationsTimedOutLocked()
		}
	})
}
