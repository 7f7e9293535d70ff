//go:build unix

package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// standinLaunchctl is the stand-in's `simctl spawn UDID launchctl list`:
// the file launchctl-UDID as is; absent, it fails as simctl does on a
// simulator it cannot reach (exit 1, a reason on stderr).
func standinLaunchctl(dir, udid string) int {
	data, err := os.ReadFile(filepath.Join(dir, "launchctl-"+udid))
	if err != nil {
		os.Stderr.WriteString("An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405)\n")
		return 1
	}
	os.Stdout.Write(data)
	return 0
}

// launchctlListing is `launchctl list` in a simulator whose shop app runs
// pid ("-" for none, with its last exit status), among system jobs and
// another app.
func launchctlListing(pid, status string) string {
	return "PID\tStatus\tLabel\n" +
		"-\t0\tcom.apple.assertiond\n" +
		"812\t0\tcom.apple.backboardd\n" +
		pid + "\t" + status + "\tUIKitApplication:com.example.shop[4f2a][rb-legacy]\n" +
		"-\t0\tUIKitApplication:com.apple.Preferences[91c3][rb-legacy]\n"
}

// simEvent is one ndjson event of the shop's executable under pid.
func simEvent(pid int, messageType, message string) string {
	data, _ := json.Marshal(map[string]any{"eventMessage": message, "eventType": "logEvent", "processID": pid, "threadID": 1,
		"processImagePath": "/x/Containers/Bundle/Application/U/Shop.app/Shop", "messageType": messageType,
		"timestamp": "2026-11-27 05:30:02.000000+0000"})
	return string(data) + "\n"
}

// notingServer calls tools as toolCall does, keeping the notifications
// that arrive meanwhile (a session's end and its reason among them).
type notingServer struct {
	ts    *testServer
	id    int
	notes []string
}

func (n *notingServer) tool(t *testing.T, name string, args map[string]any) map[string]any {
	t.Helper()
	n.id++
	data, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": n.id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	n.ts.send(string(data))
	for {
		line := n.ts.next()
		var msg map[string]any
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("stdout line is not JSON: %q", line)
		}
		if msg["id"] != float64(n.id) {
			n.notes = append(n.notes, line)
			continue
		}
		result, _ := msg["result"].(map[string]any)
		sc, _ := result["structuredContent"].(map[string]any)
		return sc
	}
}

// pollLogs is pollLogs through n.tool: a session's end told while it
// polls is kept for ends.
func (n *notingServer) pollLogs(t *testing.T, args map[string]any, done func([]map[string]any) bool) []map[string]any {
	t.Helper()
	return pollLogsBy(t, n.ts, args, done, func() map[string]any { return n.tool(t, "debug_get_logs", args) })
}

// ends counts the notifications that session ended with reason.
func (n *notingServer) ends(session, reason string) int {
	count := 0
	for _, l := range n.notes {
		if strings.Contains(l, `"sessionId":"`+session+`"`) && strings.Contains(l, `"reason":"`+reason+`"`) {
			count++
		}
	}
	return count
}

