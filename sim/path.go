package sim

import (
	"fmt"
	"sync"
	"time"

	"github.com/fencebench/fencebench/faults"
)

// Path is one writer's simulated route to the store. It is a store.Store for the writer's
// client, and the target of the writer's network and request faults (its [Path.Faults]).
type Path struct {
	b      *Bench
	writer string
	rules  *faults.Rules
	set    *faults.Set

	mu        sync.Mutex
	partition faults.PartitionMode // 0: none
	latency   time.Duration
	kbps      int64
	reset     bool
	oneWay    bool
	// cut is closed when the path's connections are cut (a heal, a refusing partition, a
	// reset): every call held on the path ends at once with an unknown outcome.
	cut chan struct{}
}

var (
	_ faults.Network  = (*Path)(nil)
	_ faults.Requests = (*Path)(nil)
)

// Faults is the set of faults open on the path.
func (p *Path) Faults() *faults.Set { return p.set }

// Writer is the writer the path was created for.
func (p *Path) Writer() string { return p.writer }

// Fired reports how many times rules of that name fired on the path.
func (p *Path) Fired(name string) int { return p.rules.Fired(name) }

// AddRule implements faults.Requests.
func (p *Path) AddRule(r faults.Rule) error { return p.rules.Add(r) }

// RemoveRule implements faults.Requests.
func (p *Path) RemoveRule(name string) error { return p.rules.Remove(name) }

// cutLocked ends every call held on the path.
func (p *Path) cutLocked() {
	if p.cut != nil {
		close(p.cut)
	}
	p.cut = make(chan struct{})
}

// Partition implements faults.Network: refuse fails every call at once (and cuts the held
// ones), blackhole holds every call until its deadline.
func (p *Path) Partition(mode faults.PartitionMode) error {
	if mode != faults.Refuse && mode != faults.Blackhole {
		return fmt.Errorf("sim: unknown partition mode %v", mode)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partition = mode
	if mode == faults.Refuse {
		p.cutLocked()
	}
	return nil
}

// Latency implements faults.Network: every call reaches the store d (scenario time) later.
func (p *Path) Latency(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: negative latency")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.latency = d
	return nil
}

// Bandwidth implements faults.Network: a call's body takes len/kbps to reach the store.
func (p *Path) Bandwidth(kbps int64) error {
	if kbps <= 0 {
		return fmt.Errorf("sim: bandwidth must be positive")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.kbps = kbps
	return nil
}

// Reset implements faults.Network: every call fails at once, unapplied, until healed.
func (p *Path) Reset() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reset = true
	p.cutLocked()
	return nil
}

// SlowClose implements faults.Network. A connection's close is invisible to a call at the
// store interface, so it changes nothing but is accepted (and recorded by the set).
func (p *Path) SlowClose(d time.Duration) error {
	if d < 0 {
		return fmt.Errorf("sim: negative slow-close delay")
	}
	return nil
}

// DropAnswers lets calls reach the store and holds every answer until the caller's deadline.
func (p *Path) DropAnswers() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.oneWay = true
	return nil
}

// Heal implements faults.Network: every network fault is lifted and the calls held on the
// path end at once with an unknown outcome, as when a proxy's connections are cut.
func (p *Path) Heal() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.partition, p.latency, p.kbps, p.reset, p.oneWay = 0, 0, 0, false, false
	p.cutLocked()
	return nil
}

// netState is the path's network as one call found it.
type netState struct {
	partition faults.PartitionMode
	delay     time.Duration
	reset     bool
	oneWay    bool
	cut       <-chan struct{}
}

func (p *Path) state(bodyLen int) netState {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut == nil {
		p.cut = make(chan struct{})
	}
	s := netState{partition: p.partition, delay: p.latency, reset: p.reset, oneWay: p.oneWay, cut: p.cut}
	if p.kbps > 0 {
		s.delay += time.Duration(float64(bodyLen) / float64(p.kbps*1024) * float64(time.Second))
	}
	return s
}

// oneWayNow reports whether answers are being dropped, and the cut channel to hold on.
func (p *Path) oneWayNow() (bool, <-chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut == nil {
		p.cut = make(chan struct{})
	}
	return p.oneWay, p.cut
}
