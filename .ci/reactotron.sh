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
. "$(dirname "$0")/lib/check.sh"
. .ci/lib/npm.sh
dir=.ci/reactotron

check_title "Reactotron apps whose store comes late, with the real plugins" npm
check_work
check_binary "${1:-}"

npm_ci "$dir"
installed=$(date +%s%N)
echo "reactotron-core-client $(node -p 'require("./'"$dir"'/node_modules/reactotron-core-client/package.json").version'), node $(node --version)"

# check.js ends what it started; a hang is ended at the exit by its pid.
check_run "Reactotron check" "$installed" "$dir" timeout 120 node check.js "$bin"
