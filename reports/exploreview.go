package reports

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/fencebench/fencebench/outcome"
)

// exploreView is the data behind explore.html.
type exploreView struct {
	ID           string `json:"id"`
	Started      string `json:"started"`
	Duration     string `json:"duration"`
	Stack        string `json:"stack"`
	Confirm      string `json:"confirm"`
	Variant      string `json:"variant"`
	Client       string `json:"client"`
	Seed         string `json:"seed"`
	Budget       string `json:"budget"`
	Schedules    int    `json:"schedules"`
	Rate         string `json:"rate"`
	Stopped      string `json:"stopped"`
	Passed       int    `json:"passed"`
	Failed       int    `json:"failed"`
	Inconclusive int    `json:"inconclusive"`
	Errors       int    `json:"errors"`
	// FirstFailure is the first failing schedule's index, 0 when none failed; FirstHref its
	// failure's anchor on the page when the failure is listed.
	FirstFailure int          `json:"first_failure"`
	FirstHref    string       `json:"first_href,omitempty"`
	Banner       banner       `json:"banner"`
	Coverage     coverageView `json:"coverage"`
	// Reach says how far the schedules got, by feature ("" when not recorded).
	Reach        string         `json:"reach,omitempty"`
	Groups       []failureGroup `json:"groups"`
	ErrorSamples []string       `json:"error_samples,omitempty"`
}

// coverageView is the table of fault kinds (rows) by protocol phases (columns).
type coverageView struct {
	Phases []string      `json:"phases"`
	Rows   []coverageRow `json:"rows"`
	// Seen is the last row: how many schedules reached each phase.
	Seen []coverageCell `json:"seen"`
	// NeverReached and NeverFaulted name the phases no schedule reached and no fault met.
	NeverReached []string `json:"never_reached"`
	NeverFaulted []string `json:"never_faulted"`
}

// coverageRow is one fault kind's hits per phase, and its total.
type coverageRow struct {
	Fault string         `json:"fault"`
	Cells []coverageCell `json:"cells"`
	Total int            `json:"total"`
}

// coverageCell is one count; Level (0 to 5) is its shade, 0 for an empty cell.
type coverageCell struct {
	N     int `json:"n"`
	Level int `json:"level"`
}

// coverageLevels is the number of shades of a non-empty coverage cell.
const coverageLevels = 5

// buildExploreView turns an exploration into the page's data.
func buildExploreView(x *outcome.Exploration) exploreView {
	v := exploreView{
		ID: x.ID, Started: fmtWall(x.Started), Duration: fmtDur(x.Duration),
		Stack: x.Stack, Confirm: x.Confirm, Variant: x.Variant, Client: x.Client,
		Seed: fmtSeed(x.Seed), Budget: x.Budget, Schedules: x.Schedules, Reach: reachLine(x.Reach),
		Rate: fmt.Sprintf("%.1f schedules/s", x.Rate), Stopped: stoppedText(x),
		Passed: x.Passed, Failed: x.Failed, Inconclusive: x.Inconclusive, Errors: x.Errors,
		FirstFailure: x.FirstFailure,
	}
	for _, e := range x.ErrorSamples {
		v.ErrorSamples = append(v.ErrorSamples, redactText(e))
	}
	v.Banner = exploreBanner(x)
	v.Coverage = buildCoverage(x.Coverage)
	v.Groups = groupFailures(x)
	for _, g := range v.Groups {
		for _, f := range g.Failures {
			if x.FirstFailure > 0 && f.Index == x.FirstFailure && v.FirstHref == "" {
				v.FirstHref = "#" + f.Anchor
			}
		}
	}
	return v
}

// exploreBanner is the page's headline: red when a schedule failed, purple when none failed
// but the harness broke, amber when nothing ran, green otherwise.
func exploreBanner(x *outcome.Exploration) banner {
	of := plural(x.Schedules, "schedule", "schedules")
	switch {
	case x.Failed > 0:
		return banner{Class: "fail", Text: fmt.Sprintf("%s in %s", plural(x.Failed, "failure", "failures"), of)}
	case x.Errors > 0:
		return banner{Class: "error", Text: fmt.Sprintf("no failure in %s, but %s", of,
			plural(x.Errors, "harness error", "harness errors"))}
	case x.Schedules == 0:
		return banner{Class: "inconclusive", Text: "no schedule ran"}
	default:
		return banner{Class: "pass", Text: "no failure in " + of}
	}
}

