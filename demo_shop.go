package main

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// demo_shop.go is the simulated shop itself: its Redux, navigation and MMKV
// state, and the user actions that change them a step at a time.

var (
	demoMMKVInstances = []string{"default", "auth"}
	demoTabs          = []string{"Home", "Catalog", "Cart", "Profile"}
	demoRootRoutes    = []string{"Main", "ProductDetail", "Checkout"}
	demoCategories    = []string{"shoes", "shirts", "bags"}
	demoProductNames  = [][]string{
		{"Trail Runner", "City Sneaker", "Canvas Low", "Hiking Boot", "Slip-On", "Court Classic"},
		{"Oxford Shirt", "Linen Tee", "Piqué Polo", "Flannel Shirt", "Henley", "Rugby Shirt"},
		{"Market Tote", "Day Backpack", "Gym Duffel", "Sling Bag", "Messenger", "Weekender"},
	}
	demoToastMessages = []string{"Added to cart", "Saved for later", "Network is slow", "Order synced", "Coupon applied"}
	demoAdmin         = demoUser{ID: "u_1042", Name: "Ada Lovelace", Email: "ada@example.com", Role: "admin"}
)

// demoProducts is the whole catalog; SKUs are "A-1" to "C-6".
var demoProducts = demoCatalog()

func demoCatalog() []demoProduct {
	var products []demoProduct
	for c, category := range demoCategories {
		for i, name := range demoProductNames[c] {
			cents := 1999 + 1000*i + 500*c
			products = append(products, demoProduct{
				SKU: fmt.Sprintf("%c-%d", 'A'+c, i+1), Name: name, Price: float64(cents) / 100, Category: category})
		}
	}
	return products
}

func (a *demoApp) initModelLocked() {
	token := a.tokenLocked()
	user := demoAdmin
	a.redux = demoReduxState{
		Auth:    demoAuthState{User: &user, Token: &token, Status: "authenticated", RememberedLogin: &demoLogin{Email: user.Email, Password: demoPassword}},
		Cart:    demoCartState{Items: []demoCartItem{}, Currency: "EUR"},
		Catalog: demoCatalogState{ByID: map[string]demoProduct{}, Categories: demoCategories, RecentlyViewed: []string{}},
		UI:      demoUIState{Theme: "light", Toasts: []demoToast{}, CurrentScreen: "Home"},
	}
	tabs := &demoNavState{Type: "tab", Key: a.keyLocked("tab"), RouteNames: demoTabs}
	for _, name := range demoTabs {
		tabs.Routes = append(tabs.Routes, demoRoute{Key: a.keyLocked(name), Name: name})
	}
	a.nav = demoNavState{Type: "stack", Key: a.keyLocked("stack"), RouteNames: demoRootRoutes,
		Routes: []demoRoute{{Key: a.keyLocked("Main"), Name: "Main", State: tabs}}}
	a.mmkv = map[string]map[string]any{
		"default": {"theme": "light", "launchCount": 1 + a.rng.IntN(40), "onboarding.done": true, "lastSeenVersion": "2.4.0"},
		"auth":    {"token": token, "userId": demoAdmin.ID},
	}
}

func (a *demoApp) encodeRedux() json.RawMessage {
	if a.override != nil {
		return a.override
	}
	return demoMarshal(a.redux)
}

func (a *demoApp) encodeMMKV() json.RawMessage {
	snap := map[string]demoMMKVSnapshot{}
	for _, instance := range demoMMKVInstances {
		keys := a.mmkv[instance]
		size := 0
		for k, v := range keys {
			size += len(k) + len(demoMarshal(v))
		}
		snap[instance] = demoMMKVSnapshot{Keys: keys, TotalSize: size}
	}
	return demoMarshal(snap)
}

const demoKeyAlphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_-"

// demoRandomKey is prefix followed by n characters of demoKeyAlphabet.
func demoRandomKey(rng *rand.Rand, prefix string, n int) string {
	b := []byte(prefix)
	for range n {
		b = append(b, demoKeyAlphabet[rng.IntN(len(demoKeyAlphabet))])
	}
	return string(b)
}

// keyLocked returns a React Navigation style route key, "Home-xK3f…".
func (a *demoApp) keyLocked(name string) string { return demoRandomKey(a.rng, name+"-", 10) }

func (a *demoApp) tokenLocked() string { return demoRandomKey(a.rng, "eyJhbGciOiJIUzI1NiJ9.", 32) }

// dispatchLocked records a Redux action after applying reduce to the store.
func (a *demoApp) dispatchLocked(actionType string, payload any, reduce func(*demoReduxState)) {
	if reduce != nil {
		reduce(&a.redux)
		if a.override == nil {
			a.reduxStream.markChanged()
		}
	}
	a.recordLocked(a.reduxStream, "action_dispatched", demoActionDispatched{
		Action:     demoAction{Type: actionType, Payload: payload},
		DurationMs: float64(1+a.rng.IntN(30)) / 10,
	})
}

