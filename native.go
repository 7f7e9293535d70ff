// The native side (native_*.go), in the order a line takes it, with who
// owns what and on which goroutine:
//
//  1. The follower's run goroutine lists devices each poll and reconciles
//     (native_follow.go): one nativeDevice per serial or udid in devices,
//     under follower.mu, as are each device's cancel and done. A device's
//     own fields (name, apps, pids, running and due ends) are under its mu.
//  2. A device online gets a follow goroutine (native_device.go), which runs
//     logcat -T 1 or `log stream` through the runner's keepStreaming
//     (native_runner.go) on a goroutine of its own, started again after a
//     backoff (wait.go) when it ends. The runner's reader goroutine splits
//     the child's output into lines (lines.go, cut at 16 KiB) and calls the
//     line callback; the ended callback runs on keepStreaming's goroutine
//     once that run's reader has returned, so the two never run at once.
//  3. The line callback skips the line a restarted logcat repeats and puts
//     the line into the follow's intake (nativeLines: a queue, ring.go,
//     under its own lock, bounded in lines and bytes; a line refused is
//     counted in device.dropped, as are lines left when the follow ends).
//  4. The consumer, on the follow goroutine itself (consume), takes batches
//     into the platform's deviceIntake: androidIntake parses logcat
//     (native_logcat.go) into the logcatAssembler (native_crash.go), which
//     groups messages and crashes per pid and keeps the lines of pids no app
//     owns yet in pendingLines (native_pending.go); simIntake parses `log
//     stream` (native_simctl.go) into the simAssembler. Both are the
//     consumer's alone.
//  5. On Android a lookUpPIDs goroutine (native_adb.go) sets the apps' pids
//     under device.mu each poll; a new pid (pidWake) or an app's last pid
//     gone (endWake) wakes the consumer.
//  6. The assemblers emit entries into device.pending (the consumer's);
//     deliver hands them per app to the sink (session_native.go), which
//     files them under the app's session; an end is told after the app's
//     last entries, and every running app's when the follow ends.
package main
