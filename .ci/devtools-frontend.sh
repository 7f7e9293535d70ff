#!/usr/bin/env bash
# Checks devtools-mcp beside the real React Native DevTools frontend and a
# web app, in headless Chromium (Debian's chromium package, installed with
# apt-get when /usr/bin/chromium is missing), driven over the DevTools
# protocol by .ci/devtools-frontend/check.js with nothing but a WebSocket.
# The frontend is @react-native/debugger-frontend as the real
# @react-native/dev-middleware serves it (.ci/metro-inspector's lockfile),
# opened on the page of the app stand-in of .ci/metro-inspector. The web app
# is .ci/devtools-frontend/webapp, served from an origin of its own, with a
# Wire Protocol adapter written against docs/protocol.md. check.js lists what a
# pass shows.
#
# Usage: .ci/devtools-frontend.sh [devtools-mcp binary]   (built when absent)
# Needs Go (without a binary), Node.js 20 or newer and npm, and root for
# apt-get when Chromium is missing (CHROMIUM=path uses another build).
. "$(dirname "$0")/lib/check.sh"
. .ci/lib/npm.sh

check_title "React Native DevTools' real frontend and a web app, in headless Chromium" npm
check_work
check_binary "${1:-}"

if [ -z "${CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ]; then
	apt_install chromium 20
fi
"${CHROMIUM:-/usr/bin/chromium}" --version 2>/dev/null

# .ci/metro-inspector's packages (skipped after .ci/metro-inspector.sh).
npm_ci .ci/metro-inspector

# check.js ends the browser, proxy, app and devtools-mcp it started; a hang
# is ended at the exit by its pid. Chromium's profile goes to this run's
# temporary folder.
check_run "DevTools frontend and web app check" "$(date +%s%N)" .ci/devtools-frontend \
	env TMPDIR="$work" timeout 300 node check.js "$bin"
