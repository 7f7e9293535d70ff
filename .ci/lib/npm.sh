# shellcheck shell=bash
# Sourced by the real-parts checks' scripts (.ci/*.sh), which run from the
# repository's root: npm_ci installs a check's pinned packages.

# npm_ci FOLDER [FLAG...]: `npm ci` of FOLDER's package-lock.json, npm's
# cache first (--prefer-offline; each FLAG is added, as --ignore-scripts),
# unless FOLDER/node_modules already holds exactly what the lockfile locks
# (.ci/lockfile-installed.js: a run again on the same machine, or a folder
# another check installed). Prints one line, skipped or how long npm took,
# with the size installed; when npm fails, prints its output and exits the
# script with status 1.
npm_ci() {
	local dir=$1 start log
	shift
	start=$(date +%s%N)
	if node .ci/lockfile-installed.js "$dir" >/dev/null; then
		echo "npm ci $dir: skipped, node_modules matches the lockfile ($(du -sm "$dir/node_modules" | cut -f1) MB)"
		return 0
	fi
	log=$(mktemp)
	if ! (cd "$dir" && npm ci --prefer-offline --no-audit --no-fund --loglevel=error "$@") >"$log" 2>&1; then
		echo "FAIL: npm ci in $dir:"
		cat "$log"
		rm -f "$log"
		exit 1
	fi
	rm -f "$log"
	echo "npm ci $dir: $((($(date +%s%N) - start) / 1000000)) ms, $(du -sm "$dir/node_modules" | cut -f1) MB"
}
