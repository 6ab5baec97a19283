package writers

import (
	"testing"
	"time"
)

// Healing a handoff fault lifts that fault alone: the link's other faults stay open, and a
// name never opened changes nothing.
func TestHandoffLinkHealLiftsOnlyItsFault(t *testing.T) {
	var l HandoffLink
	if err := l.FaultHandoffs("lose", true, false, 0); err != nil {
		t.Fatal(err)
	}
	if err := l.FaultHandoffs("slow", false, true, time.Second); err != nil {
		t.Fatal(err)
	}
	if hf := l.now(); hf != (handoffFault{loseMessage: true, loseAnswer: true, delay: time.Second}) {
		t.Fatalf("both faults open: %+v", hf)
	}
	if err := l.HealHandoffs("lose"); err != nil {
		t.Fatal(err)
	}
	if hf := l.now(); hf != (handoffFault{loseAnswer: true, delay: time.Second}) {
		t.Fatalf("after healing lose: %+v, want the slow fault alone", hf)
	}
	for _, name := range []string{"never-opened", "slow"} {
		if err := l.HealHandoffs(name); err != nil {
			t.Fatal(err)
		}
	}
	if hf := l.now(); hf != (handoffFault{}) {
		t.Fatalf("after healing both: %+v, want none", hf)
	}
	if err := l.FaultHandoffs("bad", false, false, -time.Second); err == nil {
		t.Fatal("a negative delay was accepted")
	}
}
