package main

import (
	"fmt"
	"strings"
)

// The prompts and their texts, written for an agent in the convention set
// out in mcp_prompts.go's header (TestPromptTextsMatchTools checks it).
var allPrompts = []*prompt{
	{
		name:  "investigate-error",
		title: "Investigate an error",
		description: "Find the latest errors in the app's logs, the failing requests, the Redux actions just before " +
			"them and the state they changed; conclude with the likely cause and the evidence.",
		args: []promptArg{{name: "symptom", title: "Symptom",
			description: "What went wrong, in your words (optional), e.g. \"checkout spinner never stops\"."}},
		write: investigateErrorText,
	},
	{
		name:  "why-did-this-change",
		title: "Why did this state change?",
		description: "Find the snapshots around the last change of one Redux state path, diff them, and name " +
			"the actions dispatched in between.",
		args: []promptArg{{name: "path", title: "State path", required: true, kind: argPath,
			description: "A Redux state path such as cart.total or auth.user.role; completes from the current state."}},
		write: whyDidThisChangeText,
	},
	{
		name:  "explain-current-screen",
		title: "Explain the current screen",
		description: "Find the focused screen by walking the navigation state through nested navigators, with " +
			"its params, and read the Redux state slices that screen most likely shows.",
		write: explainCurrentScreenText,
	},
	{
		name:  "compare-sessions",
		title: "Compare two apps",
		description: "Read the same state paths in two connected apps (say a phone and a simulator) and show " +
			"them side by side with every difference.",
		args: []promptArg{
			{name: "a", title: "First app", required: true, kind: argSession,
				description: "Session id or app name of the first app, as debug_health_check lists it."},
			{name: "b", title: "Second app", required: true, kind: argSession,
				description: "Session id or app name of the second app."},
		},
		write: compareSessionsText,
	},
	{
		name:  "storage-audit",
		title: "Audit app storage",
		description: "List MMKV and async storage keys with their sizes, and flag values that look stale or " +
			"disagree with the Redux state.",
		args: []promptArg{{name: "instance", title: "MMKV instance", kind: argInstance,
			description: "Audit only this MMKV instance (optional); completes from the app's instances."}},
		write: storageAuditText,
	},
}

// jsonQuote writes s as a JSON string, the way texts pass values in calls.
func jsonQuote(s string) string { return string(appendJSONString(nil, s, false)) }

// promptText builds a text from numbered steps.
type promptText struct {
	b    strings.Builder
	step int
}

func (t *promptText) line(format string, args ...any) {
	fmt.Fprintf(&t.b, format, args...)
	t.b.WriteByte('\n')
}

func (t *promptText) next(format string, args ...any) {
	t.step++
	t.b.WriteByte('\n')
	fmt.Fprintf(&t.b, "%d. ", t.step)
	t.line(format, args...)
}

// sessionNote tells the agent how to pick an app once several can be
// connected; before that it says nothing.
func sessionNote(t *promptText, tools toolCatalog, example string) {
	if tools.takes("debug_get_state_path", "session") {
		t.line("Several apps may be connected: debug_health_check lists them as sessions, and calls answer for the most "+
			"recently connected one. If the user means another, pass its id in every call, e.g. %s.", example)
	}
}

