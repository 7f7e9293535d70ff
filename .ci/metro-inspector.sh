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
. "$(dirname "$0")/lib/check.sh"
. .ci/lib/npm.sh
dir=.ci/metro-inspector

check_title "Metro link against the real inspector proxy (@react-native/dev-middleware)" npm
check_work
check_binary "${1:-}"
# check.js runs in its folder: a relative RECORD_DIR means the repository's.
if [ -n "${RECORD_DIR:-}" ]; then
	mkdir -p "$RECORD_DIR"
	RECORD_DIR=$(cd "$RECORD_DIR" && pwd)
	export RECORD_DIR
fi

npm_ci "$dir"
installed=$(date +%s%N)
echo "$(node -p 'require("./'"$dir"'/node_modules/@react-native/dev-middleware/package.json").version') of @react-native/dev-middleware, node $(node --version)"

# check.js ends what it started; whatever outlives it (a hang) is ended at
# the exit by its pid, and the app stand-in and devtools-mcp end with
# their stdin.
check_run "Metro inspector check" "$installed" "$dir" timeout 120 node check.js "$bin"
