package runner

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/system"
)

// exploreSys explores a system on MinIO, one schedule at a time, and checks that no node
// process is left running.
func exploreSys(t *testing.T, l system.Launcher, o ExploreOptions) (*outcome.Exploration, string) {
	t.Helper()
	o.Out, o.Env, o.Prefix, o.Jobs = t.TempDir(), env.Local{Local: testenv.MinIO(t)}, testenv.Prefix(t), 1
	o.System = &SystemOptions{Launcher: l}
	x, err := Explore(context.Background(), o)
	if pids := system.Running(); len(pids) > 0 {
		t.Errorf("node processes left running after the exploration: %v", pids)
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d schedules: %d pass, %d fail, %d inconclusive, %d error %v; %v", x.Schedules, x.Passed, x.Failed,
		x.Inconclusive, x.Errors, x.ErrorSamples, x.InconclusiveWhy)
	return x, filepath.Join(o.Out, x.ID)
}

// TestSystemExploreKillsABrokenVariant: generated schedules, drawn from the steps the
// fenceproc adapter declares, find that the protocol without its sweep (no-sweep, killed
// through the boundary in the catalogue) loses acknowledged writes; the failure is shrunk to
// a scenario a system run loads, which replays the violation, and which names the system's
// command in its rerun line.
func TestSystemExploreKillsABrokenVariant(t *testing.T) {
	l := procSystem(t, "--variant", "no-sweep")
	x, dir := exploreSys(t, l, ExploreOptions{Seed: 100, Schedules: 6, StopAtFirst: true, Replays: 2, Shrink: 1, ShrinkRuns: 12})
	if x.Failed == 0 || len(x.Failures) == 0 {
		t.Fatalf("no-sweep survived %d generated schedules", x.Schedules)
	}
	if x.Errors > 0 {
		t.Errorf("harness errors: %v", x.ErrorSamples)
	}
	f := x.Failures[0]
	t.Logf("failure: %v, %d steps -> %d, replayed %d/%d, %s", f.Invariants, f.Steps, f.ShrunkSteps, f.ReplayHits, f.Replays, f.Rerun)
	if f.Target != checker.NoAckedWriteLoss {
		t.Errorf("the shrink kept %s, want NoAckedWriteLoss", f.Target)
	}
	if f.Scenario == "" || f.ShrunkSteps > f.Steps || f.ShrunkSteps == 0 {
		t.Fatalf("not shrunk: %d steps -> %d, scenario %q", f.Steps, f.ShrunkSteps, f.Scenario)
	}
	if f.Replays != 2 || f.ReplayHits == 0 {
		t.Errorf("the shrunk scenario replayed %d of %d times", f.ReplayHits, f.Replays)
	}
	want := `fencebench run --system "` + l.Describe() + `"`
	if len(f.Rerun) < len(want) || f.Rerun[:len(want)] != want {
		t.Errorf("rerun line %q does not run the system (want it to start with %q)", f.Rerun, want)
	}
	file := filepath.Join(dir, filepath.FromSlash(f.Scenario))
	sc, err := scenarios.LoadFile(file, scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatalf("the shrunk scenario does not load: %v", err)
	}
	hello := system.Hello{Name: "fenceproc", Capabilities: []string{system.CapPromote, system.CapTakeover, system.CapTerms, system.CapRead}}
	if err := ValidateForSystem(sc, hello, true); err != nil {
		t.Errorf("the shrunk scenario is not one a system run takes: %v", err)
	}
	if f.Cell == "" {
		t.Errorf("the shrunk failure's run was not recorded")
	}
}

// TestSystemExploreCorrectPasses: the correct protocol through the same boundary passes a
// small budget of generated schedules, with no harness error.
func TestSystemExploreCorrectPasses(t *testing.T) {
	x, _ := exploreSys(t, procSystem(t), ExploreOptions{Seed: 200, Schedules: 4, Replays: 2, ShrinkRuns: 12})
	if x.Schedules != 4 || x.Failed > 0 || x.Errors > 0 {
		t.Fatalf("the correct protocol: %d schedules, %d failed, %d errors %v; failures %+v", x.Schedules, x.Failed, x.Errors, x.ErrorSamples, x.Failures)
	}
	if x.Passed == 0 {
		t.Fatalf("no schedule passed (%d inconclusive: %v)", x.Inconclusive, x.InconclusiveWhy)
	}
}
