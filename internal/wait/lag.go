package wait

import (
	"sync"
	"time"
)

// Lag measures how far a run falls behind its own schedule: a goroutine asks to wake every
// tick and records by how much each wake-up came late, converted to scenario time. A process
// starved of CPU (a loaded machine, the race detector, many runs side by side) wakes every
// goroutine late alike, so what this one sees is what a writer's answer timeout or a
// relocation's next step saw: on a fast clock a few real milliseconds are seconds of the
// schedule. Lag is safe for concurrent use.
type Lag struct {
	mu   sync.Mutex
	max  time.Duration
	stop chan struct{}
	done chan struct{}
}

// WatchLag starts measuring the lag of the clock's run, waking every tick of scenario time
// (at least every millisecond of real time). Stop ends it. A virtual clock never falls
// behind its schedule: its Lag stays zero.
func (c *Clock) WatchLag(tick time.Duration) *Lag {
	l := &Lag{stop: make(chan struct{}), done: make(chan struct{})}
	if c.IsVirtual() {
		close(l.done)
		return l
	}
	real := max(c.Real(tick), time.Millisecond)
	go func() {
		defer close(l.done)
		t := time.NewTimer(real)
		defer t.Stop()
		due := time.Now().Add(real)
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
				if late := c.Scenario(time.Since(due)); late > 0 {
					l.mu.Lock()
					l.max = max(l.max, late)
					l.mu.Unlock()
				}
				due = time.Now().Add(real)
				t.Reset(real)
			}
		}
	}()
	return l
}

// Max is the largest lateness seen so far, in scenario time.
func (l *Lag) Max() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.max
}

// Stop ends the measurement and returns Max.
func (l *Lag) Stop() time.Duration {
	close(l.stop)
	<-l.done
	return l.Max()
}
