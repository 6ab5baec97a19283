package runner

import (
	"slices"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/scenarios"
)

// TestScenarioInvariantsAreTheCheckers: the invariant names a scenario may list are exactly
// the ones the checker judges, in the same order: every invariant it always judges, then the
// two bounds and ServesAfterHeal (scenarios cannot import the checker).
func TestScenarioInvariantsAreTheCheckers(t *testing.T) {
	judged := append(slices.Clone(checker.Invariants), checker.TimeToFence, checker.TimeToAck, checker.ServesAfterHeal)
	if !slices.Equal(scenarios.Invariants, judged) {
		t.Fatalf("scenarios.Invariants\n  %v\nthe checker judges\n  %v", scenarios.Invariants, judged)
	}
}

// TestEveryActionIsCarriedOut: every action of the vocabulary is either a fault the runner
// opens from its spec, a flap the plan toggles, or an action with a handler; no handler is
// left for an action the vocabulary does not have.
func TestEveryActionIsCarriedOut(t *testing.T) {
	for _, a := range scenarios.Actions {
		_, handled := handlers[a.Name]
		if n := btoi(a.Build != nil) + btoi(handled); n != 1 {
			t.Errorf("action %s: built %v, handled %v; want exactly one", a.Name, a.Build != nil, handled)
		}
		if a.Rhythm && a.Build == nil {
			t.Errorf("action %s toggles a fault it cannot build", a.Name)
		}
	}
	for name := range handlers {
		if _, ok := scenarios.Lookup(name); !ok {
			t.Errorf("handler for %s, an action the vocabulary does not have", name)
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