func (a *demoApp) mmkvLocked(instance, op, key string, value any) {
	keys := a.mmkv[instance]
	switch op {
	case "set":
		keys[key] = value
	case "delete":
		delete(keys, key)
	case "clear":
		clear(keys)
	}
	a.mmkvStream.markChanged()
	a.recordLocked(a.mmkvStream, "mmkv_mutation", demoMMKVMutation{Instance: instance, Key: key, Op: op, Value: value})
}

func (a *demoApp) userActionLocked() {
	switch n := a.rng.IntN(100); {
	case n < 22:
		a.addToCartLocked()
	case n < 30:
		a.removeFromCartLocked()
	case n < 34:
		a.checkoutLocked()
	case n < 48:
		a.browseCategoryLocked()
	case n < 64:
		a.openProductLocked()
	case n < 74:
		a.switchTabLocked()
	case n < 82:
		a.showToastLocked()
	case n < 88:
		a.refreshTokenLocked()
	case n < 93:
		a.toggleThemeLocked()
	case n < 97:
		a.toggleModalLocked()
	default:
		a.reloginLocked()
	}
}

func (a *demoApp) randomProductLocked() demoProduct {
	return demoProducts[a.rng.IntN(len(demoProducts))]
}

func (a *demoApp) persistCartLocked() {
	if len(a.redux.Cart.Items) == 0 {
		if _, ok := a.mmkv["default"]["cart"]; ok {
			a.mmkvLocked("default", "delete", "cart", nil)
		}
		return
	}
	a.mmkvLocked("default", "set", "cart", string(demoMarshal(a.redux.Cart.Items)))
}

func demoCartTotal(items []demoCartItem) float64 {
	cents := 0
	for _, it := range items {
		cents += int(math.Round(it.Price*100)) * it.Qty
	}
	return float64(cents) / 100
}

func (a *demoApp) addToCartLocked() {
	p := a.randomProductLocked()
	item := demoCartItem{SKU: p.SKU, Name: p.Name, Qty: 1 + a.rng.IntN(2), Price: p.Price}
	a.dispatchLocked("cart/addItem", item, func(s *demoReduxState) { s.Cart.setQty(p, item.Qty, true) })
	a.persistCartLocked()
}

func (a *demoApp) removeFromCartLocked() {
	if len(a.redux.Cart.Items) == 0 {
		a.addToCartLocked()
		return
	}
	sku := a.redux.Cart.Items[a.rng.IntN(len(a.redux.Cart.Items))].SKU
	a.dispatchLocked("cart/removeItem", map[string]string{"sku": sku}, func(s *demoReduxState) {
		s.Cart.setQty(demoProduct{SKU: sku}, 0, false)
	})
	a.persistCartLocked()
}

// checkoutLocked opens Checkout and places the order, which empties the
// cart (and deletes its persisted copy).
func (a *demoApp) checkoutLocked() {
	if len(a.redux.Cart.Items) == 0 || len(a.nav.Routes) >= 3 {
		a.addToCartLocked()
		return
	}
	a.navigateLocked(demoAction{Type: "NAVIGATE", Payload: &demoRouteRef{Name: "Checkout"}}, func() {
		a.nav.Routes = append(a.nav.Routes, demoRoute{Key: a.keyLocked("Checkout"), Name: "Checkout"})
		a.nav.Index = len(a.nav.Routes) - 1
	})
	total := a.redux.Cart.Total
	a.dispatchLocked("cart/checkoutStarted", map[string]float64{"total": total}, nil)
	if a.checkoutFailsLocked() {
		a.dispatchLocked("cart/checkoutFailed", map[string]string{"error": "Request failed with status code 500"}, nil)
		return
	}
	orderID := fmt.Sprintf("o_%06d", a.rng.IntN(1_000_000))
	a.dispatchLocked("cart/checkoutSucceeded", map[string]any{"orderId": orderID, "total": total}, func(s *demoReduxState) {
		s.Cart.Items = []demoCartItem{}
		s.Cart.Total = 0
	})
	a.persistCartLocked()
}

func (a *demoApp) browseCategoryLocked() {
	if a.focusedRouteLocked().Name != "Catalog" {
		a.navigateToTabLocked("Catalog")
	}
	category := demoCategories[a.rng.IntN(len(demoCategories))]
	a.dispatchLocked("catalog/fetchStarted", map[string]string{"category": category}, func(s *demoReduxState) {
		s.Catalog.Loading = true
	})
	products := demoProductsIn(category)
	a.dispatchLocked("catalog/fetchSucceeded", map[string]any{"category": category, "products": products}, func(s *demoReduxState) {
		for _, p := range products {
			s.Catalog.ByID[p.SKU] = p
		}
		s.Catalog.Loading = false
	})
}

func demoProductsIn(category string) []demoProduct {
	return slices.DeleteFunc(slices.Clone(demoProducts), func(p demoProduct) bool { return p.Category != category })
}