// waitSession polls the health check until session's connected is live
// and, when ends > 0, it has ended with app_ended that many times.
func (n *notingServer) waitSession(t *testing.T, session string, live bool, ends int, why string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		sc := n.tool(t, "debug_health_check", map[string]any{})
		var h struct {
			Sessions []struct {
				ID        string `json:"id"`
				Connected bool   `json:"connected"`
			} `json:"sessions"`
		}
		raw, _ := json.Marshal(sc)
		_ = json.Unmarshal(raw, &h)
		for _, s := range h.Sessions {
			if s.ID == session && s.Connected == live && n.ends(session, "app_ended") == ends {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: want %s live=%t after %d app_ended ends; sessions %s, notifications %v", why, session, live, ends, raw, n.notes)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestNativeSimulatorAppExits: on a simulator that stays booted, the app's
// processes are tracked as on Android: the app exiting ends its native
// session (app_ended), a relaunch makes it live again, and a crash is
// filed before the end it causes. Only listed commands run.
func TestNativeSimulatorAppExits(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t)
	udid := "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C"
	session := "native:com.example.shop@" + udid
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	writeStandin(t, dir, "simctl-list", `{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"udid":"`+udid+`","state":"Booted","name":"iPhone 16"}]}}`)
	writeStandin(t, dir, "launchctl-"+udid, launchctlListing("4300", "0"))
	writeStandin(t, dir, "simlog-"+udid, simSeeds[1]+"\n")
	ts.initialize()
	ts.call(1, "logging/setLevel", map[string]any{"level": "info"}) // a session's end is told at warning
	n := &notingServer{ts: ts, id: 1}
	n.waitSession(t, session, true, 0, "the app's first line")
	pollHealth(t, ts, &n.id, func(h map[string]any) bool { return strings.Contains(jsonText(h), `"processes":[4300]`) })

	// The app exits; the simulator stays booted.
	writeStandin(t, dir, "launchctl-"+udid, launchctlListing("-", "0"))
	n.waitSession(t, session, false, 1, "the app exited")

	// A relaunch: launchctl names its process, and its lines are the
	// session's again, live.
	writeStandin(t, dir, "launchctl-"+udid, launchctlListing("4400", "0"))
	pollHealth(t, ts, &n.id, func(h map[string]any) bool { return strings.Contains(jsonText(h), `"processes":[4400]`) })
	appendStandin(t, dir, "simlog-"+udid, simEvent(4400, "Default", "relaunched"))
	n.waitSession(t, session, true, 1, "the app relaunched")

	// A crash: its entry, then the end.
	appendStandin(t, dir, "simlog-"+udid, simEvent(4400, "Error", "*** Terminating app due to uncaught exception 'NSRangeException', reason: 'index 3 beyond bounds'\n*** First throw call stack:\n(0x1 0x2)")+
		simEvent(4400, "Error", "libc++abi: terminating due to uncaught exception of type NSException"))
	pollLogs(t, ts, &n.id, map[string]any{"session": session, "level": "error"}, func(e []map[string]any) bool { return entryWith(e, "NSRangeException") != nil })
	writeStandin(t, dir, "launchctl-"+udid, launchctlListing("-", "-6"))
	n.waitSession(t, session, false, 2, "the app crashed")
	entries := pollLogs(t, ts, &n.id, map[string]any{"session": session}, func([]map[string]any) bool { return true })
	last := entries[len(entries)-1]
	if last["crash"] != "objc" || last["pid"] != float64(4400) || !strings.Contains(last["message"].(string), "of type NSException") {
		t.Errorf("the session's last entry is not the crash: %v", last)
	}
	if got := len(entries); got != 3 {
		t.Errorf("the session holds %d entries, want the first run's line, the relaunch's and the crash: %v", got, entries)
	}
	health := pollHealth(t, ts, &n.id, func(map[string]any) bool { return true })
	if d := jsonText(health["devices"]); !strings.Contains(d, `"following":true`) || !strings.Contains(d, `"processes":[]`) {
		t.Errorf("the simulator should be followed still, the app running no process: %s", d)
	}

	ts.stdin.Close()
	<-ts.done
	ts.done <- nil
	waitNoStandin(t, dir)
	commands := standinCommands(t, dir)
	checkListedCommands(t, commands)
	if !strings.Contains(strings.Join(commands, "\n"), "xcrun simctl spawn "+udid+" launchctl list") {
		t.Errorf("launchctl list never ran: %v", commands)
	}
}

// TestNativeSimulatorListingFails: a launchctl listing that fails says
// nothing of the apps: the session of an app seen running stays live, and
// the health check says why (cannotAsk) until a listing succeeds.
func TestNativeSimulatorListingFails(t *testing.T) {
	t.Parallel()
	ts, dir := nativeServer(t)
	udid := "6F1B1C5E-2A6B-4A6E-9C1D-1D2E3F4A5B6C"
	session := "native:com.example.shop@" + udid
	writeStandin(t, dir, "devices", "List of devices attached\n\n")
	writeStandin(t, dir, "simctl-list", `{"devices":{"com.apple.CoreSimulator.SimRuntime.iOS-18-0":[{"udid":"`+udid+`","state":"Booted","name":"iPhone 16"}]}}`)
	writeStandin(t, dir, "launchctl-"+udid, launchctlListing("4300", "0"))
	writeStandin(t, dir, "simlog-"+udid, simSeeds[1]+"\n")
	ts.initialize()
	ts.call(1, "logging/setLevel", map[string]any{"level": "info"})
	n := &notingServer{ts: ts, id: 1}
	pollHealth(t, ts, &n.id, func(h map[string]any) bool { return strings.Contains(jsonText(h), `"processes":[4300]`) })
	n.waitSession(t, session, true, 0, "the app's first line")
	if err := os.Remove(filepath.Join(dir, "launchctl-"+udid)); err != nil {
		t.Fatal(err)
	}
	// Two more listings started: the first, failed, has been read.
	launchctls := func() int { return strings.Count(strings.Join(standinCommands(t, dir), "\n"), "launchctl list") }
	deadline := time.Now().Add(30 * time.Second)
	for before := launchctls(); launchctls() < before+2; {
		if time.Now().After(deadline) {
			t.Fatal("launchctl was not run again")
		}
		time.Sleep(5 * time.Millisecond)
	}
	n.waitSession(t, session, true, 0, "the listing failed")
	h := pollHealth(t, ts, &n.id, func(h map[string]any) bool { return strings.Contains(jsonText(h), `"cannotAsk"`) })
	if got := jsonText(h["devices"]); !strings.Contains(got, `"cannotAsk":"simctl cannot list the simulator's running apps; their state is kept: `+
		`An error was encountered processing the command (domain=com.apple.CoreSimulator.SimError, code=405)"`) {
		t.Errorf("the health check does not say why the listing failed: %s", got)
	}
	writeStandin(t, dir, "launchctl-"+udid, launchctlListing("4300", "0"))
	pollHealth(t, ts, &n.id, func(h map[string]any) bool { return !strings.Contains(jsonText(h), `"cannotAsk"`) })
	if strings.Contains(jsonText(pollHealth(t, ts, &n.id, func(map[string]any) bool { return true })), `"processes":[]`) {
		t.Error("a failed listing emptied the app's processes")
	}
}
