#!/usr/bin/env bash
# Checks devtools-mcp beside the real React Native DevTools frontend and a
# web app, in headless Chromium (Debian's chromium package, installed with
# apt-get when /usr/bin/chromium is missing), driven over the DevTools
# protocol by .ci/devtools-frontend/check.js with nothing but a WebSocket.
# The frontend is @react-native/debugger-frontend as the real
# @react-native/dev-middleware serves it (.ci/metro-inspector's lockfile),
# opened on the page of the app stand-in of .ci/metro-inspector. The web app
# is .ci/devtools-frontend/webapp, served from an origin of its own, with a
# Wire Protocol adapter written against PROTOCOL.md. check.js lists what a
# pass shows.
#
# Usage: .ci/devtools-frontend.sh [devtools-mcp binary]   (built when absent)
# Needs Go (without a binary), Node.js 20 or newer and npm, and root for
# apt-get when Chromium is missing (CHROMIUM=path uses another build).
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib/npm.sh

printf '\n=== %s\n' "React Native DevTools' real frontend and a web app, in headless Chromium"
command -v node >/dev/null || { echo "FAIL: node is not installed"; exit 1; }
command -v npm >/dev/null || { echo "FAIL: npm is not installed"; exit 1; }

work=$(mktemp -d)
check_pid=""
cleanup() {
	# check.js ends the browser, proxy, app and devtools-mcp it started; a
	# hang is ended by its pid.
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

if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
	start=$(date +%s%N)
	(apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium) >"$work/apt.log" 2>&1 ||
		{ echo "FAIL: apt-get install chromium:"; tail -20 "$work/apt.log"; exit 1; }
	echo "apt-get install chromium: $((($(date +%s%N) - start) / 1000000)) ms"
fi
"${CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null

# .ci/metro-inspector's packages (skipped after .ci/metro-inspector.sh).
npm_ci .ci/metro-inspector

status=0
started=$(date +%s%N)
# Chromium's profile goes to this run's temporary folder.
(cd .ci/devtools-frontend && TMPDIR="$work" exec timeout 300 node check.js "$bin") &
check_pid=$!
wait "$check_pid" || status=$?
check_pid=""
echo "check: $((($(date +%s%N) - started) / 1000000)) ms"
[ "$status" -eq 0 ] || { echo "FAIL: DevTools frontend and web app check (exit status $status)"; exit 1; }
