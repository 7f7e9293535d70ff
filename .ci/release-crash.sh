#!/usr/bin/env bash
# A release build's JavaScript crash mapped to source, live: the pinned
# Metro (.ci/metro's lockfile) builds .ci/metro/release for release
# (minified, with its source map), Node runs the bundle until it throws,
# and its frames, written as React Native writes them into a
# JavascriptException, reach devtools-mcp as logcat lines through the real
# adb and the device stand-in of the adb check (.ci/adb/device.js); the
# answer must name what metro-symbolicate names for the same map
# (.ci/metro/release/check.js). Needs Node.js 20 or newer with npm, and adb
# (.ci/adb.sh installs it).
# Usage: .ci/release-crash.sh [devtools-mcp binary]   (built when absent)
. "$(dirname "$0")/lib/check.sh"
. .ci/lib/npm.sh

check_title "a release build's JavaScript crash mapped with its source map, as metro-symbolicate maps it" npm adb
check_work
check_binary "${1:-}"

npm_ci .ci/metro
# Metro's caches go to the temporary folder of this run only.
TMPDIR="$work" CI=true timeout 240 node .ci/metro/release/check.js "$bin"
