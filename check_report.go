package main

// check_report.go prints check-adapter's report: a table for people, or
// one JSON document for CI (-json).

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

// checkSummary counts results by kind.
func checkSummary(results []checkResult) (pass, fail, skipped, notRun, advisory int) {
	for _, r := range results {
		switch r.Result {
		case checkPass:
			pass++
		case checkFail:
			if r.Required {
				fail++
			} else {
				advisory++
			}
		case checkSkipped:
			skipped++
		case checkNotRun:
			notRun++
		}
	}
	return
}

// writeCheckTable prints one line per check, and under each failure what
// was sent, what came back and what the section requires.
func writeCheckTable(w io.Writer, adapter *adapterInfo, results []checkResult) error {
	var b strings.Builder
	if adapter != nil {
		fmt.Fprintf(&b, "adapter %s, session %s, capabilities [%s]\n\n", adapter.AdapterVersion, adapter.SessionID, strings.Join(adapter.Capabilities, ", "))
	}
	// Widths by hand: the lines under a failure would cut tabwriter's columns.
	nameW, resultW, sectionW := len("CHECK"), len("RESULT"), len("docs/protocol.md")
	for _, r := range results {
		nameW = max(nameW, utf8.RuneCountInString(r.Name))
		resultW = max(resultW, utf8.RuneCountInString(r.Result))
		sectionW = max(sectionW, utf8.RuneCountInString(r.Section))
	}
	pad := func(s string, width int) string {
		return s + strings.Repeat(" ", width-utf8.RuneCountInString(s))
	}
	row := func(c1, c2, c3, c4 string) {
		fmt.Fprintf(&b, "%s  %s  %s  %s\n", pad(c1, nameW), pad(c2, resultW), pad(c3, sectionW), c4)
	}
	row("CHECK", "RESULT", "docs/protocol.md", "LEVEL")
	for _, r := range results {
		level := "MUST"
		if !r.Required {
			level = "SHOULD"
		}
		row(r.Name, r.Result, r.Section, level)
		switch r.Result {
		case checkFail:
			fmt.Fprintf(&b, "    sent %s, got %s\n    docs/protocol.md requires: %s\n", checkOneLine(r.Sent), checkOneLine(r.Got), r.Requires)
		case checkSkipped, checkNotRun:
			fmt.Fprintf(&b, "    %s\n", r.Note)
		}
	}
	pass, fail, skipped, notRun, advisory := checkSummary(results)
	fmt.Fprintf(&b, "\n%d passed, %d failed, %d skipped, %d not run", pass, fail, skipped, notRun)
	if advisory > 0 {
		fmt.Fprintf(&b, "; %d SHOULD not met", advisory)
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// checkOneLine keeps a report cell on one line of reasonable length.
func checkOneLine(s string) string {
	return clipText(strings.Join(strings.Fields(s), " "), 400)
}

// writeCheckJSON prints the report as one JSON document.
func writeCheckJSON(w io.Writer, adapter *adapterInfo, results []checkResult) error {
	pass, fail, skipped, notRun, advisory := checkSummary(results)
	doc := struct {
		Passed  bool          `json:"passed"`
		Adapter any           `json:"adapter"`
		Counts  any           `json:"counts"`
		Checks  []checkResult `json:"checks"`
	}{
		Passed: fail == 0 && notRun == 0,
		Counts: map[string]int{"pass": pass, "fail": fail, "skipped": skipped, "notRun": notRun, "shouldNotMet": advisory},
		Checks: results,
	}
	if adapter != nil {
		doc.Adapter = map[string]any{"sessionId": adapter.SessionID, "adapterVersion": adapter.AdapterVersion, "capabilities": adapter.Capabilities}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(doc)
}
