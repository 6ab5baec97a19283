package reports

import (
	"fmt"
	"strings"

	"github.com/fencebench/fencebench/outcome"
)

// failureGroup is the failures that violated the same set of invariants.
type failureGroup struct {
	// Invariants is the set, joined with ", "; Anchor the group's id on the page.
	Invariants string        `json:"invariants"`
	Anchor     string        `json:"anchor"`
	Failures   []failureView `json:"failures"`
}

// failureView is one shrunk failure as the page shows it. The hrefs are relative to the
// exploration's folder, "" when the recorded path was missing or not inside it.
type failureView struct {
	Anchor      string `json:"anchor"`
	Target      string `json:"target"`
	Seed        string `json:"seed"`
	Index       int    `json:"index"`
	Steps       int    `json:"steps"`
	ShrunkSteps int    `json:"shrunk_steps"`
	Writers     int    `json:"writers"`
	Rate        string `json:"rate"`
	ShrinkRuns  int    `json:"shrink_runs"`
	Pinned      bool   `json:"pinned,omitempty"`
	// Replays reads "k/n": replays that violated the target over replays run.
	Replays      string `json:"replays"`
	ReplayClass  string `json:"replay_class"`
	Confirm      badge  `json:"confirm"`
	Scenario     string `json:"scenario"`
	ScenarioHref string `json:"scenario_href,omitempty"`
	Original     string `json:"original,omitempty"`
	OriginalHref string `json:"original_href,omitempty"`
	Cell         string `json:"cell,omitempty"`
	CellHref     string `json:"cell_href,omitempty"`
	ConfirmCell  string `json:"confirm_cell,omitempty"`
	ConfirmHref  string `json:"confirm_href,omitempty"`
	FoundCell    string `json:"found_cell,omitempty"`
	FoundHref    string `json:"found_href,omitempty"`
	Narrative    string `json:"narrative,omitempty"`
	YAML         string `json:"yaml,omitempty"`
	Rerun        string `json:"rerun,omitempty"`
}

// noInvariant names the group of failures that recorded no violated invariant.
const noInvariant = "(no invariant recorded)"

// groupFailures groups the failures by their violated invariants, groups in order of their
// first failure, failures in recorded order.
func groupFailures(x *outcome.Exploration) []failureGroup {
	var groups []failureGroup
	at := map[string]int{}
	for i := range x.Failures {
		f := &x.Failures[i]
		key := joinOr(f.Invariants, noInvariant)
		g, ok := at[key]
		if !ok {
			g = len(groups)
			at[key] = g
			groups = append(groups, failureGroup{Invariants: key, Anchor: fmt.Sprintf("group-%d", g+1)})
		}
		groups[g].Failures = append(groups[g].Failures, toFailureView(f, x.Confirm, i))
	}
	return groups
}

// toFailureView is the i-th failure of an exploration whose confirming stack is confirm.
func toFailureView(f *outcome.ExploredFailure, confirm string, i int) failureView {
	v := failureView{
		Anchor: fmt.Sprintf("failure-%d", i+1), Target: f.Target, Seed: fmtSeed(f.Seed), Index: f.Index,
		Steps: f.Steps, ShrunkSteps: f.ShrunkSteps, Writers: f.Writers, Rate: fmt.Sprintf("%g/s", f.Rate),
		ShrinkRuns: f.ShrinkRuns, Pinned: f.Pinned, Replays: fmt.Sprintf("%d/%d", f.ReplayHits, f.Replays),
		Confirm:  confirmBadge(f.Confirmed, confirm),
		Scenario: f.Scenario, ScenarioHref: localHref(f.Scenario),
		Original: f.Original, OriginalHref: localHref(f.Original),
		Cell: f.Cell, CellHref: localPageHref(f.Cell, "report.html"),
		ConfirmCell: f.ConfirmCell, ConfirmHref: localPageHref(f.ConfirmCell, "report.html"),
		FoundCell: f.FoundCell, FoundHref: localPageHref(f.FoundCell, "report.html"),
		Narrative: redactText(f.Narrative), YAML: redactText(f.YAML), Rerun: redactText(f.Rerun),
	}
	switch {
	case f.Replays > 0 && f.ReplayHits == f.Replays:
		v.ReplayClass = "pass"
	case f.ReplayHits > 0:
		v.ReplayClass = "inconclusive"
	default:
		v.ReplayClass = "fail"
	}
	if f.Replays == 0 {
		v.ReplayClass = "none"
	}
	return v
}

// Confirmation labels of a shrunk failure re-run on the confirming stack.
const (
	confirmReproduced    = "reproduced"
	confirmNotReproduced = "not reproduced"
	confirmNotTried      = "not tried"
)

// confirmBadge is how the page shows a failure's confirmation: reproduced green, not
// reproduced amber, an error red, not tried (or nothing recorded) grey.
func confirmBadge(confirmed, stack string) badge {
	switch {
	case confirmed == confirmReproduced:
		label := confirmReproduced
		if stack != "" {
			label += " on " + stack
		}
		return badge{Label: label, Class: "pass"}
	case confirmed == confirmNotReproduced:
		label := confirmNotReproduced
		if stack != "" {
			label += " on " + stack
		}
		return badge{Label: label, Class: "inconclusive"}
	case strings.HasPrefix(confirmed, "error"):
		why := strings.TrimSpace(strings.TrimPrefix(strings.TrimPrefix(confirmed, "error"), ":"))
		return badge{Label: "error", Class: "fail", Title: redactText(why)}
	case confirmed == "" || confirmed == confirmNotTried:
		return badge{Label: confirmNotTried, Class: "none"}
	default:
		return badge{Label: confirmed, Class: "none"}
	}
}
