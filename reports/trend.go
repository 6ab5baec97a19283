package reports

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"slices"
)

// maxTrendChanges caps the list of verdict changes at the top of the trend page.
const maxTrendChanges = 100

// trendView is the data behind results/index.html.
type trendView struct {
	Runs    []trendRun    `json:"runs"`
	Rows    []trendRow    `json:"rows"`
	Changes []trendChange `json:"changes,omitempty"`
	Notes   []string      `json:"notes,omitempty"`
	// Flaky names the flaky cells, in row order.
	Flaky []string `json:"flaky,omitempty"`
	// Certs are the store certifications in the results folder, newest first.
	Certs []trendCert `json:"certifications,omitempty"`
}

type trendRun struct {
	ID           string `json:"id"`
	Href         string `json:"href"`
	Started      string `json:"started"`
	Verdict      badge  `json:"verdict"`
	BenchVersion string `json:"bench_version,omitempty"`
	Store        string `json:"store,omitempty"`
	Totals       string `json:"totals"`
}

type trendRow struct {
	Cell     string        `json:"cell"`
	Scenario string        `json:"scenario"`
	Kill     bool          `json:"kill,omitempty"`
	Cells    []*trendEntry `json:"cells"`
	// Flips counts the runs whose verdict differs from the cell's previous one; Flaky marks a
	// cell that changed at least flakyFlips times, Failing one that does not pass in its
	// newest run and is not flaky (a failure that stays).
	Flips   int  `json:"flips"`
	Flaky   bool `json:"flaky,omitempty"`
	Failing bool `json:"failing,omitempty"`
	// FirstSurvived is the oldest run in which a kill cell's variant survived.
	FirstSurvived string `json:"first_survived,omitempty"`
}

type trendEntry struct {
	badge
	Changed bool `json:"changed,omitempty"`
}

type trendChange struct {
	Cell string `json:"cell"`
	Run  string `json:"run"`
	Prev string `json:"prev"`
	From badge  `json:"from"`
	To   badge  `json:"to"`
}

// WriteTrend writes resultsDir/index.html and its data, resultsDir/trend.json: the verdict of every cell in every run found in
// resultsDir (each subfolder holding a summary.json), newest run first, with every verdict
// that differs from the same cell's verdict in the previous run that had it highlighted, cells
// that keep changing marked flaky apart from failures that stay, and for each kill cell the
// run in which its variant first survived. A
// summary that cannot be read is listed on the page rather than failing the whole page.
func WriteTrend(resultsDir string) error {
	entries, err := os.ReadDir(resultsDir)
	if err != nil {
		return fmt.Errorf("reports: trend: %w", err)
	}
	var sums []Summary
	var notes []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(resultsDir, e.Name(), "summary.json")
		s, err := ReadSummary(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			notes = append(notes, fmt.Sprintf("skipped %s: %v", e.Name(), err))
			continue
		}
		// Links follow the folder name, which is what the browser sees.
		s.ID = e.Name()
		sums = append(sums, s)
	}
	v := buildTrend(sums)
	v.Notes = append(v.Notes, notes...)
	certs, cnotes := readCerts(resultsDir, entries)
	v.Certs, v.Notes = certs, append(v.Notes, cnotes...)
	var buf bytes.Buffer
	if err := pages.ExecuteTemplate(&buf, "trend.html.tmpl", v); err != nil {
		return fmt.Errorf("reports: trend: %w", err)
	}
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: trend: %w", err)
	}
	if err := writeFile(filepath.Join(resultsDir, "trend.json"), append(data, '\n')); err != nil {
		return err
	}
	return writeFile(filepath.Join(resultsDir, "index.html"), buf.Bytes())
}

// buildTrend computes the trend data from run summaries (in any order).
func buildTrend(sums []Summary) trendView {
	sums = slices.Clone(sums)
	slices.SortStableFunc(sums, func(a, b Summary) int {
		return cmp.Or(b.Started.Compare(a.Started), cmp.Compare(b.ID, a.ID))
	})
	var v trendView
	rowOf := map[string]int{}
	for ri, s := range sums {
		store := s.Store.Server
		if s.Store.Stack != "" {
			store = fmt.Sprintf("%s (%s)", store, s.Store.Stack)
		}
		v.Runs = append(v.Runs, trendRun{
			ID:           s.ID,
			Href:         url.PathEscape(s.ID) + "/index.html",
			Started:      fmtWall(s.Started),
			Verdict:      badge{Label: string(verdictOf(s.Verdict)), Class: string(verdictOf(s.Verdict))},
			BenchVersion: s.BenchVersion,
			Store:        store,
			Totals: fmt.Sprintf("%d cells: %d pass, %d fail, %d inconclusive, %d error", s.Totals.Cells, s.Totals.Pass,
				s.Totals.Fail, s.Totals.Inconclusive, s.Totals.Error),
		})
		for _, c := range s.Cells {
			r, ok := rowOf[c.ID]
			if !ok {
				r = len(v.Rows)
				rowOf[c.ID] = r
				v.Rows = append(v.Rows, trendRow{Cell: c.ID, Scenario: c.Scenario, Kill: c.Kill, Cells: make([]*trendEntry, len(sums))})
			}
			vd := verdictOf(c.Verdict)
			title := c.Label()
			for _, reason := range c.Reasons {
				title += "\n" + reason
			}
			v.Rows[r].Cells[ri] = &trendEntry{badge: badge{
				Label: c.Label(),
				Class: string(vd),
				Title: title,
				Href:  url.PathEscape(s.ID) + "/" + cellHref(c.ID),
			}}
		}
	}
	slices.SortStableFunc(v.Rows, func(a, b trendRow) int {
		if c := cmp.Compare(a.Scenario, b.Scenario); c != 0 {
			return c
		}
		if a.Kill != b.Kill {
			if a.Kill {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.Cell, b.Cell)
	})
	markChanges(&v)
	markStates(&v)
	slices.SortStableFunc(v.Changes, func(a, b trendChange) int {
		return cmp.Compare(slices.IndexFunc(v.Runs, func(r trendRun) bool { return r.ID == a.Run }),
			slices.IndexFunc(v.Runs, func(r trendRun) bool { return r.ID == b.Run }))
	})
	if len(v.Changes) > maxTrendChanges {
		v.Notes = append(v.Notes, fmt.Sprintf("%d more changes not listed", len(v.Changes)-maxTrendChanges))
		v.Changes = v.Changes[:maxTrendChanges]
	}
	return v
}

// markChanges marks every verdict that differs from the cell's verdict in the next older run
// that ran the cell, and lists it among the changes.
func markChanges(v *trendView) {
	for _, row := range v.Rows {
		for i, e := range row.Cells {
			if e == nil {
				continue
			}
			for j := i + 1; j < len(row.Cells); j++ {
				prev := row.Cells[j]
				if prev == nil {
					continue
				}
				if prev.Label != e.Label {
					e.Changed = true
					e.Title = fmt.Sprintf("changed: was %s in %s\n%s", prev.Label, v.Runs[j].ID, e.Title)
					v.Changes = append(v.Changes, trendChange{Cell: row.Cell, Run: v.Runs[i].ID, Prev: v.Runs[j].ID,
						From: prev.badge, To: e.badge})
				}
				break
			}
		}
	}
}
