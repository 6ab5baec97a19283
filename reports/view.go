package reports

import (
	"fmt"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/checker"
)

// indexView is the data behind a run's index.html.
type indexView struct {
	RunID        string     `json:"run_id"`
	Started      string     `json:"started"`
	Duration     string     `json:"duration"`
	BenchVersion string     `json:"bench_version"`
	Command      string     `json:"command"`
	Store        store.Info `json:"store"`
	// Preflight is the store panel's account of the run's pre-flight; nil for a run stored
	// without one.
	Preflight *preflightView `json:"preflight,omitempty"`
	Banner    banner         `json:"banner"`
	Totals    totals         `json:"totals"`
	// Variants are the kill-matrix columns: every broken variant some scenario must kill.
	Variants []string      `json:"variants"`
	Rows     []scenarioRow `json:"rows"`
	Cells    []cellRow     `json:"cells"`
}

// banner is the headline of a page: green when everything passed, amber when something was
// inconclusive, red when anything failed or errored.
type banner struct {
	Class string  `json:"class"`
	Text  string  `json:"text"`
	Items []badge `json:"items,omitempty"`
}

// totals counts cells by verdict, and kill cells by outcome.
type totals struct {
	Cells        int `json:"cells"`
	Pass         int `json:"pass"`
	Fail         int `json:"fail"`
	Inconclusive int `json:"inconclusive"`
	Error        int `json:"error"`
	Kills        int `json:"kills"`
	Killed       int `json:"killed"`
	Survived     int `json:"survived"`
	Acked        int `json:"acked"`
	Events       int `json:"events"`
}

// scenarioRow is one scenario of the matrix: its own verdict and a cell per variant column.
type scenarioRow struct {
	Scenario    string   `json:"scenario"`
	Description string   `json:"description,omitempty"`
	Seeds       string   `json:"seeds"`
	Clients     string   `json:"clients,omitempty"`
	Main        []badge  `json:"main"`
	Matrix      []*badge `json:"matrix"`
}

// cellRow is one line of the index's table of all cells.
type cellRow struct {
	ID       string `json:"id"`
	Href     string `json:"href"`
	Scenario string `json:"scenario"`
	Variant  string `json:"variant"`
	Kill     bool   `json:"kill,omitempty"`
	Violates string `json:"violates,omitempty"`
	Client   string `json:"client,omitempty"`
	Seed     string `json:"seed"`
	Verdict  badge  `json:"verdict"`
	Acked    int    `json:"acked"`
	Events   int    `json:"events"`
	Duration string `json:"duration"`
	Reason   string `json:"reason,omitempty"`
}

// buildView computes the index data of a run.
func buildView(run *outcome.Summary) indexView {
	v := indexView{
		RunID:        run.RunID,
		Started:      fmtWall(run.Started),
		Duration:     fmtDur(run.Duration),
		BenchVersion: run.Version,
		Command:      run.Command,
		Store:        storeOf(run),
	}
	v.Variants = killVariants(run.Cells)
	col := map[string]int{}
	for i, k := range v.Variants {
		col[k] = i
	}
	rowOf := map[string]int{}
	seeds := map[string][]string{}
	clients := map[string][]string{}
	var bad []badge
	var inconclusive []badge
	for i := range run.Cells {
		c := run.Cells[i]
		b := cellBadge(c)
		b.Href = cellHref(c.ID)
		verdict := verdictOf(c.Verdict)
		v.Totals.add(c, verdict)
		named := b
		named.Label = c.ID + ": " + b.Label
		if failed(verdict) {
			bad = append(bad, named)
		} else if verdict == checker.Inconclusive {
			inconclusive = append(inconclusive, named)
		}

		r, ok := rowOf[c.Scenario]
		if !ok {
			r = len(v.Rows)
			rowOf[c.Scenario] = r
			v.Rows = append(v.Rows, scenarioRow{
				Scenario:    c.Scenario,
				Description: c.Description,
				Matrix:      make([]*badge, len(v.Variants)),
			})
		}
		row := &v.Rows[r]
		if s := fmtSeed(c.Seed); !slices.Contains(seeds[c.Scenario], s) {
			seeds[c.Scenario] = append(seeds[c.Scenario], s)
		}
		if c.Client != "" && !slices.Contains(clients[c.Scenario], c.Client) {
			clients[c.Scenario] = append(clients[c.Scenario], c.Client)
		}
		if c.Kill {
			mb := b
			row.Matrix[col[c.Variant]] = &mb
		} else {
			mb := b
			if c.Variant != "" && c.Variant != history.CorrectVariant {
				mb.Label = c.Variant + ": " + mb.Label
			}
			row.Main = append(row.Main, mb)
		}

		v.Cells = append(v.Cells, toCellRow(c, b))
	}
	for i := range v.Rows {
		v.Rows[i].Seeds = strings.Join(seeds[v.Rows[i].Scenario], ", ")
		v.Rows[i].Clients = strings.Join(clients[v.Rows[i].Scenario], ", ")
	}
	v.Banner = runBanner(v.Totals, bad, inconclusive)
	v.Preflight = preflightOf(run.Preflight)
	if u := run.Preflight.Unsafe(); u != nil {
		v.Banner.Text = "STORE UNSAFE: the store failed the pre-flight's " + u.Probe +
			" and every cell that needs a safe store was refused. " + v.Banner.Text
	}
	return v
}

