#!/usr/bin/env bash
# Stacks mapped to source through the real Metro: installs the pinned
# `metro` (.ci/metro/package-lock.json), serves .ci/metro's small app with
# it, runs the app's bundle so that it throws, and checks that
# debug_get_logs of the devtools-mcp binary names the line that threw in
# src/cart.js (.ci/metro/check.js). Needs Go and Node.js 20 or newer with
# npm. Usage: .ci/metro-symbolicate.sh [path to a built devtools-mcp]
. "$(dirname "$0")/lib/check.sh"
. .ci/lib/npm.sh

check_work
check_binary "${1:-}"

npm_ci .ci/metro
# Metro's caches go to the temporary folder of this run only.
TMPDIR="$work" CI=true node .ci/metro/check.js "$bin"
