#!/usr/bin/env bash
# Stacks mapped to source through the real Metro: installs the pinned
# `metro` (.ci/metro/package-lock.json), serves .ci/metro's small app with
# it, runs the app's bundle so that it throws, and checks that
# debug_get_logs of the devtools-mcp binary names the line that threw in
# src/cart.js (.ci/metro/check.js). Needs Go and Node.js 20 or newer with
# npm. Usage: .ci/metro-symbolicate.sh [path to a built devtools-mcp]
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib/npm.sh

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bin=${1:-}
if [ -z "$bin" ]; then
	go build -o "$work/devtools-mcp" .
	bin="$work/devtools-mcp"
fi

npm_ci .ci/metro
# Metro's caches go to the temporary folder of this run only.
TMPDIR="$work" CI=true node .ci/metro/check.js "$bin"
