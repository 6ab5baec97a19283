package reports

import (
	"os"
	"path/filepath"
)

// flakyFlips is how many verdict changes across the runs of the trend page make a cell flaky:
// a cell that changed once and stayed is a regression (or a fix), one that keeps changing
// between runs of the same plan is flaky.
const flakyFlips = 2

// markStates sets each row's flips, its flaky and failing flags and, for a kill cell, the
// oldest run in which its variant survived. Rows of v.Rows hold runs newest first.
func markStates(v *trendView) {
	for i := range v.Rows {
		row := &v.Rows[i]
		newest := ""
		for j, e := range row.Cells {
			if e == nil {
				continue
			}
			if newest == "" {
				newest = e.Class
			}
			if e.Changed {
				row.Flips++
			}
			if row.Kill && e.Label == labelSurvived {
				row.FirstSurvived = v.Runs[j].ID
			}
		}
		row.Flaky = row.Flips >= flakyFlips
		row.Failing = !row.Flaky && newest != "" && newest != "pass"
		if row.Flaky {
			v.Flaky = append(v.Flaky, row.Cell)
		}
	}
}

// markFlaky sets the flaky flag of the cells of s, the summary of the run folder dir, from the
// runs beside it in dir's parent that started before it: the same answer whenever the run
// is reported again, whatever ran after it.
func markFlaky(dir string, s *Summary) {
	parent, self := filepath.Dir(dir), filepath.Base(dir)
	entries, err := os.ReadDir(parent)
	if err != nil {
		return
	}
	sums := []Summary{*s}
	for _, e := range entries {
		if !e.IsDir() || e.Name() == self {
			continue
		}
		prior, err := ReadSummary(filepath.Join(parent, e.Name(), "summary.json"))
		if err != nil || !prior.Started.Before(s.Started) {
			continue
		}
		prior.ID = e.Name()
		sums = append(sums, prior)
	}
	if len(sums) < flakyFlips+1 {
		return
	}
	flaky := map[string]bool{}
	for _, r := range buildTrend(sums).Rows {
		flaky[r.Cell] = r.Flaky
	}
	for i := range s.Cells {
		s.Cells[i].Flaky = flaky[s.Cells[i].ID]
	}
}
