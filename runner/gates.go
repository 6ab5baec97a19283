package runner

import (
	"sync"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// gates release the requests of http rules with an `until`: each gate is a channel closed at
// the count-th occurrence of one writer's protocol event (or of its alternative, when the rule
// names one), so a held request lands after that event whatever the machine's load. A gate
// asked for after its event has happened is already open; every gate opens when the run winds
// down, so nothing stays held past the schedule.
type gates struct {
	mu     sync.Mutex
	seen   map[gateKey]int // occurrences so far of each writer's event
	shut   []*gate         // gates whose event has not come yet
	opened bool            // the run is winding down: every gate is open
}

type gateKey struct {
	writer string
	event  history.SignalKind
}

type gate struct {
	keys  []gateKey // the event, and its alternative when the rule names one
	count int
	ch    chan struct{}
}

// due says whether one of the gate's events has happened count times.
func (x *gate) due(seen map[gateKey]int) bool {
	for _, k := range x.keys {
		if seen[k] >= x.count {
			return true
		}
	}
	return false
}

// hold returns the channel closed once t's event (or its alternative t.Or) has happened
// t.Count times.
func (g *gates) hold(t scenarios.EventTrigger) <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	x := &gate{keys: []gateKey{{t.Writer, t.Event}}, count: t.Count, ch: make(chan struct{})}
	if t.Or != "" {
		x.keys = append(x.keys, gateKey{t.Writer, t.Or})
	}
	if g.opened || x.due(g.seen) {
		close(x.ch)
		return x.ch
	}
	g.shut = append(g.shut, x)
	return x.ch
}

// signal counts the n-th occurrence of writer's event and opens the gates it completes.
func (g *gates) signal(writer string, event history.SignalKind, n int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	k := gateKey{writer, event}
	if g.seen == nil {
		g.seen = map[gateKey]int{}
	}
	g.seen[k] = max(g.seen[k], n)
	g.shut = g.open(func(x *gate) bool { return x.due(g.seen) })
}

// openAll opens every gate, now and from now on.
func (g *gates) openAll() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.opened = true
	g.shut = g.open(func(*gate) bool { return true })
}

// open closes the channels of the gates due and returns the rest. The caller holds mu.
func (g *gates) open(due func(*gate) bool) []*gate {
	var rest []*gate
	for _, x := range g.shut {
		if due(x) {
			close(x.ch)
		} else {
			rest = append(rest, x)
		}
	}
	return rest
}
