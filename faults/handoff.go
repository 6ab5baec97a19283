package faults

import (
	"fmt"
	"time"
)

// Handoff is what a fault does to the handoffs a writer sends another writer: a relocation's
// message from its source to its target, and the target's answer back. The zero value lets
// both through at once.
type Handoff struct {
	// LoseMessage loses the message: the target never receives it, and the source gives up
	// after its answer timeout.
	LoseMessage bool
	// LoseAnswer loses the target's answer: the target acts on the message (it takes over),
	// and the source gives up after its answer timeout.
	LoseAnswer bool
	// Delay holds the message for Delay before the target receives it. A delay longer than
	// the source's answer timeout makes the source give up while the message is in flight;
	// the target then acts on it late.
	Delay time.Duration
}

// Handoffs is the capability of a target that carries a writer's handoffs to other writers
// (package writers' HandoffLink): while a fault is open on it, every handoff sent meets the
// losses and the delay of the faults open then. Its arguments are a [Handoff]'s fields, so a
// target implements it without importing this package.
type Handoffs interface {
	FaultHandoffs(name string, loseMessage, loseAnswer bool, delay time.Duration) error
	HealHandoffs(name string) error
}

// HandoffFault puts h on the handoffs its target sends until it heals; healing it lifts h
// alone. It is a [Protocol] fault: its set records its start before the handoffs it meets.
func HandoffFault(name string, h Handoff) Fault {
	return &fault{name: name, layer: Protocol,
		in: func(t any) error {
			l, err := handoffsOf(name, t)
			if err != nil {
				return err
			}
			return l.FaultHandoffs(name, h.LoseMessage, h.LoseAnswer, h.Delay)
		},
		out: func(t any) (bool, error) {
			l, err := handoffsOf(name, t)
			if err != nil {
				return false, err
			}
			return false, l.HealHandoffs(name)
		}}
}

func handoffsOf(name string, t any) (Handoffs, error) {
	l, ok := t.(Handoffs)
	if !ok {
		return nil, fmt.Errorf("faults: handoff %s: the target (%T) carries no handoffs", name, t)
	}
	return l, nil
}
