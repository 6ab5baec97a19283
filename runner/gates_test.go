package runner

import (
	"testing"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

func isOpen(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// A gate opens at its count-th event of its own writer, is born open once that has happened,
// and every gate opens when the run winds down.
func TestGatesOpenOnTheirEvent(t *testing.T) {
	var g gates
	second := g.hold(scenarios.EventTrigger{Writer: "c", Event: history.SigClaimed, Count: 2})
	other := g.hold(scenarios.EventTrigger{Writer: "b", Event: history.SigClaimed, Count: 1})
	g.signal("c", history.SigAcked, 5)
	g.signal("c", history.SigClaimed, 1)
	if isOpen(second) || isOpen(other) {
		t.Fatal("a gate opened before its count-th event")
	}
	g.signal("c", history.SigClaimed, 2)
	if !isOpen(second) {
		t.Fatal("the gate did not open at its event")
	}
	if isOpen(other) {
		t.Fatal("another writer's event opened a gate")
	}
	if late := g.hold(scenarios.EventTrigger{Writer: "c", Event: history.SigClaimed, Count: 1}); !isOpen(late) {
		t.Fatal("a gate asked for after its event is shut")
	}
	g.openAll()
	if !isOpen(other) {
		t.Fatal("winding down left a gate shut")
	}
	if after := g.hold(scenarios.EventTrigger{Writer: "z", Event: history.SigFenced, Count: 1}); !isOpen(after) {
		t.Fatal("a gate asked for after the wind-down is shut")
	}
}

// A gate with an alternative opens at whichever of its two events comes first, and only at
// its own writer's.
func TestGateOpensOnItsAlternative(t *testing.T) {
	var g gates
	either := g.hold(scenarios.EventTrigger{Writer: "a", Event: history.SigReverted, Or: history.SigStoodDown, Count: 1})
	g.signal("t", history.SigStoodDown, 1)
	g.signal("a", history.SigAcked, 3)
	if isOpen(either) {
		t.Fatal("the gate opened on another writer's or another event")
	}
	g.signal("a", history.SigStoodDown, 1)
	if !isOpen(either) {
		t.Fatal("the gate did not open on its alternative")
	}
	if born := g.hold(scenarios.EventTrigger{Writer: "a", Event: history.SigReverted, Or: history.SigStoodDown, Count: 1}); !isOpen(born) {
		t.Fatal("a gate whose alternative already happened is shut")
	}
	if first := g.hold(scenarios.EventTrigger{Writer: "a", Event: history.SigReverted, Count: 1}); isOpen(first) {
		t.Fatal("a gate without the alternative opened on it")
	}
}