func runBanner(t totals, bad, inconclusive []badge) banner {
	switch {
	case t.Cells == 0:
		return banner{Class: "inconclusive", Text: "This run has no cells."}
	case len(bad) > 0:
		var parts []string
		if t.Fail > 0 {
			parts = append(parts, fmt.Sprintf("%d failed", t.Fail))
		}
		if t.Error > 0 {
			parts = append(parts, plural(t.Error, "harness error", "harness errors"))
		}
		if t.Inconclusive > 0 {
			parts = append(parts, fmt.Sprintf("%d inconclusive", t.Inconclusive))
		}
		cls := "fail"
		if t.Fail == 0 {
			cls = "error"
		}
		return banner{Class: cls, Text: fmt.Sprintf("FAILED: %s (of %s).", strings.Join(parts, ", "), plural(t.Cells, "cell", "cells")),
			Items: append(bad, inconclusive...)}
	case len(inconclusive) > 0:
		return banner{Class: "inconclusive", Text: fmt.Sprintf("INCONCLUSIVE: %s of %d proved nothing; the rest passed.",
			plural(len(inconclusive), "cell", "cells"), t.Cells), Items: inconclusive}
	default:
		text := fmt.Sprintf("PASSED: all %d cells passed", t.Cells)
		if t.Kills > 0 {
			text += fmt.Sprintf(", every one of %s killed", plural(t.Kills, "broken variant", "broken variants"))
		}
		return banner{Class: "pass", Text: text + "."}
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

// fmtWall renders a wall-clock instant in UTC.
func fmtWall(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// killVariants lists the broken variants of the kill matrix, sorted.
func killVariants(cells []*outcome.CellResult) []string {
	variantSet := map[string]bool{}
	for i := range cells {
		if cells[i].Kill {
			variantSet[cells[i].Variant] = true
		}
	}
	var out []string
	for k := range variantSet {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// toCellRow is a cell's line in the table of all cells; its reason is the first of the
// verdict's reasons, or the harness error.
func toCellRow(c *outcome.CellResult, b badge) cellRow {
	reason := c.Error
	if len(c.Result.Reasons) > 0 {
		reason = c.Result.Reasons[0]
		if n := len(c.Result.Reasons) - 1; n > 0 {
			reason += fmt.Sprintf(" (+%d more)", n)
		}
	}
	return cellRow{
		ID:       c.ID,
		Href:     b.Href,
		Scenario: c.Scenario,
		Variant:  c.Variant,
		Kill:     c.Kill,
		Violates: strings.Join(c.Violates, ", "),
		Client:   c.Client,
		Seed:     fmtSeed(c.Seed),
		Verdict:  b,
		Acked:    c.Result.Acked,
		Events:   len(c.Events),
		Duration: fmtDur(c.Duration),
		Reason:   reason,
	}
}

// add counts cell c, whose verdict is verdict.
func (t *totals) add(c *outcome.CellResult, verdict checker.Verdict) {
	t.Cells++
	t.Acked += c.Result.Acked
	t.Events += len(c.Events)
	switch verdict {
	case checker.Pass:
		t.Pass++
	case checker.Fail:
		t.Fail++
	case checker.Inconclusive:
		t.Inconclusive++
	default:
		t.Error++
	}
	if c.Kill && c.StoreUnsafe == nil {
		t.Kills++
		switch verdict {
		case checker.Pass:
			t.Killed++
		case checker.Fail:
			t.Survived++
		}
	}
}
