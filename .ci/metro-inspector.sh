#!/usr/bin/env bash
# Checks devtools-mcp's Metro link against real parts: Metro's inspector
# proxy (@react-native/dev-middleware, pinned in .ci/metro-inspector's
# lockfile, run on a loopback port) and an app stand-in that connects to the
# proxy's /inspector/device endpoint and backs its page with Node's own V8
# inspector, so every console and exception event is CDP as V8 writes it.
#
# What a pass proves, with the proxy between them as it is in every React
# Native project: devtools-mcp (stdio, METRO_URL pointed at the proxy) finds
# the app in /json/list and lists it in debug_health_check within 3 s; its
# Runtime.enable reaches the page; debug_get_logs returns console.log,
# console.warn and console.error with an object argument, and an uncaught
# exception with its stack; a second debugger (React Native DevTools'
# place) attached to the same page first stays connected and answered; the
# app relaunched after the crash (same page id) or reloaded (new page id)
# stays one session; nothing devtools-mcp sent runs code in or pauses the
# app; a page that takes one debugger is left to DevTools (unless
# METRO_ATTACH_EXCLUSIVE); a flood of console calls stays bounded; two
# devices of one name are two sessions, each with its own logs, and one
# relaunching stays its own.
# check.js's header lists the scenarios.
#
# Usage: .ci/metro-inspector.sh [devtools-mcp binary]   (built when absent)
# Needs Go (without a binary), Node.js 20 or newer and npm; npm fetches the
# locked packages (its cache first). RECORD_DIR=dir also writes the CDP
# frames the proxy delivered there (testdata/metro/real/ was made so).
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib/npm.sh
repo=$(pwd)
dir=.ci/metro-inspector

printf '\n=== %s\n' "Metro link against the real inspector proxy (@react-native/dev-middleware)"
command -v node >/dev/null || { echo "FAIL: node is not installed"; exit 1; }
command -v npm >/dev/null || { echo "FAIL: npm is not installed"; exit 1; }

work=$(mktemp -d)
check_pid=""
cleanup() {
	# check.js ends what it started; whatever outlives it here (a hang) is
	# ended by its pid, and the app stand-in and devtools-mcp end with their
	# stdin.
	if [ -n "$check_pid" ]; then kill "$check_pid" 2>/dev/null || true; fi
	rm -rf "$work"
}
trap cleanup EXIT

bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$work/devtools-mcp" .
	bin="$work/devtools-mcp"
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
# check.js runs in its folder: a relative RECORD_DIR means the repository's.
if [ -n "${RECORD_DIR:-}" ]; then
	mkdir -p "$RECORD_DIR"
	RECORD_DIR=$(cd "$RECORD_DIR" && pwd)
	export RECORD_DIR
fi

npm_ci "$dir"
installed=$(date +%s%N)
echo "$(node -p 'require("./'"$dir"'/node_modules/@react-native/dev-middleware/package.json").version') of @react-native/dev-middleware, node $(node --version)"

status=0
(cd "$dir" && exec timeout 120 node check.js "$bin") &
check_pid=$!
wait "$check_pid" || status=$?
check_pid=""
echo "check: $((($(date +%s%N) - installed) / 1000000)) ms"
[ "$status" -eq 0 ] || { echo "FAIL: Metro inspector check (exit status $status)"; exit 1; }
