package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/adapters/fencelog"
	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/system"
)

// runSysSim runs scs against a Go system in process on the simulated stack: the in-memory
// store, simulated fault paths and virtual scenario time.
func runSysSim(t *testing.T, so SystemOptions, scs ...*scenarios.Scenario) (*outcome.Summary, time.Duration) {
	t.Helper()
	began := time.Now()
	sum, err := RunSystem(context.Background(), scs, Options{Out: t.TempDir(), Env: &env.Sim{Mem: store.NewMem()},
		Prefix: "sim-system/", NoReports: true, Seed: 1}, so)
	if err != nil {
		t.Fatal(err)
	}
	return sum, time.Since(began)
}

// TestSystemInProcessOnSim: the bench's own protocol as a Go system in process runs on the
// simulated stack with scenario time: shipped scenarios pass with the correct protocol, and
// the variants the catalogue lists for them are killed on the invariants it names, each cell
// in less real time than its scenario lasts (the clock jumps while everyone waits).
func TestSystemInProcessOnSim(t *testing.T) {
	for _, k := range []struct {
		scenario string
		variant  fence.Variant
	}{{"stale-grant", fence.NoTermFloor}, {"partial-sweep", fence.NoSurvivorCheck}, {"lost-cas-response", fence.AmbiguousIsFenced}} {
		sc := catalogueScenario(t, k.scenario)
		if err := ValidateForSystem(sc, fencelogHello, false); err != nil {
			t.Fatal(err)
		}
		sum, took := runSysSim(t, SystemOptions{Launcher: system.InProcess("fencelog", fencelog.System{})}, sc)
		c := sum.Cells[0]
		t.Logf("%s, correct: %s in %v (scenario %v), %d acked", k.scenario, c.Verdict, took.Round(time.Millisecond), sc.Duration, c.Result.Acked)
		if c.Verdict != checker.Pass {
			t.Errorf("%s, correct protocol on sim: %s %s %v\n%s", k.scenario, c.Verdict, c.Error, c.Result.Reasons, c.Result.Narrative)
		}
		if took >= sc.Duration {
			t.Errorf("%s took %v of real time for %v of scenario time: not on the virtual clock", k.scenario, took, sc.Duration)
		}
		kill := killOf(t, sc, k.variant)
		sum, _ = runSysSim(t, SystemOptions{Launcher: system.InProcess("fencelog", fencelog.System{Variant: k.variant}),
			Kill: true, Violates: kill.Violates}, sc)
		if c := sum.Cells[0]; c.Verdict != checker.Pass {
			t.Errorf("%s with %s survived on sim: %s %s %v", k.scenario, k.variant, c.Verdict, c.Error, c.Result.Reasons)
		}
	}
}

// TestSystemProcessOnSimIsRefused: a system's process cannot reach the simulated store.
func TestSystemProcessOnSimIsRefused(t *testing.T) {
	_, err := RunSystem(context.Background(), []*scenarios.Scenario{sysScenario(t, sysCrashPartition)},
		Options{Out: t.TempDir(), Env: &env.Sim{Mem: store.NewMem()}, Prefix: "sim-system/", NoReports: true},
		SystemOptions{Launcher: system.Command(system.ProcOptions{Command: []string{"/bin/true"}})})
	if !errors.Is(err, outcome.ErrBadInput) || !strings.Contains(err.Error(), "simulated stack") {
		t.Fatalf("want bad input, got %v", err)
	}
}
