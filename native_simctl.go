package main

// native_simctl.go reads `xcrun simctl spawn UDID log stream --style
// ndjson` lines (one JSON object each), `xcrun simctl list devices booted
// -j` and `xcrun simctl spawn UDID launchctl list`. A line that is not a
// JSON object (the "Filtering the log data using …" line that comes first)
// is reported as such and skipped.

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// simLogLine is one simulator log event, the fields the server reads.
type simLogLine struct {
	Timestamp   string `json:"timestamp"`   // "2026-11-27 05:30:01.123456+0000"
	MessageType string `json:"messageType"` // Default, Info, Debug, Error, Fault
	EventType   string `json:"eventType"`   // logEvent, activityCreateEvent, …
	Message     string `json:"eventMessage"`
	PID         int64  `json:"processID"`
	TID         int64  `json:"threadID"`
	ImagePath   string `json:"processImagePath"`
	Subsystem   string `json:"subsystem"`
}

var errSimLogLine = errors.New("not a simulator log event")

// parseSimLogLine reads one ndjson line. Every text field comes back valid
// UTF-8 without control characters other than newline and tab (a message
// may span lines).
func parseSimLogLine(line []byte) (simLogLine, error) {
	var l simLogLine
	if rawKind(line) != "object" {
		return l, fmt.Errorf("%w: not a JSON object", errSimLogLine)
	}
	if err := json.Unmarshal(line, &l); err != nil {
		return simLogLine{}, fmt.Errorf("%w: %v", errSimLogLine, err)
	}
	if l.EventType != "" && l.EventType != "logEvent" {
		return simLogLine{}, fmt.Errorf("%w: event type %q", errSimLogLine, l.EventType)
	}
	if l.PID < 0 || l.TID < 0 {
		return simLogLine{}, fmt.Errorf("%w: negative process or thread id", errSimLogLine)
	}
	l.Timestamp, l.MessageType, l.EventType = cleanLogText(l.Timestamp), cleanLogText(l.MessageType), cleanLogText(l.EventType)
	l.ImagePath, l.Subsystem = cleanLogText(l.ImagePath), cleanLogText(l.Subsystem)
	lines := strings.Split(l.Message, "\n")
	for i := range lines {
		lines[i] = cleanLogText(lines[i])
	}
	l.Message = strings.Join(lines, "\n")
	return l, nil
}

// simTime reads the event's timestamp; now when it has none.
func simTime(stamp string, now time.Time) time.Time {
	for _, layout := range []string{"2006-01-02 15:04:05.000000-0700", "2006-01-02 15:04:05.000-0700", "2006-01-02 15:04:05-0700"} {
		if t, err := time.Parse(layout, stamp); err == nil {
			return t
		}
	}
	return now
}

// simLevel is a messageType as a console level.
func simLevel(messageType string) string {
	switch messageType {
	case "Debug":
		return "debug"
	case "Error", "Fault":
		return "error"
	}
	return "info"
}

// simAppBundleName is the app bundle's name in the image path
// (…/Shop.app/Shop → Shop), "" when the path is not inside a .app.
func simAppBundleName(imagePath string) string {
	for dir := path.Dir(imagePath); dir != "/" && dir != "."; dir = path.Dir(dir) {
		if base := path.Base(dir); strings.HasSuffix(base, ".app") {
			return strings.TrimSuffix(base, ".app")
		}
	}
	return ""
}

const maxSimulators = 16

// parseSimctlDevices reads `simctl list devices booted -j`: the devices to follow.
func parseSimctlDevices(out []byte) ([]nativeDeviceStatus, error) {
	var list struct {
		Devices map[string][]struct {
			UDID  string `json:"udid"`
			Name  string `json:"name"`
			State string `json:"state"`
		} `json:"devices"`
	}
	if err := json.Unmarshal(out, &list); err != nil {
		return nil, fmt.Errorf("simctl list devices: %w", err)
	}
	var booted []nativeDeviceStatus
	// Runtimes in order, so that the same list always reads the same (and
	// past maxSimulators the same ones are followed).
	for _, runtime := range slices.Sorted(maps.Keys(list.Devices)) {
		for _, d := range list.Devices[runtime] {
			if d.State == "Booted" && validDeviceSerial(d.UDID) && len(booted) < maxSimulators {
				booted = append(booted, nativeDeviceStatus{Platform: nativeIOS, ID: d.UDID, Name: cleanLogText(d.Name), State: "device"})
			}
		}
	}
	return booted, nil
}

// simAppLabel starts the launchd label of an app a simulator runs:
// UIKitApplication:<bundle id>[<hex>][rb-legacy].
const simAppLabel = "UIKitApplication:"

// parseLaunchctlList reads `launchctl list` run in a simulator (a header,
// then `PID<TAB>STATUS<TAB>LABEL` lines, PID "-" for a job that runs no
// process): by bundle id, the pids of the apps among apps that run one.
func parseLaunchctlList(out string, apps []string) map[string][]int {
	running := map[string][]int{}
	for line := range strings.SplitSeq(out, "\n") {
		fields := strings.Fields(line)
		if len(fields) != 3 {
			continue
		}
		label, ok := strings.CutPrefix(fields[2], simAppLabel)
		id, _, _ := strings.Cut(label, "[")
		pid, err := strconv.Atoi(fields[0])
		if !ok || err != nil || pid <= 0 || !slices.Contains(apps, id) || slices.Contains(running[id], pid) || len(running[id]) == maxAppPIDs {
			continue
		}
		running[id] = append(running[id], pid)
	}
	return running
}