func investigateErrorText(t *promptText, args map[string]string, tools toolCatalog) {
	t.line("Investigate an error in the app that devtools-mcp is connected to, and find its likely cause.")
	if s, ok := args["symptom"]; ok {
		t.line("The user reports: %s", jsonQuote(s))
	}
	t.line("Use the devtools-mcp tools in this order. Quote seqs and timestamps as the tools return them; each stream numbers its own seqs, so relate events of different streams by timestamp.")
	sessionNote(t, tools, `debug_query_events(stream="redux", session="<id>")`)

	t.next("debug_health_check() — is the app connected, and which streams does it offer? If it is not connected, stop and tell the user how to connect it (the answer says why).")
	if tools.has("debug_get_logs") {
		t.next(`Errors logged: debug_get_logs(level="error", limit=20). If the symptom names a distinctive word, also debug_get_logs(level="warn", contains="<word>", limit=20). Note the first error's timestamp, message and stack.`)
	} else {
		t.next(`Errors logged: if a "console" stream is offered, debug_query_events(stream="console", limit=50) and keep the entries whose level is error or warn. Note the first error's timestamp, message and stack. With no console stream, say that the app does not report its logs.`)
	}
	if tools.has("debug_get_network") {
		t.next(`Failing requests: debug_get_network(status="failed", limit=20), debug_get_network(status="5xx", limit=20) and debug_get_network(status="4xx", limit=20). For the failure closest in time to the first error, debug_get_network(seq=<its seq>) gives the request and response in full.`)
	} else {
		t.next(`Failing requests: if a "network" stream is offered, debug_query_events(stream="network", limit=50) and keep the requests with a status of 400 or more or with no response. With no network stream, say that the app does not report its requests.`)
	}
	if tools.has("debug_wait_for") {
		t.next(`If the error is not in what the app holds, or to see it happen again: ask the user to repeat what failed (or repeat it yourself with debug_run_command or debug_dispatch_action), then, instead of asking again and again, debug_wait_for(stream="console", level="error", since_seq=<the logs' latestSeq>) answers the moment the error is logged, and debug_wait_for(stream="network", status="failed", since_seq=<the requests' latestSeq>) with the next request that gets no response. matched 0 means nothing happened before its timeout.`)
	}
	t.next(`Server data and stores: if debug_health_check lists a "react_query" stream, debug_get_snapshot(stream="react_query") gives TanStack Query's cache, where a query with status "error" holds its error and a failed mutation its variables; if it lists "stores" (Zustand and the like), debug_get_snapshot(stream="stores") gives each store's state. Skip the streams the app does not offer.`)
	t.next(`Actions just before: debug_query_events(stream="redux", event_type="action_dispatched", limit=30). Keep the actions dispatched up to the first error (with no error found, the last ones) and pick those that look related to the symptom, the errors or the failing requests.`)
	t.next(`What those actions changed: debug_query_events(stream="redux", event_type="state_snapshot", limit=5) lists recent snapshots (each holds the whole state; if the answer is too large, ask for fewer). Take the last snapshot before the first related action as base and the newest snapshot as target, then debug_diff_snapshots(stream="redux", base_seq=<base seq>, target_seq=<target seq>). Keep the changed paths that belong to the related actions, and read any current value you need with debug_get_state_path(path="<path>").`)
	t.next("Report: the likely cause in one or two sentences; then the evidence as a list — error messages with their first stack frame, failing requests with method, URL and status, the related actions and the state paths they changed, each with its seq and timestamp; then what to look at in the code next. Say plainly what you looked for and did not find.")
}

func whyDidThisChangeText(t *promptText, args map[string]string, tools toolCatalog) {
	path := args["path"]
	t.line("Find out why the Redux state path %s changed: when it last changed, from what to what, and which actions did it.", jsonQuote(path))
	t.line("A change counts if a diff reports this path, a path inside it (it starts with the path followed by . or [), or a parent of it (the parent was replaced or removed).")
	sessionNote(t, tools, `debug_get_state_path(path=`+jsonQuote(path)+`, session="<id>")`)

	t.next("debug_get_state_path(path=%s) — its current value. If the path does not exist now, the error names the deepest part that does; keep going, since its removal may be the change.", jsonQuote(path))
	t.next(`debug_query_events(stream="redux", event_type="state_snapshot", limit=10) — the seqs and timestamps of recent snapshots, oldest first (each holds the whole state; if the answer is too large, ask for fewer). With fewer than two snapshots there is nothing to diff: say so and stop.`)
	t.next(`debug_diff_snapshots(stream="redux", base_seq=<oldest snapshot seq>, target_seq=<newest snapshot seq>). If no change concerns the path, it did not change in the history the app still holds: report its current value and stop.`)
	t.next(`Otherwise narrow down to the two consecutive snapshots between which the path changed, halving the range each time with debug_diff_snapshots(stream="redux", base_seq=<seq>, target_seq=<seq>). If it changed more than once, keep the latest change and mention the earlier ones.`)
	t.next(`The actions in between: debug_query_events(stream="redux", event_type="action_dispatched", since_seq=<base seq>, limit=50), keeping those with a seq below the target seq.`)
	t.next("Report: the old and the new value; the two snapshots (seqs and timestamps); the actions in between with their type and payload; which action most likely made the change and why (its type or payload names this part of the state); and whether the change looks intended.")
}

func explainCurrentScreenText(t *promptText, _ map[string]string, tools toolCatalog) {
	t.line("Explain what the app is showing right now: the focused screen, how the user got there, and the state it shows.")
	sessionNote(t, tools, `debug_get_snapshot(stream="navigation", session="<id>")`)

	t.next(`debug_get_snapshot(stream="navigation") — the navigation tree. The focused route of a navigator is routes[index]; when that route has a "state", it is a nested navigator: repeat inside it until a route has none. That last route is the screen. If the tree is too large, narrow with debug_get_snapshot(stream="navigation", scope="<path such as routes.0.state>").`)
	t.next(`How the user got there: debug_query_events(stream="navigation", event_type="route_change", limit=5) — the last route changes, each from one route to another with params.`)
	t.next(`The state it shows: debug_get_state_path(path="") gives the top level of the Redux state (if it is too large, the error's outline lists the top-level keys and their sizes, which is enough). Pick the slices the screen most likely reads, by the screen's name (a Cart screen reads cart), by its params (an id or sku param selects an entry of a collection keyed by it), and by UI slices that mention screens, modals or toasts. Read each with debug_get_state_path(path="<slice or entry>"). An app that keeps its state in named stores or TanStack Query instead (debug_health_check lists "stores" or "react_query", and reading Redux fails) is read the same way with debug_get_snapshot and a scope.`)
	t.next("Report: the chain of navigators down to the screen (e.g. Main > Cart), the screen's name and params; the slices it most likely reads with a short summary of their values; and anything inconsistent, such as a param naming an entry the store does not hold, or state naming a different current screen than navigation does.")
}

