// The native side, in the order a line takes it from a device to a session
// (files native_*.go):
//
//  1. Listing (native_follow.go). The follower's run goroutine lists the
//     devices every poll (adb devices -l, simctl list) and reconciles: one
//     nativeDevice per serial or udid, in follower.devices under follower.mu.
//     A device online gets a follow goroutine; its cancel and done are
//     reconcile's, under follower.mu. The device's own fields (name, apps,
//     pids, running and due ends) are under device.mu.
//  2. Child (native_runner.go). follow runs logcat (-T 1) or `log stream`
//     through the runner's keepStreaming, on a goroutine of follow's: the
//     child is started, and started again after a backoff (backoff.go) when
//     its output ends. Its output goes through a pipe to the runner's
//     reader goroutine, which splits lines (lines.go, cut at 16 KiB).
//  3. Line callback (native_device.go, follow). On that reader goroutine:
//     the line a restarted logcat prints again is skipped, and the line is
//     put into the intake. keepStreaming's ended callback runs on follow's
//     goroutine, once that run's reader has returned, so the two never run
//     at once.
//  4. Intake (nativeLines, native_device.go). One per follow: a queue
//     (ring.go) under its own mutex, at most nativeIntake lines and
//     nativeIntakeBytes bytes; a line beyond them is refused and counted in
//     device.dropped. The reader puts; the consumer takes. Lines left when
//     the follow ends are dropped with it, and counted.
//  5. Consumer (consume, native_device.go). follow's own goroutine takes
//     batches off the intake into the platform's deviceIntake:
//     androidIntake (native_adb.go) parses logcat lines (native_logcat.go)
//     and feeds the logcatAssembler (native_crash.go), which groups
//     multi-line messages and crashes per pid; simIntake
//     (native_simulator.go) parses `log stream` lines (native_simctl.go)
//     into the simAssembler. The assemblers are the consumer's alone.
//  6. Pids (native_adb.go). On Android a lookUpPIDs goroutine asks pidof
//     each poll and sets the apps' pids under device.mu; a new pid wakes
//     the consumer (pidWake), and an app whose last pid went wakes it too
//     (endWake). The assembler asks device.appOf for a line's app; a line of
//     a pid no app owns yet waits in pendingLines (native_pending.go, the
//     assembler's), replayed once its pid is an app's.
//  7. Entries. The assemblers emit entries into device.pending (the
//     consumer's), and deliver hands them, per app, to the sink
//     (session_native.go's deliverNative), which files them under the app's
//     session; ends are told (nativeAppEnded) after the app's last entries.
//     When a follow ends, every app that was running is told it ended.
package main
