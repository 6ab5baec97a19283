package runner

import (
	"context"
	"sync"
	"time"

	"github.com/fencebench/fencebench/writers"
)

// Overtime: when a scenario names the copy that must end serving (expect.serving), the
// traffic does not stop at the scheduled end while that copy is still on its way back to
// serving. A source whose handoff answer was lost waits out its answer timeout, reverts and
// only then acknowledges again; on a loaded machine (or a compressed clock) that can land a
// moment before the scheduled end, and stopping the clients then would leave a correct copy
// that holds the chain with nothing acknowledged after it took it, which HandoffResolves
// rightly fails. So the runner keeps the clients running until the copy has acknowledged an
// op while active after the scheduled end and after its latest acquisition, waiting at most
// servingGrace past the later of the two and servingOvertime in all. No step starts in
// overtime (as none starts once the traffic stopped): overtime only gives the copy the chance
// to show it serves, it never adds a fault. A copy that does not serve within the bound is
// judged as it stands: a copy that stays blocked still fails.
const (
	servingGrace    = 3 * time.Second
	servingOvertime = 10 * time.Second
	// servingGraceFloor is the least real time the grace lasts, however fast the clock: a
	// revert and a sync are a few goroutine hand-offs, which a busy machine can delay by
	// milliseconds that a compressed clock counts as seconds.
	servingGraceFloor = 100 * time.Millisecond
)

// awaitServing holds the traffic past the scheduled end until expect.serving's copy served
// (see servingGrace). It returns at once when no copy is named, no client runs, or the copy
// can no longer serve (crashed, fenced, stood down, relocated, closed).
func (cr *cellRun) awaitServing(ctx context.Context, traffic *writers.Traffic) {
	s := cr.c.Scenario.Expect.Serving
	if s == "" || traffic == nil {
		return
	}
	w := cr.cluster.Writer(s)
	if w == nil {
		return
	}
	cr.mu.Lock()
	cr.overtime = true
	cr.mu.Unlock()

	var mu sync.Mutex
	acked, acquired := false, false
	wake := make(chan struct{}, 1)
	cancel := cr.cluster.Bus().Subscribe(func(sig writers.Signal) {
		if sig.Writer != s {
			return
		}
		mu.Lock()
		switch sig.Kind {
		case writers.SigAcked:
			acked = true
		case writers.SigClaimed, writers.SigPromoted, writers.SigAdopted, writers.SigReverted:
			acked, acquired = false, true
		}
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer cancel()

	grace := func() time.Duration { return max(cr.clock.Real(servingGrace), servingGraceFloor) }
	start := time.Now()
	timer := time.NewTimer(grace())
	defer timer.Stop()
	hard := time.NewTimer(max(cr.clock.Real(servingOvertime), 2*servingGraceFloor))
	defer hard.Stop()
	for {
		switch w.State() {
		case writers.StateCrashed, writers.StateClosed, writers.StateFenced, writers.StateStoodDown, writers.StateRelocated:
			cr.log.Debug("overtime: the expected serving copy can no longer serve", "writer", s, "state", w.State())
			return
		}
		select {
		case <-wake:
			mu.Lock()
			ok, again := acked, acquired
			acquired = false
			mu.Unlock()
			if again { // it took the chain (again): the grace runs from now
				timer.Reset(grace())
			}
			if ok && w.State() == writers.StateActive {
				cr.log.Debug("overtime: the expected serving copy served", "writer", s, "real", time.Since(start))
				return
			}
		case <-timer.C:
			cr.log.Debug("overtime: the expected serving copy did not serve within the grace", "writer", s)
			return
		case <-hard.C:
			cr.log.Debug("overtime: bound reached", "writer", s)
			return
		case <-ctx.Done():
			return
		}
	}
}
