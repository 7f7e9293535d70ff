//go:build !unix

package main

// The stand-in adb and xcrun run where a shell script can start them.
const nativeStandinEnv = "DEVTOOLS_MCP_NATIVE_STANDIN"

func runNativeStandin(string, []string) int { return 2 }
