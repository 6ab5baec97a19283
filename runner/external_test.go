package runner

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/outcome"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/scenarios"
)

// TestDeadExternalStore: an external store killed during a cell, or between two cells, ends
// the run with verdict error and exit 255 naming the unreachable store, never fail; the
// cells after it do not run.
func TestDeadExternalStore(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	scs := []*scenarios.Scenario{quick(t, "first", "4s"), quick(t, "second", "1s")}
	for _, tc := range []struct {
		name   string
		during bool
	}{{"during", true}, {"between", false}} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := testenv.Prefix(t)
			srv, e := testenv.ExternalMinIO(t, prefix)
			var kill sync.Once
			killed := make(chan struct{})
			progress := func(done, total int, cell string, v checker.Verdict) {
				switch {
				case tc.during && done == 0:
					go kill.Do(func() { time.Sleep(1500 * time.Millisecond); srv.Stop(); close(killed) })
				case !tc.during && done == 1:
					kill.Do(func() { srv.Stop(); close(killed) })
				}
			}
			start := time.Now()
			sum, err := Run(context.Background(), scs, Options{Out: t.TempDir(), Env: e, Prefix: prefix, Seed: 1, Progress: progress})
			if err != nil {
				t.Fatal(err)
			}
			<-killed
			if sum.ExitCode() != outcome.ExitHarness {
				t.Errorf("exit code %d, want %d", sum.ExitCode(), outcome.ExitHarness)
			}
			var got []string
			for _, c := range sum.Cells {
				got = append(got, string(c.Verdict)+": "+c.Error)
				if c.Verdict == checker.Fail {
					t.Errorf("%s: fail on a dead store: %v", c.ID, c.Result.Reasons)
				}
			}
			if len(sum.Cells) != 2 {
				t.Fatalf("cells %q", got)
			}
			first, second := sum.Cells[0], sum.Cells[1]
			if tc.during && (first.Verdict != checker.Error || !strings.Contains(first.Error, "the store became unreachable")) {
				t.Errorf("the cell the store died in: %q", got)
			}
			if !tc.during && first.Verdict != checker.Pass {
				t.Errorf("the cell before the store died: %q", got)
			}
			if second.Verdict != checker.Error || !strings.Contains(second.Error, "not run: the store became unreachable") || second.Dir != "" {
				t.Errorf("the cell after the store died must not run: %q", got)
			}
			// Ended by the store watch, not by waiting out the auditor's 30-second bound on a
			// dead store after the 4-second schedule (the message above names the watch; on a
			// loaded machine the run still takes 10 to 20 seconds).
			if d := time.Since(start); tc.during && d > 30*time.Second {
				t.Errorf("the run took %v; a dead store must end the cell early", d)
			}
		})
	}
}
