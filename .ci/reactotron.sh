#!/usr/bin/env bash
# Checks devtools-mcp's Reactotron bridge against the real Reactotron client
# and state plugins (pinned in .ci/reactotron's lockfile): apps that connect
# before their store exists, as real ones do. reactotron-redux with the
# store created 600 ms after connect, reactotron-redux that never creates
# one, reactotron-mst tracking its tree 600 ms after connect, and
# reactotron-plugin-zustand. check.js's header lists what is asserted; in
# short: no app throws, and every read answers within 3 s, with the state
# once it exists and the "no store yet" error before.
#
# Usage: .ci/reactotron.sh [devtools-mcp binary]   (built when absent)
# Needs Go (without a binary), Node.js 20 or newer and npm; npm fetches the
# locked packages (its cache first).
set -euo pipefail
cd "$(dirname "$0")/.."
. .ci/lib/npm.sh
dir=.ci/reactotron

printf '\n=== %s\n' "Reactotron apps whose store comes late, with the real plugins"
command -v node >/dev/null || { echo "FAIL: node is not installed"; exit 1; }
command -v npm >/dev/null || { echo "FAIL: npm is not installed"; exit 1; }

work=$(mktemp -d)
check_pid=""
cleanup() {
	# check.js ends what it started; a hang is ended by its pid.
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

npm_ci "$dir"
installed=$(date +%s%N)
echo "reactotron-core-client $(node -p 'require("./'"$dir"'/node_modules/reactotron-core-client/package.json").version'), node $(node --version)"

status=0
(cd "$dir" && exec timeout 120 node check.js "$bin") &
check_pid=$!
wait "$check_pid" || status=$?
check_pid=""
echo "check: $((($(date +%s%N) - installed) / 1000000)) ms"
[ "$status" -eq 0 ] || { echo "FAIL: Reactotron check (exit status $status)"; exit 1; }