func compareSessionsText(t *promptText, args map[string]string, tools toolCatalog) {
	t.line("Compare two apps connected to devtools-mcp side by side: a = %s and b = %s.", jsonQuote(args["a"]), jsonQuote(args["b"]))
	if !tools.takes("debug_get_state_path", "session") {
		t.line("This version of devtools-mcp serves only one connected app at a time: an app that connects replaces the one before, so two apps cannot be compared side by side yet.")
		t.next("debug_health_check() — which app is connected now (adapter.sessionId).")
		t.next("Tell the user plainly that comparing two connected apps is not supported by this server version, and which of a and b (if either) is the one connected. Do not compare anything else in its place.")
		return
	}
	t.next("debug_health_check() — the sessions. Find a and b among them by id or app name and note their session ids; if either is missing, or a name matches several sessions (two devices running the same app), stop and show the user the sessions listed. Note whether each is still connected.")
	t.next(`The top level of each state: debug_get_state_path(path="", session="<id of a>") and debug_get_state_path(path="", session="<id of b>") (if an answer is too large, its outline lists the top-level keys). List keys present in only one of them.`)
	t.next(`For each top-level key both have, read it in both, debug_get_state_path(path="<key>", session="<id of a>") and debug_get_state_path(path="<key>", session="<id of b>"), and where the values differ go one level deeper until you reach the differing leaves. Skip values that differ by nature (timestamps, generated ids, tokens) but say that you did.`)
	t.next(`The screen each shows: debug_get_snapshot(stream="navigation", session="<id of a>") and debug_get_snapshot(stream="navigation", session="<id of b>"); the focused route is routes[index], followed into nested "state".`)
	t.next("Report a side-by-side table (path | a | b) of every difference found, the focused screen of each, and which differences most likely explain different behaviour of the two apps.")
}

func storageAuditText(t *promptText, args map[string]string, tools toolCatalog) {
	instance, one := args["instance"]
	if one {
		t.line("Audit the MMKV storage instance %s of the app: its keys, their sizes, and values that look stale or disagree with the Redux state.", jsonQuote(instance))
	} else {
		t.line("Audit the app's persistent storage (MMKV instances, and async storage if reported): keys, sizes, and values that look stale or disagree with the Redux state.")
	}
	sessionNote(t, tools, `debug_get_snapshot(stream="mmkv", session="<id>")`)

	t.next(`debug_health_check() — check that the app offers an "mmkv" stream (and note an "async_storage" stream if there is one).`)
	only := ""
	if one {
		t.next("debug_get_snapshot(stream=\"mmkv\", scope=%s) — the instance's keys with their values and its totalSize in bytes. If the instance does not exist, the error lists those that do: report them and stop.", jsonQuote(formatPath([]pathSegment{{Key: instance}})))
		only = " Keep those of instance " + jsonQuote(instance) + "."
	} else {
		t.next(`debug_get_snapshot(stream="mmkv") — every instance with its keys, values and totalSize in bytes. If the answer is too large, its outline lists the instances; read them one by one with debug_get_snapshot(stream="mmkv", scope="<instance>").`)
	}
	t.next(`Recent writes: debug_query_events(stream="mmkv", event_type="mmkv_mutation", limit=100) — each with instance, key, op (set, delete, clear) and timestamp.%s For each key note when it was last written; keys never written in this history are candidates for stale data (the history is bounded, so say "not written recently", not "never").`, only)
	t.next(`Cross-check with Redux: for keys that mirror Redux state (same or similar names: theme, token, user or userId, cart, settings, onboarding flags), read the Redux side with debug_get_state_path(path="<path>") and compare the values.`)
	t.next(`If an "async_storage" stream is offered, debug_query_events(stream="async_storage", limit=100) and audit its keys the same way.`)
	t.next("Report a table per instance (key | size in bytes of its JSON value | last written | remark), the largest keys first; then the findings: values that disagree with Redux (both values), keys that look stale or orphaned, unusually large values, and secrets stored in plain text (name the key, never repeat the secret).")
}
