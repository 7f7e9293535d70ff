//go:build unix

package main

// native_faults_standin_test.go is the stand-in adb's faults (issue 35):
// adb's own failures, which a test sets up with files in the stand-in's
// DIR (native_standin_test.go), played before its usual answer:
//
//	devices-fail        `adb devices -l` writes the file on stderr, exit 1
//	pidof-fail-SERIAL   `pidof` on SERIAL writes the file on stderr, exit 1
//	logcat-fail-SERIAL  `logcat` on SERIAL writes the file on stderr, exit 1
//	daemon-start        the next adb command (the file is removed) first
//	                    writes adb's lines for an adb server it started
//	logtags             each command appends the ANDROID_LOG_TAGS it got
//	                    ("unset" when it had none)

import (
	"os"
	"path/filepath"
)

// standinFault plays the fault set up for the command, if any; ok is
// false when the stand-in's usual answer follows.
func standinFault(tool, dir string, args []string) (code int, ok bool) {
	if tags, set := os.LookupEnv(nativeLogTagsEnv); set {
		appendFile(filepath.Join(dir, "logtags"), tags+"\n")
	} else {
		appendFile(filepath.Join(dir, "logtags"), "unset\n")
	}
	if tool != "adb" {
		return 0, false
	}
	if os.Remove(filepath.Join(dir, "daemon-start")) == nil {
		os.Stderr.WriteString("* daemon not running; starting now at tcp:5037\n* daemon started successfully\n")
	}
	var fault string
	switch {
	case len(args) == 2 && args[0] == "devices":
		fault = "devices-fail"
	case len(args) > 3 && args[0] == "-s" && args[2] == "shell" && args[3] == "pidof":
		fault = "pidof-fail-" + args[1]
	case len(args) > 2 && args[0] == "-s" && args[2] == "logcat":
		fault = "logcat-fail-" + args[1]
	default:
		return 0, false
	}
	said, err := os.ReadFile(filepath.Join(dir, fault))
	if err != nil {
		return 0, false
	}
	os.Stderr.Write(said)
	return 1, true
}
