#!/usr/bin/env bash
# Checks the npm packaging end to end, offline: builds every package with
# build.sh, then installs the launcher and this machine's platform package
# from their tarballs into a fresh project, the way a user's npx would, and
# talks to the server through the launcher. Run by .ci/run; needs Go,
# Node.js (18 or newer) and npm, and reaches no registry: npm is pointed at
# a closed loopback port, offline, with a cache and config of its own.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

command -v node >/dev/null || fail "node is not installed (Node.js 18 or newer is needed)"
command -v npm >/dev/null || fail "npm is not installed"
echo "node $(node --version), npm $(npm --version)"

work=$(mktemp -d)
cleanup() {
	# Anything still running from a failed step is ended by its pid.
	for pid in ${started_pids:-}; do kill -KILL "$pid" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
started_pids=""

touch "$work/user.npmrc" "$work/global.npmrc"
export npm_config_userconfig="$work/user.npmrc" npm_config_globalconfig="$work/global.npmrc"
export npm_config_cache="$work/npm-cache"
export npm_config_registry="http://127.0.0.1:9/" # nothing listens: a fetch fails at once
export npm_config_offline=true npm_config_fetch_retries=0 npm_config_fetch_timeout=5000
export npm_config_audit=false npm_config_fund=false npm_config_update_notifier=false npm_config_loglevel=warn
unset DEVTOOLS_MCP_BINARY WS_PORT REACTOTRON_PORT MCP_TRANSPORT

version=0.0.0-check.1
dist="$work/dist"
name=$(node -p 'require("./npm/package.json").name')
host="$(node -p 'process.platform + "-" + process.arch')"
platform_pkg="$name-$host"

echo "--- build every package and archive (npm/build.sh $version)"
npm/build.sh "$version" "$dist" >"$work/build.log" 2>&1 || { cat "$work/build.log"; fail "npm/build.sh"; }
targets="darwin-arm64 darwin-x64 linux-x64 linux-arm64 win32-x64 win32-arm64"
for f in "$name-$version.tgz" SHA256SUMS server.json; do
	[ -f "$dist/$f" ] || fail "build.sh left no $f"
done
(cd "$dist" && sha256sum -c --quiet SHA256SUMS) || fail "SHA256SUMS does not match the files"
[ "$(wc -l <"$dist/SHA256SUMS")" -eq 13 ] || fail "SHA256SUMS should list 7 packages and 6 archives"

echo "--- each of the six cross-builds: os/cpu, static, trimmed, stamped"
mkdir "$work/unpacked"
for target in $targets; do
	os=${target%-*} cpu=${target#*-}
	goos=$os goarch=$cpu exe=devtools-mcp archive_ext=tar.gz
	[ "$os" = win32 ] && goos=windows exe=devtools-mcp.exe archive_ext=zip
	[ "$cpu" = x64 ] && goarch=amd64
	tgz="$dist/$name-$target-$version.tgz"
	[ -f "$tgz" ] || fail "no package for $target"
	grep -q " devtools-mcp_${version}_${goos}_${goarch}.$archive_ext\$" "$dist/SHA256SUMS" || fail "no archive for $target in SHA256SUMS"
	mkdir "$work/unpacked/$target"
	tar -xzf "$tgz" -C "$work/unpacked/$target"
	bin="$work/unpacked/$target/package/bin/$exe"
	[ -f "$bin" ] || fail "$target: the package lacks bin/$exe"
	[ "$os" = win32 ] || [ -x "$bin" ] || fail "$target: bin/$exe is not executable in the package"
	info=$(go version -m "$bin")
	for want in "GOOS=$goos" "GOARCH=$goarch" "CGO_ENABLED=0" "-trimpath=true"; do
		grep -qF -- "$want" <<<"$info" || fail "$target: go version -m lacks $want:"$'\n'"$info"
	done
	# -trimpath keeps -ldflags out of the build info: the stamp is looked
	# for in the binary (this machine's runs -version below).
	grep -qaF "$version" "$bin" || fail "$target: the version $version is not stamped in"
	node - "$work/unpacked/$target/package/package.json" "$name-$target" "$version" "$os" "$cpu" <<'JS' || fail "$target: package.json"
const [file, name, version, os, cpu] = process.argv.slice(2);
const p = require(file);
const bad = [];
if (p.name !== name) bad.push(`name ${p.name}`);
if (p.version !== version) bad.push(`version ${p.version}`);
if (JSON.stringify(p.os) !== JSON.stringify([os])) bad.push(`os ${p.os}`);
if (JSON.stringify(p.cpu) !== JSON.stringify([cpu])) bad.push(`cpu ${p.cpu}`);
if (p.scripts !== undefined) bad.push("it has scripts");
if (bad.length) { console.error(`${file}: ${bad.join(", ")}`); process.exit(1); }
JS
done
ok "six platform packages and archives"

echo "--- the launcher's package.json and server.json"
mkdir "$work/unpacked/launcher"
tar -xzf "$dist/$name-$version.tgz" -C "$work/unpacked/launcher"
node - "$work/unpacked/launcher/package/package.json" "$dist/server.json" "$version" $targets <<'JS' || fail "launcher package.json or server.json"
const [file, serverFile, version, ...targets] = process.argv.slice(2);
const p = require(file);
const server = require(serverFile);
const bad = [];
if (p.version !== version) bad.push(`version ${p.version}`);
if (!p.bin || p.bin["devtools-mcp"] !== "bin/devtools-mcp.js") bad.push("bin is not devtools-mcp → bin/devtools-mcp.js");
if (!p.engines || p.engines.node !== ">=18") bad.push("engines.node is not >=18");
if (p.scripts !== undefined) bad.push("it has scripts (no install script may run)");
if (p.dependencies !== undefined) bad.push("it has dependencies");
const want = Object.fromEntries(targets.map((t) => [`${p.name}-${t}`, version]));
if (JSON.stringify(p.optionalDependencies) !== JSON.stringify(want)) {
  bad.push(`optionalDependencies ${JSON.stringify(p.optionalDependencies)}, want ${JSON.stringify(want)}`);
}
if (!p.mcpName || p.mcpName !== server.name) bad.push(`mcpName ${p.mcpName} is not server.json's name ${server.name}`);
const npm = server.packages.filter((x) => x.registryType === "npm");
if (server.version !== version || npm.length !== 1 || npm[0].identifier !== p.name || npm[0].version !== version ||
    npm[0].transport.type !== "stdio") {
  bad.push("server.json does not list this npm package and version over stdio");
}
if (bad.length) { console.error(`${file}: ${bad.join("; ")}`); process.exit(1); }
JS
ok "launcher: bin, engines, exact optional dependencies, mcpName; server.json"

echo "--- npm publish --dry-run of every package"
for tgz in "$dist"/*.tgz; do
	# A pre-release must be published under a tag other than latest.
	timeout 120 npm publish --dry-run --tag check "$tgz" >"$work/publish.log" 2>&1 ||
		{ cat "$work/publish.log"; fail "npm publish --dry-run $(basename "$tgz")"; }
done
ok "npm publish --dry-run: $(ls "$dist"/*.tgz | wc -l) packages"

echo "--- install the launcher and $platform_pkg into a fresh project"
[ -f "$dist/$platform_pkg-$version.tgz" ] || fail "no platform package for this machine ($host)"
proj="$work/project"
mkdir "$proj"
echo '{"name":"check-project","version":"1.0.0","private":true}' >"$proj/package.json"
(cd "$proj" && timeout 300 npm install --offline --ignore-scripts "$dist/$name-$version.tgz" "$dist/$platform_pkg-$version.tgz") ||
	fail "npm install of the two tarballs"
[ -x "$proj/node_modules/.bin/devtools-mcp" ] || fail "no node_modules/.bin/devtools-mcp"
binary="$proj/node_modules/$platform_pkg/bin/devtools-mcp"
[ "${host%%-*}" = win32 ] && binary="$binary.exe"
[ -x "$binary" ] || fail "no binary at $binary"
ok "installed"

# The two ways to run the launcher: npx, and the installed link.
# Bounded, so that a hang fails the check instead of stalling CI.
run_npx() { (cd "$proj" && exec timeout 120 npx devtools-mcp "$@"); }
run_bin() { timeout 120 "$proj/node_modules/.bin/devtools-mcp" "$@"; }

# descendants PID: the pids of every process below PID.
descendants() {
	local parent=$1 f line rest pid ppid found
	found=$(for f in /proc/[0-9]*/stat; do
		line=$(cat "$f" 2>/dev/null) || continue
		pid=${line%% *}
		rest=${line##*) }
		ppid=$(cut -d' ' -f2 <<<"$rest")
		echo "$pid $ppid"
	done)
	local queue=("$parent") out=()
	while [ "${#queue[@]}" -gt 0 ]; do
		local p=${queue[0]}
		queue=("${queue[@]:1}")
		for pid in $(awk -v p="$p" '$2 == p {print $1}' <<<"$found"); do
			out+=("$pid")
			queue+=("$pid")
		done
	done
	echo "${out[@]:-}"
}
# alive PID: whether PID is a process that has not exited (a zombie has).
alive() {
	local state
	state=$(sed -E 's/.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null) || return 1
	[ "$state" != Z ]
}

initialize='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"check","version":"1"}}}'
port=19861
for via in npx bin; do
	echo "--- through $via"
	run=run_$via

	out=$($run -version 2>"$work/err") || { cat "$work/err"; fail "$via: -version"; }
	[ "$out" = "devtools-mcp $version" ] || fail "$via: -version printed '$out', want 'devtools-mcp $version'"
	ok "$via: -version prints $version"

	# initialize and tools/list, then stdin ends: exit status 0.
	status=0
	printf '%s\n' "$initialize" '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' |
		WS_PORT=$port REACTOTRON_PORT=0 $run >"$work/out.jsonl" 2>"$work/err" || status=$?
	port=$((port + 1))
	[ "$status" -eq 0 ] || { cat "$work/err"; fail "$via: exit status $status after stdin ended, want 0"; }
	grep -q '^{"jsonrpc":"2.0","id":1,"result":{.*"protocolVersion":"2025-11-25"' "$work/out.jsonl" ||
		{ cat "$work/out.jsonl" "$work/err"; fail "$via: no initialize reply"; }
	grep '^{"jsonrpc":"2.0","id":2,"result":{"tools":\[' "$work/out.jsonl" | grep -q '"name":"debug_health_check"' ||
		{ cat "$work/out.jsonl"; fail "$via: no tools/list reply"; }
	[ "$(wc -l <"$work/out.jsonl")" -eq 2 ] || { cat "$work/out.jsonl"; fail "$via: stdout holds more than the two replies"; }
	grep '"id":1,' "$work/out.jsonl" | grep -qF "\"serverInfo\":{\"name\":\"devtools-mcp\",\"title\":\"App DevTools (Redux, navigation, MMKV)\",\"version\":\"$version\"}" ||
		{ cat "$work/out.jsonl"; fail "$via: initialize does not report version $version"; }
	grep -q "version=$version" "$work/err" || { cat "$work/err"; fail "$via: the start log does not name version $version"; }
	ok "$via: initialize and tools/list over stdio; stdout holds only the replies; exit 0 at EOF"

	# SIGTERM to the launcher ends the binary too.
	rm -f "$work/stdin"
	mkfifo "$work/stdin"
	# Started so that $! is the launcher's own pid (npx's for npx), not a
	# subshell's.
	if [ "$via" = npx ]; then
		(cd "$proj" && WS_PORT=$port REACTOTRON_PORT=0 exec npx devtools-mcp) <"$work/stdin" >"$work/out.jsonl" 2>"$work/err" &
	else
		WS_PORT=$port REACTOTRON_PORT=0 "$proj/node_modules/.bin/devtools-mcp" <"$work/stdin" >"$work/out.jsonl" 2>"$work/err" &
	fi
	launcher=$!
	started_pids="$started_pids $launcher"
	port=$((port + 1))
	exec 4>"$work/stdin"
	printf '%s\n' "$initialize" >&4
	for _ in $(seq 1 300); do
		grep -q '"id":1,"result"' "$work/out.jsonl" && break
		sleep 0.1
	done
	grep -q '"id":1,"result"' "$work/out.jsonl" || { cat "$work/err"; fail "$via: no initialize reply within 30 s"; }
	server=""
	for pid in $(descendants "$launcher"); do
		[ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$(readlink -f "$binary")" ] && server=$pid
	done
	[ -n "$server" ] || fail "$via: no devtools-mcp process below the launcher (pid $launcher)"
	echo "processes: $(for pid in $launcher $(descendants "$launcher"); do printf '%s:%s ' "$pid" "$(tr '\0' ' ' <"/proc/$pid/cmdline" | cut -c1-60)"; done)"
	tree="$launcher $(descendants "$launcher")"
	started_pids="$started_pids $tree"
	kill -TERM "$launcher"
	status=0
	wait "$launcher" || status=$?
	# Checked while the binary's stdin is still open: EOF would end it too.
	if [ "$via" = npx ]; then
		# npm passes SIGTERM to the shell it runs the launcher in, which dies
		# without passing it on; the launcher sees that it was orphaned and
		# stops the binary: allow it a few seconds.
		for _ in $(seq 1 100); do
			left=0
			for pid in $tree; do alive "$pid" && left=1; done
			[ "$left" = 0 ] && break
			sleep 0.1
		done
	fi
	# The launcher itself exits only after the binary has: no waiting here.
	for pid in $tree; do
		if alive "$pid"; then
			fail "$via: pid $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) outlived the launcher, which exited with $status"
		fi
	done
	exec 4>&-
	grep -q 'devtools-mcp stopped' "$work/err" || { cat "$work/err"; fail "$via: the binary did not stop cleanly"; }
	if [ "$via" = bin ]; then
		[ "$status" -eq 0 ] || fail "bin: the launcher exited with $status after SIGTERM, want the binary's 0"
	fi
	ok "$via: SIGTERM to the launcher (exit $status) stopped the binary, pid $server, cleanly"
done

echo "--- DEVTOOLS_MCP_BINARY, arguments, exit codes and signals"
printf '#!/bin/sh\necho "args: $*" >&2\nexit 7\n' >"$work/exit7"
printf '#!/bin/sh\nkill -TERM $$\n' >"$work/killed"
chmod +x "$work/exit7" "$work/killed"
status=0
out=$(DEVTOOLS_MCP_BINARY="$work/exit7" run_bin -a "b c" 2>"$work/err") || status=$?
[ "$status" -eq 7 ] && [ -z "$out" ] && grep -qx 'args: -a b c' "$work/err" ||
	{ cat "$work/err"; fail "DEVTOOLS_MCP_BINARY: status $status, want 7 and the arguments passed"; }
status=0
DEVTOOLS_MCP_BINARY="$work/killed" run_bin 2>/dev/null || status=$?
[ "$status" -eq 143 ] || fail "a binary killed by SIGTERM: launcher status $status, want 143 (it dies of the same signal)"
status=0
DEVTOOLS_MCP_BINARY="$work/no-such-binary" run_bin 2>"$work/err" || status=$?
[ "$status" -ne 0 ] && grep -q 'no-such-binary' "$work/err" || fail "a missing DEVTOOLS_MCP_BINARY: status $status"
ok "DEVTOOLS_MCP_BINARY honoured; arguments, exit code 7 and death by SIGTERM passed on"

echo "--- the launcher without its platform package (npm install --omit=optional)"
bare="$work/bare"
mkdir "$bare"
echo '{"name":"check-bare","version":"1.0.0","private":true}' >"$bare/package.json"
(cd "$bare" && timeout 300 npm install --offline --ignore-scripts --omit=optional "$dist/$name-$version.tgz") ||
	fail "npm install --omit=optional"
[ ! -e "$bare/node_modules/$platform_pkg" ] || fail "--omit=optional installed $platform_pkg anyway"
for via in npx bin; do
	status=0
	if [ "$via" = npx ]; then
		out=$(cd "$bare" && npx devtools-mcp -version 2>"$work/err") || status=$?
	else
		out=$("$bare/node_modules/.bin/devtools-mcp" -version 2>"$work/err") || status=$?
	fi
	[ "$status" -ne 0 ] || fail "$via: exit status 0 without the platform package"
	[ -z "$out" ] || fail "$via: wrote '$out' to stdout without the platform package"
	for want in "$platform_pkg" "\"$(node -p process.platform)\"" "\"$(node -p process.arch)\"" "npm install $platform_pkg@$version" DEVTOOLS_MCP_BINARY; do
		grep -qF -- "$want" "$work/err" || { cat "$work/err"; fail "$via: the message lacks $want"; }
	done
done
# A platform without a package: Node is made to report another cpu.
echo "Object.defineProperty(process, 'arch', {value: 'ppc64'});" >"$work/ppc64.js"
status=0
NODE_OPTIONS="--require $work/ppc64.js" "$proj/node_modules/.bin/devtools-mcp" -version >"$work/out" 2>"$work/err" || status=$?
[ "$status" -ne 0 ] && [ ! -s "$work/out" ] && grep -qF "$name-${host%%-*}-ppc64" "$work/err" && grep -q 'no package for this platform' "$work/err" ||
	{ cat "$work/err"; fail "an unsupported platform: status $status"; }
out=$(cd "$bare" && DEVTOOLS_MCP_BINARY="$binary" npx devtools-mcp -version) || fail "DEVTOOLS_MCP_BINARY without the platform package"
[ "$out" = "devtools-mcp $version" ] || fail "DEVTOOLS_MCP_BINARY without the platform package printed '$out'"
ok "a missing platform package, or a platform without one, is named on stderr (exit 1); DEVTOOLS_MCP_BINARY still works"

echo "ok: npm packaging"
