package main

import (
	"runtime/debug"
	"strings"
)

// version is the version a release build is stamped with (npm/build.sh):
//
//	go build -ldflags "-X main.version=1.2.3"
//
// Code reads serverVersion, which falls back when nothing was stamped.
var version string

// serverVersion is the server's version, reported to MCP clients and
// adapters and printed by -version. As a package-level variable it is
// resolved before any other that uses it (serverInfoJSON).
var serverVersion = resolveVersion(version, debug.ReadBuildInfo)

// devVersion is the version of a build that says nothing about its own: go
// test, or go build outside version control.
const devVersion = "0.0.0-devel"

// resolveVersion picks the version: the stamped one, else the main module's
// from buildInfo (a tag under go install, a pseudo-version in a Git
// checkout) without Go's leading "v" (so that a tag v1.2.3 and the npm
// release 1.2.3 report the same), else devVersion.
func resolveVersion(stamped string, buildInfo func() (*debug.BuildInfo, bool)) string {
	if v := strings.TrimSpace(stamped); v != "" {
		return v
	}
	if info, ok := buildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return strings.TrimPrefix(info.Main.Version, "v")
	}
	return devVersion
}
