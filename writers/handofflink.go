package writers

import (
	"fmt"
	"sync"
	"time"
)

// HandoffLink is the way the handoffs a writer sends another writer travel: a relocation's
// message to its target, and the target's answer back. It is where the bench's fault model
// puts handoff faults (it implements faults.Handoffs; opened in a fault set, a
// faults.HandoffFault is recorded like every other fault): a handoff meets the faults open
// on the link when it is sent. Its methods are safe for concurrent use.
type HandoffLink struct {
	mu   sync.Mutex
	open map[string]handoffFault
}

// handoffFault is what the faults open on a link do to a handoff: the message lost, the
// answer lost, the message delayed.
type handoffFault struct {
	loseMessage, loseAnswer bool
	delay                   time.Duration
}

// FaultHandoffs opens a fault called name on the link: the handoffs sent while it is open lose
// their message, their answer, or have their message held for delay. A fault already open
// under name takes the new value.
func (l *HandoffLink) FaultHandoffs(name string, loseMessage, loseAnswer bool, delay time.Duration) error {
	if delay < 0 {
		return fmt.Errorf("handoff fault %s: negative delay %s", name, delay)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open == nil {
		l.open = map[string]handoffFault{}
	}
	l.open[name] = handoffFault{loseMessage: loseMessage, loseAnswer: loseAnswer, delay: delay}
	return nil
}

// HealHandoffs lifts the fault called name; the link's other faults stay. A name that is not
// open is ignored.
func (l *HandoffLink) HealHandoffs(name string) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.open, name)
	return nil
}

// now is what a handoff sent now meets: every open fault's losses, and the longest delay.
func (l *HandoffLink) now() handoffFault {
	l.mu.Lock()
	defer l.mu.Unlock()
	var hf handoffFault
	for _, f := range l.open {
		hf.loseMessage = hf.loseMessage || f.loseMessage
		hf.loseAnswer = hf.loseAnswer || f.loseAnswer
		hf.delay = max(hf.delay, f.delay)
	}
	return hf
}
