package faults_test

import (
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

// link is a target carrying handoffs: it keeps what each open fault does to them.
type link struct{ open map[string]faults.Handoff }

func (l *link) FaultHandoffs(name string, loseMessage, loseAnswer bool, delay time.Duration) error {
	l.open[name] = faults.Handoff{LoseMessage: loseMessage, LoseAnswer: loseAnswer, Delay: delay}
	return nil
}

func (l *link) HealHandoffs(name string) error { delete(l.open, name); return nil }

// A handoff fault puts its losses and delay on the target's handoffs, is recorded like every
// fault of a set (its start, its end, with the set's subject and the fault's name), and
// healing it lifts it alone.
func TestHandoffFault(t *testing.T) {
	var got []history.Event
	l := &link{open: map[string]faults.Handoff{}}
	set := faults.NewSet("a", l, func(e history.Event) { got = append(got, e) })
	lose := faults.Handoff{LoseAnswer: true}
	late := faults.Handoff{Delay: 300 * time.Millisecond}
	if err := set.Open(faults.HandoffFault("relocate:a@step2", lose)); err != nil {
		t.Fatal(err)
	}
	if err := set.Open(faults.HandoffFault("late", late)); err != nil {
		t.Fatal(err)
	}
	if l.open["relocate:a@step2"] != lose || l.open["late"] != late {
		t.Fatalf("the link carries %+v, want the lost answer and the delay", l.open)
	}
	if err := set.Close("relocate:a@step2"); err != nil {
		t.Fatal(err)
	}
	if _, still := l.open["relocate:a@step2"]; still || l.open["late"] != late {
		t.Fatalf("after healing the lost answer the link carries %+v, want the delay alone", l.open)
	}
	want := []history.Kind{history.FaultStart, history.FaultStart, history.FaultEnd}
	if len(got) != len(want) {
		t.Fatalf("recorded %+v, want %v", got, want)
	}
	for i, e := range got {
		if e.Kind != want[i] || e.Writer != "a" {
			t.Fatalf("event %d is %+v, want %s by a", i, e, want[i])
		}
	}
	if got[0].Detail != "relocate:a@step2" || got[2].Detail != "relocate:a@step2" {
		t.Fatalf("recorded %+v, want the fault's name as the detail", got)
	}
	if f := faults.HandoffFault("x", lose); f.Layer() != faults.Protocol {
		t.Fatalf("layer %s, want protocol", f.Layer())
	}
}

// A target that carries no handoffs refuses the fault, and the set keeps nothing open.
func TestHandoffFaultNeedsHandoffs(t *testing.T) {
	set := faults.NewSet("a", struct{}{}, nil)
	err := set.Open(faults.HandoffFault("lost", faults.Handoff{LoseMessage: true}))
	if err == nil || !strings.Contains(err.Error(), "carries no handoffs") {
		t.Fatalf("got %v, want the target refused", err)
	}
	if names := set.Names(); len(names) != 0 {
		t.Fatalf("open faults %v, want none", names)
	}
}
