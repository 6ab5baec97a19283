package runner

import (
	"context"
	"testing"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
)

// deepest is the largest N of the "depth:N" features an exploration reached: the most syncs
// one writer made, rounded down to a power of two.
func deepest(r *outcome.Reach) int {
	return r.ByClass["depth"]
}

// Guided exploration reaches shapes plain random drawing does not within the same budget: with
// the same seed and number of schedules, its mutations of the schedules that reached new
// coverage stretch histories past anything a fresh draw has (more depth classes: a writer that
// synced hundreds of times), and the correct protocol still passes every one of them: a
// mutated schedule carries no expectation it could falsify, so guided exploration reports no
// false failure.
func TestGuidedExplorationReachesDeeper(t *testing.T) {
	if testing.Short() {
		t.Skip("explores twice")
	}
	t.Parallel()
	run := func(guided bool) *outcome.Exploration {
		x, err := Explore(context.Background(), ExploreOptions{Out: t.TempDir(), ID: "x", Env: env.NewSim(0), Seed: 1,
			Schedules: 80, Jobs: 4, Shrink: -1, Guided: guided})
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	random, guided := run(false), run(true)
	for _, x := range []*outcome.Exploration{random, guided} {
		if x.Reach == nil || x.Reach.Features == 0 || len(x.Reach.Curve) != 10 {
			t.Fatalf("guided=%v: no reach recorded: %+v", x.Reach != nil && x.Reach.Guided, x.Reach)
		}
		if x.Failed != 0 || x.Errors != 0 {
			t.Fatalf("guided=%v: the correct protocol: %d failed, %d errors: %v", x.Reach.Guided, x.Failed, x.Errors, x.ErrorSamples)
		}
	}
	if guided.Reach.Mutated == 0 || random.Reach.Mutated != 0 || !guided.Reach.Guided {
		t.Fatalf("mutated: guided %d, random %d", guided.Reach.Mutated, random.Reach.Mutated)
	}
	if deepest(guided.Reach) <= deepest(random.Reach) {
		t.Fatalf("guided reached %d depth classes, random %d: guidance did not lengthen any history\nguided %+v\nrandom %+v",
			deepest(guided.Reach), deepest(random.Reach), guided.Reach, random.Reach)
	}
	t.Logf("features: guided %d (%v), random %d (%v)", guided.Reach.Features, guided.Reach.ByClass,
		random.Reach.Features, random.Reach.ByClass)
}
