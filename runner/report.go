package runner

import (
	"path/filepath"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
)

// writeReports renders the run's HTML pages, junit.xml and summary.json into dir, and
// refreshes the trend page of the results folder the run lives in.
func writeReports(dir string, sum *outcome.Summary, trend bool) error {
	if err := reports.Write(dir, sum); err != nil || !trend {
		return err
	}
	return reports.WriteTrend(filepath.Dir(dir))
}

// Change is a stored cell whose verdict a new judgement changed.
type Change struct {
	Cell    string
	Was, Is checker.Verdict
}

// Rereport judges the run stored in dir again with the current checker, rewrites its
// run.json and result.json files and renders its reports. It writes inside dir only: a
// run.json naming cells outside it is refused (wrapping outcome.ErrBadInput), and the trend
// page of the folder above is left alone. A folder that is not a run wraps
// outcome.ErrBadInput as well.
func Rereport(dir string) (*outcome.Summary, []Change, error) {
	sum, err := LoadRun(dir)
	if err != nil {
		return nil, nil, outcome.BadInput(err)
	}
	var changes []Change
	for _, c := range sum.Cells {
		before := c.Verdict
		Rejudge(c)
		if c.Verdict != before {
			changes = append(changes, Change{Cell: c.ID, Was: before, Is: c.Verdict})
		}
	}
	if err := SaveRun(sum); err != nil {
		return sum, changes, err
	}
	if err := reports.Write(sum.Dir, sum); err != nil {
		return sum, changes, err
	}
	return sum, changes, nil
}
