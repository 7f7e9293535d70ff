# shellcheck shell=bash
# Sourced first by the real-parts checks' scripts (.ci/*.sh): the script
# stops at the first failing command and runs from the repository's root,
# and these functions are the steps every such script takes. check_work
# sets $work, check_binary $bin, check_run $check_pid.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."

# check_title TITLE [COMMAND...]: prints the check's title line; exits the
# script with status 1 ("FAIL: node is not installed") unless node and
# each COMMAND (npm) is on PATH.
check_title() {
	local c
	printf '\n=== %s\n' "$1"
	shift
	for c in node "$@"; do
		command -v "$c" >/dev/null || { echo "FAIL: $c is not installed"; exit 1; }
	done
}

# check_work [PATH...]: makes $work, a temporary folder; at the script's
# exit the check still running as $check_pid (a hang, or the script
# stopped) is ended by its pid, and $work and each PATH are removed.
check_work() {
	work=$(mktemp -d)
	check_pid=""
	check_remove=("$work" "$@")
	trap check_cleanup EXIT
}

# check_cleanup is check_work's EXIT trap.
check_cleanup() {
	if [ -n "$check_pid" ]; then kill "$check_pid" 2>/dev/null || true; fi
	rm -rf "${check_remove[@]}"
}

# check_binary [BINARY]: sets $bin to BINARY's absolute path, or, without
# one, builds devtools-mcp into $work.
check_binary() {
	bin=${1:-}
	if [ -z "$bin" ]; then
		go build -o "$work/devtools-mcp" .
		bin="$work/devtools-mcp"
	fi
	bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
}

# apt_install PACKAGE LINES: installs Debian's PACKAGE with apt-get (as
# root) and prints how long it took; when apt-get fails, prints the last
# LINES of its output and exits the script with status 1.
apt_install() {
	local start
	start=$(date +%s%N)
	{ apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends "$1"; } >"$work/apt.log" 2>&1 ||
		{ echo "FAIL: apt-get install $1:"; tail -"$2" "$work/apt.log"; exit 1; }
	echo "apt-get install $1: $((($(date +%s%N) - start) / 1000000)) ms"
}

# check_run WHAT SINCE DIR COMMAND...: runs COMMAND in DIR in the
# background as $check_pid and waits for it; when SINCE (a date +%s%N) is
# not empty, prints "check: N ms" since then. When COMMAND fails, prints
# "FAIL: WHAT (exit status N)" and exits the script with status 1.
check_run() {
	local what=$1 since=$2 dir=$3 status=0
	shift 3
	(cd "$dir" && exec "$@") &
	check_pid=$!
	wait "$check_pid" || status=$?
	check_pid=""
	if [ -n "$since" ]; then echo "check: $((($(date +%s%N) - since) / 1000000)) ms"; fi
	[ "$status" -eq 0 ] || { echo "FAIL: $what (exit status $status)"; exit 1; }
}