// buildCoverage lays out the coverage table: the declared faults and phases in their order,
// then any other fault or phase that has a count, sorted.
func buildCoverage(c outcome.Coverage) coverageView {
	faults := withExtra(c.Faults, mapKeys(c.Hits))
	var hitPhases []string
	for _, row := range c.Hits {
		hitPhases = append(hitPhases, mapKeys(row)...)
	}
	phases := withExtra(c.Phases, append(hitPhases, mapKeys(c.PhaseSeen)...))
	peak, seenPeak := 0, 0
	for _, row := range c.Hits {
		for _, n := range row {
			peak = max(peak, n)
		}
	}
	for _, n := range c.PhaseSeen {
		seenPeak = max(seenPeak, n)
	}
	v := coverageView{Phases: phases}
	for _, f := range faults {
		row := coverageRow{Fault: f}
		for _, p := range phases {
			n := c.Hits[f][p]
			row.Total += n
			row.Cells = append(row.Cells, coverageCell{N: n, Level: shade(n, peak)})
		}
		v.Rows = append(v.Rows, row)
	}
	for _, p := range phases {
		n := c.PhaseSeen[p]
		v.Seen = append(v.Seen, coverageCell{N: n, Level: shade(n, seenPeak)})
	}
	full := c
	full.Phases = phases
	v.NeverReached, v.NeverFaulted = full.Unreached()
	return v
}

// shade is the level of n on a logarithmic scale up to peak: 0 for 0, else 1 to
// coverageLevels, peak itself the darkest.
func shade(n, peak int) int {
	if n <= 0 || peak <= 0 {
		return 0
	}
	l := int(math.Ceil(coverageLevels * math.Log1p(float64(n)) / math.Log1p(float64(peak))))
	return min(max(l, 1), coverageLevels)
}

// withExtra is order followed by the names of extra not in it, sorted and without repeats.
func withExtra(order, extra []string) []string {
	out := slices.Clone(order)
	var more []string
	for _, e := range extra {
		if !slices.Contains(out, e) && !slices.Contains(more, e) {
			more = append(more, e)
		}
	}
	slices.Sort(more)
	return append(out, more...)
}

func mapKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// joinOr joins names with ", ", or returns none when there are none.
func joinOr(names []string, none string) string {
	if len(names) == 0 {
		return none
	}
	return strings.Join(names, ", ")
}

// stoppedText says why the exploration ended, and how often a first failure that did not
// replay every time let it go on.
func stoppedText(x *outcome.Exploration) string {
	if x.Resumed == 0 {
		return x.Stopped
	}
	return fmt.Sprintf("%s (went on past %d earlier failure(s) whose shrunk scenario did not replay every time)", x.Stopped, x.Resumed)
}

// reachLine says how far the schedules got, "" when the exploration did not record it.
func reachLine(g *outcome.Reach) string {
	if g == nil {
		return ""
	}
	mode := "random draws"
	if g.Guided {
		mode = fmt.Sprintf("coverage-guided (%d schedules were mutations of kept ones)", g.Mutated)
	}
	s := fmt.Sprintf("%s: %d distinct features reached", mode, g.Features)
	if len(g.ByClass) > 0 {
		var parts []string
		for _, c := range slices.Sorted(maps.Keys(g.ByClass)) {
			parts = append(parts, fmt.Sprintf("%s %d (first at schedule %d)", c, g.ByClass[c], g.FirstOf[c]))
		}
		s += " — " + strings.Join(parts, ", ")
	}
	s += fmt.Sprintf("; %d schedules were first to reach one", g.Kept)
	if len(g.Curve) > 0 {
		parts := make([]string, len(g.Curve))
		for i, n := range g.Curve {
			parts[i] = fmt.Sprint(n)
		}
		s += "; distinct features after each tenth of the schedules: " + strings.Join(parts, ", ")
	}
	return s
}
