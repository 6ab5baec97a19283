package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fencebench/fencebench/reports"
	"github.com/fencebench/fencebench/runner"
)

func init() { writeReports = renderReports }

// renderReports writes the run's HTML pages, junit.xml and summary.json, and refreshes the
// trend page of the results folder the run lives in.
func renderReports(dir string, sum *runner.Summary) error {
	if err := renderRunReports(dir, sum); err != nil {
		return err
	}
	return reports.WriteTrend(filepath.Dir(dir))
}

// renderRunReports writes the run's HTML pages, junit.xml and summary.json, inside dir only.
func renderRunReports(dir string, sum *runner.Summary) error {
	run := reports.Run{ID: sum.RunID, Started: sum.Started, Duration: sum.Duration, BenchVersion: sum.Version,
		Command: sum.Command, Store: reports.StoreInfo{Endpoint: sum.Store.Endpoint, Server: sum.Store.Server,
			Stack: sum.Store.Stack, Bucket: sum.Store.Bucket, Prefix: sum.Prefix}}
	for _, c := range sum.Cells {
		run.Cells = append(run.Cells, reports.Cell{ID: c.ID, Scenario: c.Scenario, Description: c.Description,
			Variant: c.Variant, Kill: c.Kill, Violates: c.Violates, Seed: c.Seed, Client: c.Client, Verdict: c.Verdict,
			Result: c.Result, Error: c.Error, Duration: c.Duration, Rerun: c.Rerun, Events: c.Events, Ledger: c.Ledger,
			Files: c.Files})
	}
	return reports.Write(dir, run)
}

// reportCmd judges a stored run again with the current checker and rewrites its reports. It
// writes inside the given folder only: a run.json naming cells outside it is refused, and the
// trend page of the folder above is left alone.
func reportCmd(args []string, stdout, stderr io.Writer) int {
	dirs, code := positional("report", "<results/run-id>", args, stderr)
	if code >= 0 {
		return code
	}
	if len(dirs) != 1 {
		fmt.Fprintln(stderr, "usage: fencebench report <results/run-id>")
		return exitBadInput
	}
	sum, err := runner.LoadRun(dirs[0])
	if err != nil {
		fmt.Fprintf(stderr, "fencebench report: %v\n", err)
		return exitBadInput
	}
	changed := 0
	for _, c := range sum.Cells {
		before := c.Verdict
		runner.Rejudge(c)
		if c.Verdict != before {
			changed++
			fmt.Fprintf(stdout, "%s: %s -> %s\n", c.ID, before, c.Verdict)
		}
	}
	if err := runner.SaveRun(sum); err != nil {
		fmt.Fprintf(stderr, "fencebench report: %v\n", err)
		if errors.Is(err, runner.ErrBadInput) {
			return exitBadInput
		}
		return exitHarness
	}
	if err := renderRunReports(sum.Dir, sum); err != nil {
		fmt.Fprintf(stderr, "fencebench report: %v\n", err)
		return exitHarness
	}
	fmt.Fprintf(stdout, "re-judged %d cells (%d changed); report: %s\n", len(sum.Cells), changed, filepath.Join(sum.Dir, "index.html"))
	return sum.ExitCode()
}
