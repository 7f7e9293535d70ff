#!/usr/bin/env bash
# Checks devtools-mcp's native side (Android logcat) against real parts: the
# real adb client and server (Debian's adb package, installed here when adb
# is missing) and a device stand-in that speaks adb's transport protocol
# over TCP (.ci/adb/device.js, Node.js with no packages), which the adb
# server reaches with `adb connect 127.0.0.1:PORT` as it would a device over
# Wi-Fi. The stand-in plays testdata/native/adb/ (an app's logs, a Java
# crash, a relaunch, a native crash with its tombstone, other processes'
# lines between them). .ci/adb/check.js's header lists what a pass proves.
#
# Usage: .ci/adb.sh [devtools-mcp binary]   (built when absent)
# Needs Go (without a binary) and Node.js 20 or newer; as root (CI) it
# installs adb with apt-get when it is not on PATH. The adb server it
# starts is its own (a free port, ANDROID_ADB_SERVER_PORT) and is killed at
# the end. ADB_CHECK_FLAGS=--legacy-shell runs devtools-mcp against a
# device without shell_v2 (Android 6 and older), --old-protocol against one
# that speaks adb's protocol 0x01000000 (4 KiB messages, checksums checked:
# Android 8 and older). The stand-in alone is also checked as such an old
# device against adb.
. "$(dirname "$0")/lib/check.sh"

check_title "native logs through the real adb and a device stand-in over TCP"
check_work

if ! command -v adb >/dev/null; then
	if [ "$(id -u)" -ne 0 ]; then echo "FAIL: adb is not installed (apt-get install adb, as root)"; exit 1; fi
	apt_install adb 30
fi
adb version | head -2

check_binary "${1:-}"

# check.js kills its adb server and ends devtools-mcp; if it hangs, it is
# ended at the exit by its pid.
# shellcheck disable=SC2086 # ADB_CHECK_FLAGS is words on purpose
check_run "adb check" "" . timeout 180 node .ci/adb/check.js "$bin" ${ADB_CHECK_FLAGS:-}

echo "--- the stand-in as an old device (no shell_v2, protocol 0x01000000) against adb alone"
timeout 60 node .ci/adb/check.js --parts-only --legacy-shell --old-protocol ||
	{ echo "FAIL: the stand-in as an old device"; exit 1; }
