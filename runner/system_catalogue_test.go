package runner

import (
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/system"
)

// catalogueScenario is a shipped scenario by name.
func catalogueScenario(t *testing.T, name string) *scenarios.Scenario {
	t.Helper()
	for _, sc := range catalogue(t) {
		if sc.Name == name {
			return sc
		}
	}
	t.Fatalf("no scenario %s in the catalogue", name)
	return nil
}

// killOf is the kill sc lists for variant.
func killOf(t *testing.T, sc *scenarios.Scenario, variant fence.Variant) *scenarios.Kill {
	t.Helper()
	for i := range sc.Kills {
		if sc.Kills[i].Variant == string(variant) {
			return &sc.Kills[i]
		}
	}
	t.Fatalf("%s does not list %s", sc.Name, variant)
	return nil
}

// fencelogHello is what fenceproc declares.
var fencelogHello = system.Hello{Name: "fencebench-fence", Capabilities: []string{system.CapPromote, system.CapTerms, system.CapRead, system.CapRelocate}}

// TestSystemCatalogueThroughTheBoundary: shipped scenarios, unchanged, run against the bench's
// own protocol as processes, three cells side by side (each its own nodes, paths and
// prefix): each passes with the correct protocol, and the cells did overlap.
func TestSystemCatalogueThroughTheBoundary(t *testing.T) {
	var scs []*scenarios.Scenario
	for _, name := range []string{"lost-cas-response", "partial-sweep", "stale-grant"} {
		sc := catalogueScenario(t, name)
		if err := ValidateForSystem(sc, fencelogHello, true); err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	sum, err := runSysJobs(t, 3, SystemOptions{Launcher: procSystem(t)}, scs...)
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) != len(scs) {
		t.Fatalf("%d cells for %d scenarios", len(sum.Cells), len(scs))
	}
	for i, c := range sum.Cells {
		if c.Verdict != checker.Pass {
			t.Errorf("%s: %s %s %v", c.ID, c.Verdict, c.Error, c.Result.Reasons)
		}
		if c.Scenario != scs[i].Name {
			t.Errorf("cell %d is %s, want %s: results out of the plan's order", i, c.Scenario, scs[i].Name)
		}
	}
	a, b := sum.Cells[0], sum.Cells[1]
	if !a.Started.Before(b.Started.Add(b.Duration)) || !b.Started.Before(a.Started.Add(a.Duration)) {
		t.Errorf("cells ran one after another (%s at %v for %v, %s at %v for %v), want side by side",
			a.ID, a.Started, a.Duration, b.ID, b.Started, b.Duration)
	}
}

// TestSystemCatalogueKillsThroughTheBoundary: the same scenarios kill the variants the
// catalogue lists for them, with the variant running in the node process (fenceproc
// --variant), judged on the invariants the catalogue names.
func TestSystemCatalogueKillsThroughTheBoundary(t *testing.T) {
	for _, k := range []struct {
		scenario string
		variant  fence.Variant
	}{{"lost-cas-response", fence.AmbiguousIsFenced}, {"partial-sweep", fence.NoSurvivorCheck}, {"stale-grant", fence.NoTermFloor}} {
		sc := catalogueScenario(t, k.scenario)
		kill := killOf(t, sc, k.variant)
		sum, err := runSys(t, SystemOptions{Launcher: procSystem(t, "--variant", string(k.variant)), Kill: true, Violates: kill.Violates}, sc)
		c := cellOf(t, sum, err)
		if c.Verdict != checker.Pass {
			t.Errorf("%s with %s survived: %s %s %v", k.scenario, k.variant, c.Verdict, c.Error, c.Result.Reasons)
		}
	}
}

// TestSystemTimeToFenceThroughTheBoundary: missing-key-404 judges TimeToFence, which for a
// system reads the nodes' write requests in their paths' ledgers: the correct protocol passes
// it, and 404-is-retryable (a superseded copy that retries its vanished fence instead of
// standing down) is killed by it through the process boundary.
func TestSystemTimeToFenceThroughTheBoundary(t *testing.T) {
	sc := catalogueScenario(t, "missing-key-404")
	sum, err := runSys(t, SystemOptions{Launcher: procSystem(t)}, sc)
	if c := cellOf(t, sum, err); c.Verdict != checker.Pass {
		t.Errorf("correct protocol: %s %s %v", c.Verdict, c.Error, c.Result.Reasons)
	}
	kill := killOf(t, sc, fence.NotFoundIsRetryable)
	sum, err = runSys(t, SystemOptions{Launcher: procSystem(t, "--variant", string(fence.NotFoundIsRetryable)), Kill: true, Violates: kill.Violates}, sc)
	if c := cellOf(t, sum, err); c.Verdict != checker.Pass {
		t.Errorf("404-is-retryable survived: %s %s %v", c.Verdict, c.Error, c.Result.Reasons)
	}
}
