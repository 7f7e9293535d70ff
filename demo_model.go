package main

// The shapes of the simulated shop's Redux state, navigation state and
// MMKV events, as the app reports them.

type demoUser struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Email string `json:"email"`
	Role  string `json:"role"`
}

type demoAuthState struct {
	User   *demoUser `json:"user"`
	Token  *string   `json:"token"`
	Status string    `json:"status"`
	// RememberedLogin is what a "remember me" box keeps: a password in the
	// store, which redaction must keep from agents.
	RememberedLogin *demoLogin `json:"rememberedLogin,omitempty"`
}

type demoLogin struct {
	Email    string `json:"email"`
	Password string `json:"password"`
}

// demoPassword is the demo user's password, remembered in the auth state.
const demoPassword = "Ada-Lovelace-1815"

type demoCartItem struct {
	SKU   string  `json:"sku"`
	Name  string  `json:"name"`
	Qty   int     `json:"qty"`
	Price float64 `json:"price"`
}

type demoCartState struct {
	Items    []demoCartItem `json:"items"`
	Total    float64        `json:"total"`
	Currency string         `json:"currency"`
}

type demoProduct struct {
	SKU      string  `json:"sku"`
	Name     string  `json:"name"`
	Price    float64 `json:"price"`
	Category string  `json:"category"`
}

type demoCatalogState struct {
	ByID           map[string]demoProduct `json:"byId"`
	Categories     []string               `json:"categories"`
	Loading        bool                   `json:"loading"`
	RecentlyViewed []string               `json:"recentlyViewed"`
}

type demoToast struct {
	ID      int    `json:"id"`
	Message string `json:"message"`
	Kind    string `json:"kind"`
}

type demoUIState struct {
	Theme         string      `json:"theme"`
	Toasts        []demoToast `json:"toasts"`
	Modal         *string     `json:"modal"`
	CurrentScreen string      `json:"currentScreen"`
}

type demoReduxState struct {
	Auth    demoAuthState    `json:"auth"`
	Cart    demoCartState    `json:"cart"`
	Catalog demoCatalogState `json:"catalog"`
	UI      demoUIState      `json:"ui"`
}

type demoAction struct {
	Type    string `json:"type"`
	Payload any    `json:"payload,omitempty"`
}

type demoActionDispatched struct {
	Action     demoAction `json:"action"`
	DurationMs float64    `json:"durationMs"`
}

// demoNavState is a React Navigation state; nested navigators sit in
// routes[i].state.
type demoNavState struct {
	Stale      bool        `json:"stale"`
	Type       string      `json:"type"`
	Key        string      `json:"key"`
	Index      int         `json:"index"`
	RouteNames []string    `json:"routeNames"`
	Routes     []demoRoute `json:"routes"`
}

type demoRoute struct {
	Key    string            `json:"key"`
	Name   string            `json:"name"`
	Params map[string]string `json:"params,omitempty"`
	State  *demoNavState     `json:"state,omitempty"`
}

type demoRouteRef struct {
	Name   string            `json:"name"`
	Params map[string]string `json:"params,omitempty"`
}

type demoRouteChange struct {
	From   *demoRouteRef `json:"from"`
	To     demoRouteRef  `json:"to"`
	Action *demoAction   `json:"action,omitempty"` // a navigation action: its payload a *demoRouteRef
}

type demoMMKVMutation struct {
	Instance string `json:"instance"`
	Key      string `json:"key"` // "" for clear
	Op       string `json:"op"`
	Value    any    `json:"value,omitempty"`
}

type demoMMKVSnapshot struct {
	Keys      map[string]any `json:"keys"`
	TotalSize int            `json:"totalSize"`
}