func (a *demoApp) focusedRouteLocked() demoRouteRef {
	r := a.nav.Routes[a.nav.Index]
	if r.State != nil {
		r = r.State.Routes[r.State.Index]
	}
	return demoRouteRef{Name: r.Name, Params: r.Params}
}

// navigateLocked changes the navigation state with apply and records the
// route_change and the ui/screenChanged action that follows it.
func (a *demoApp) navigateLocked(action demoAction, apply func()) {
	from := a.focusedRouteLocked()
	apply()
	to := a.focusedRouteLocked()
	a.navStream.markChanged()
	a.recordLocked(a.navStream, "route_change", demoRouteChange{From: &from, To: to, Action: &action})
	a.dispatchLocked("ui/screenChanged", map[string]string{"name": to.Name}, func(s *demoReduxState) {
		s.UI.CurrentScreen = to.Name
	})
}

func (a *demoApp) navigateToTabLocked(tab string) {
	a.navigateLocked(demoAction{Type: "NAVIGATE", Payload: &demoRouteRef{Name: tab}}, func() {
		a.nav.Routes = a.nav.Routes[:1]
		a.nav.Index = 0
		a.nav.Routes[0].State.Index = slices.Index(demoTabs, tab)
	})
}

func (a *demoApp) switchTabLocked() {
	current := a.focusedRouteLocked().Name
	choices := slices.DeleteFunc(slices.Clone(demoTabs), func(tab string) bool { return tab == current })
	a.navigateToTabLocked(choices[a.rng.IntN(len(choices))])
}

func (a *demoApp) openProductLocked() {
	if len(a.nav.Routes) >= 3 {
		a.navigateLocked(demoAction{Type: "GO_BACK"}, func() {
			a.nav.Routes = a.nav.Routes[:len(a.nav.Routes)-1]
			a.nav.Index = len(a.nav.Routes) - 1
		})
		return
	}
	p := a.randomProductLocked()
	params := map[string]string{"sku": p.SKU}
	a.navigateLocked(demoAction{Type: "PUSH", Payload: &demoRouteRef{Name: "ProductDetail", Params: params}}, func() {
		a.nav.Routes = append(a.nav.Routes, demoRoute{Key: a.keyLocked("ProductDetail"), Name: "ProductDetail", Params: params})
		a.nav.Index = len(a.nav.Routes) - 1
	})
	a.dispatchLocked("catalog/productViewed", params, func(s *demoReduxState) {
		viewed := append([]string{p.SKU}, s.Catalog.RecentlyViewed...)
		s.Catalog.RecentlyViewed = viewed[:min(len(viewed), 5)]
	})
}

func (a *demoApp) showToastLocked() {
	a.toastID++
	toast := demoToast{ID: a.toastID, Message: demoToastMessages[a.rng.IntN(len(demoToastMessages))], Kind: "info"}
	a.dispatchLocked("ui/showToast", toast, func(s *demoReduxState) {
		toasts := append(s.UI.Toasts, toast)
		s.UI.Toasts = toasts[max(0, len(toasts)-3):]
	})
}

func (a *demoApp) refreshTokenLocked() {
	token := a.tokenLocked()
	a.dispatchLocked("auth/refreshToken", map[string]string{"token": token}, func(s *demoReduxState) {
		s.Auth.Token = &token
	})
	a.mmkvLocked("auth", "set", "token", token)
}

func (a *demoApp) toggleThemeLocked() {
	theme := "dark"
	if a.redux.UI.Theme == "dark" {
		theme = "light"
	}
	a.dispatchLocked("ui/setTheme", map[string]string{"theme": theme}, func(s *demoReduxState) {
		s.UI.Theme = theme
	})
	a.mmkvLocked("default", "set", "theme", theme)
}

func (a *demoApp) toggleModalLocked() {
	if a.redux.UI.Modal != nil {
		a.dispatchLocked("ui/closeModal", nil, func(s *demoReduxState) { s.UI.Modal = nil })
		return
	}
	modal := "promo"
	a.dispatchLocked("ui/openModal", map[string]string{"name": modal}, func(s *demoReduxState) { s.UI.Modal = &modal })
}

func (a *demoApp) reloginLocked() {
	a.dispatchLocked("auth/logout", nil, func(s *demoReduxState) {
		s.Auth = demoAuthState{Status: "anonymous"}
	})
	a.mmkvLocked("auth", "clear", "", nil)
	token := a.tokenLocked()
	user := demoAdmin
	a.dispatchLocked("auth/loginSucceeded", map[string]any{"user": user, "token": token}, func(s *demoReduxState) {
		s.Auth = demoAuthState{User: &user, Token: &token, Status: "authenticated", RememberedLogin: &demoLogin{Email: user.Email, Password: demoPassword}}
	})
	a.mmkvLocked("auth", "set", "token", token)
	a.mmkvLocked("auth", "set", "userId", user.ID)
}
