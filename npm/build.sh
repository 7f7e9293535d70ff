#!/usr/bin/env bash
# Builds one release of devtools-mcp: the npm packages and the archives.
#
#   npm/build.sh VERSION [OUTDIR]
#
# VERSION is a semantic version without a "v" (1.2.0, 1.3.0-rc.1); it is
# stamped into every binary (-ldflags -X main.version) and written into every
# package.json and server.json, so it is given here and nowhere else.
# OUTDIR (default npm/dist, ignored by Git) receives:
#
#   NAME-VERSION.tgz              the launcher package (npm/package.json)
#   NAME-OS-CPU-VERSION.tgz       one platform package per target below
#   devtools-mcp_VERSION_GOOS_GOARCH.tar.gz (.zip for Windows)
#   SHA256SUMS                    of all of the above
#   server.json                   the MCP Registry entry of this version
#
# NAME is the "name" of npm/package.json, the one place it is written. Needs
# Go, Node.js and npm; fetches nothing (Go modules aside, as for any build).
set -euo pipefail

npm_dir=$(cd "$(dirname "$0")" && pwd)
repo=$(dirname "$npm_dir")

# The README links into docs/, so every archive carries both.
docs=()
for f in "$repo"/docs/*.md; do docs+=("docs/${f##*/}=$f"); done

# npm's platform names (process.platform-process.arch), the packages' os/cpu.
targets="darwin-arm64 darwin-x64 linux-x64 linux-arm64 win32-x64 win32-arm64"

usage() { echo "usage: npm/build.sh VERSION [OUTDIR]   (VERSION like 1.2.0 or 1.3.0-rc.1, no v)" >&2; exit 2; }
[ $# -ge 1 ] && [ $# -le 2 ] || usage
version=$1
semver='^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?(\+[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$'
[[ $version =~ $semver ]] || { echo "build.sh: $version is not a semantic version" >&2; usage; }
out=${2:-$npm_dir/dist}
mkdir -p "$out"
out=$(cd "$out" && pwd)
# OUTDIR is emptied when an earlier run made it, and refused when it holds
# anything else, so that SHA256SUMS covers exactly this build.
marker=.devtools-mcp-build
if [ -n "$(ls -A "$out")" ]; then
	[ -e "$out/$marker" ] || { echo "build.sh: $out is not empty and not an earlier build's output" >&2; exit 1; }
	find "$out" -mindepth 1 -delete
fi
touch "$out/$marker"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

name=$(node -p 'require(process.argv[1]).name' "$npm_dir/package.json")
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	# Archive entries carry the commit's time, so that a rebuild of the same
	# commit gives the same archives.
	SOURCE_DATE_EPOCH=$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)
fi
export SOURCE_DATE_EPOCH

echo "devtools-mcp $version: packages named $name, into $out"

optional=()
for target in $targets; do
	os=${target%-*} cpu=${target#*-}
	goos=$os goarch=$cpu exe=devtools-mcp
	[ "$os" = win32 ] && goos=windows exe=devtools-mcp.exe
	[ "$cpu" = x64 ] && goarch=amd64
	pkg="$name-$target"
	dir="$stage/$pkg"
	mkdir -p "$dir/bin"
	echo "--- $pkg (GOOS=$goos GOARCH=$goarch)"
	(cd "$repo" && CGO_ENABLED=0 GOOS=$goos GOARCH=$goarch \
		go build -trimpath -ldflags "-s -w -X main.version=$version" -o "$dir/bin/$exe" .)
	chmod 0755 "$dir/bin/$exe"
	node - "$npm_dir/package.json" "$dir" "$pkg" "$version" "$os" "$cpu" <<'JS'
const fs = require("fs");
const [launcherJSON, dir, name, version, os, cpu] = process.argv.slice(2);
const launcher = JSON.parse(fs.readFileSync(launcherJSON, "utf8"));
const pkg = {
  name,
  version,
  description: `The ${os}-${cpu} binary of ${launcher.name}; install ${launcher.name}, which runs it`,
  os: [os],
  cpu: [cpu],
  files: ["bin/"],
  preferUnplugged: true,
};
for (const key of ["license", "repository", "homepage", "bugs", "author"]) {
  if (launcher[key] !== undefined) pkg[key] = launcher[key];
}
fs.writeFileSync(`${dir}/package.json`, JSON.stringify(pkg, null, 2) + "\n");
fs.writeFileSync(`${dir}/README.md`,
  `# ${name}\n\nThe ${os}-${cpu} binary of ${launcher.name}, built without cgo.\n` +
  `Install \`${launcher.name}\` (or run \`npx -y ${launcher.name}\`) rather than this package: ` +
  `npm picks the platform package that fits the machine.\n`);
JS
	optional+=("$pkg")
	# The archive for people who download a binary.
	archive="$out/devtools-mcp_${version}_${goos}_${goarch}.tar.gz"
	[ "$goos" = windows ] && archive="${archive%.tar.gz}.zip"
	(cd "$repo" && go run ./npm/archive.go "$archive" "$exe=$dir/bin/$exe" "README.md=$repo/README.md" "${docs[@]}")
done

echo "--- $name (the launcher)"
mkdir -p "$stage/$name/bin"
cp "$npm_dir/bin/devtools-mcp.js" "$stage/$name/bin/"
chmod 0755 "$stage/$name/bin/devtools-mcp.js"
cp "$npm_dir/README.md" "$stage/$name/README.md"
node - "$npm_dir/package.json" "$stage/$name/package.json" "$version" "$repo/server.json" "$out/server.json" "${optional[@]}" <<'JS'
const fs = require("fs");
const [from, to, version, serverFrom, serverTo, ...platforms] = process.argv.slice(2);
const pkg = JSON.parse(fs.readFileSync(from, "utf8"));
pkg.version = version;
// The exact version: a launcher runs only the binary released with it.
pkg.optionalDependencies = Object.fromEntries(platforms.map((p) => [p, version]));
fs.writeFileSync(to, JSON.stringify(pkg, null, 2) + "\n");

const server = JSON.parse(fs.readFileSync(serverFrom, "utf8"));
if (server.name !== pkg.mcpName) {
  console.error(`build.sh: server.json name ${server.name} is not package.json mcpName ${pkg.mcpName}`);
  process.exit(1);
}
const npm = (server.packages || []).filter((p) => p.registryType === "npm");
if (npm.length !== 1 || npm[0].identifier !== pkg.name) {
  console.error(`build.sh: server.json must list the npm package ${pkg.name} once`);
  process.exit(1);
}
server.version = version;
npm[0].version = version;
fs.writeFileSync(serverTo, JSON.stringify(server, null, 2) + "\n");
if (pkg.mcpName.includes("OWNER")) {
  console.error(`build.sh: warning: mcpName ${pkg.mcpName} is still the placeholder; set it in npm/package.json and server.json before publishing`);
}
JS

for pkg in "${optional[@]}" "$name"; do
	(cd "$stage/$pkg" && npm pack --ignore-scripts --pack-destination "$out" >/dev/null)
done

cd "$out"
rm -f "$marker"
files=(*.tgz devtools-mcp_*)
if command -v sha256sum >/dev/null; then
	sha256sum "${files[@]}" >SHA256SUMS
else
	shasum -a 256 "${files[@]}" >SHA256SUMS
fi
touch "$marker"
echo "--- done:"
ls -l "$out"
