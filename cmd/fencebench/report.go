package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
)

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
		return outcome.ExitBadInput
	}
	sum, changes, err := runner.Rereport(dirs[0])
	for _, c := range changes {
		fmt.Fprintf(stdout, "%s: %s -> %s\n", c.Cell, c.Was, c.Is)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fencebench report: %v\n", err)
		if errors.Is(err, outcome.ErrBadInput) {
			return outcome.ExitBadInput
		}
		return outcome.ExitHarness
	}
	changed := len(changes)
	fmt.Fprintf(stdout, "re-judged %d cells (%d changed); report: %s\n", len(sum.Cells), changed, filepath.Join(sum.Dir, "index.html"))
	return sum.ExitCode()
}
