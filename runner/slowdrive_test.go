package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
)

// TestSlowDrivePasses runs the slow-drive scenario on the run's single-drive local MinIO: the
// cell gets its own MinIO over four FUSE drives, drive 3 lags for a window while b takes
// over, and the correct protocol passes. The drive fault starts and ends in the history, and
// a request in flight in its window took at least the drive's delay (the lag is real).
func TestSlowDrivePasses(t *testing.T) {
	// Not parallel: a drive slowed on a machine busy with other runs can keep a from the syncs
	// the schedule waits for (the verdict turns inconclusive).
	if testing.Short() {
		t.Skip("starts a MinIO over four drives")
	}
	if err := compose.FUSEUsable(); err != nil {
		t.Skipf("FUSE not usable here: %v", err)
	}
	scs := pick(t, "slow-drive")
	delay := scs[0].Steps[0].Params.Delay
	sum, err := Run(context.Background(), scs,
		Options{Out: t.TempDir(), Env: env.Local{Local: testenv.MinIO(t)}, Seed: 1, NoReports: true})
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Cells[0]
	if c.Verdict != checker.Pass {
		t.Fatalf("verdict %s (%s%s)", c.Verdict, c.Error, strings.Join(c.Result.Reasons, "; "))
	}
	var start, end time.Duration
	for _, e := range c.Events {
		if strings.HasPrefix(e.Detail, string(scenarios.DriveSlow)) {
			switch e.Kind {
			case history.FaultStart:
				start = e.Invoke
			case history.FaultEnd:
				end = e.Invoke
			}
		}
	}
	if start == 0 || end <= start {
		t.Fatalf("drive-slow fault from %v to %v; want a start and a later end", start, end)
	}
	var in, slow int
	for _, l := range c.Ledger {
		// A request that overlaps the window met the lagging drive; on a loaded machine few
		// or none fit wholly inside it.
		if l.Forwarded && l.Done > start && l.Time < end {
			in++
			if l.Done-l.Time >= delay {
				slow++
			}
		}
	}
	if slow == 0 {
		t.Errorf("none of the %d requests in flight while drive 3 lagged took %v or more", in, delay)
	}
	t.Logf("requests in flight in the lag window: %d, of which %d took %v or more", in, slow, delay)
}

// TestDriveSlowNeedsFUSE: where FUSE is not usable, a cell that slows a drive does not run; the
// summary names it with the reason, while the other store cells still run on the local stack.
func TestDriveSlowNeedsFUSE(t *testing.T) {
	saved := fuseUsable
	defer func() { fuseUsable = saved }()
	fuseUsable = func() error { return errors.New("open /dev/fuse: no such file or directory") }
	cells := Cells(pick(t, "slow-drive", "quorum-loss"), "", false, 1, nil)
	keep, skipped := applicable(cells, env.Local{})
	if len(keep) != 1 || keep[0].Scenario.Name != "quorum-loss" {
		t.Errorf("cells kept: %v; want quorum-loss alone", keep)
	}
	if len(skipped) != 1 || !strings.HasPrefix(skipped[0], "slow-drive:") || !strings.Contains(skipped[0], "needs FUSE: open /dev/fuse") {
		t.Errorf("not applicable: %q; want slow-drive, naming FUSE and why", skipped)
	}
	fuseUsable = func() error { return nil }
	if keep, skipped := applicable(cells, env.Local{}); len(keep) != 2 || len(skipped) != 0 {
		t.Errorf("with FUSE: kept %d, skipped %q; want both kept", len(keep), skipped)
	}
}
