package runner

import (
	"context"
	"sync"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/writers"
)

// Overtime: when a scenario names the copy that must end serving (expect.serving), the
// traffic does not stop at the scheduled end while the chain is still on the move. A source
// whose handoff answer was lost waits out its answer timeout, reverts and only then
// acknowledges again; a target that receives a held handoff message late adopts the chain or
// is refused; on a loaded machine (or a compressed clock) either can land a moment before the
// scheduled end, and stopping the clients then judges a copy that had no chance to show what
// it does next: a correct source that took the chain back with nothing acknowledged after it
// (which HandoffResolves fails), or a source whose chain a blind target just took and that
// made no fence write since (which NoSpuriousFencing never sees). So the runner keeps the
// clients running until the chain has settled and the copy serves on it: the copy has
// acknowledged an op while active, after the scheduled end and after the last move of the
// chain by any writer (a claim, promotion, adoption, revert, transfer, handoff, drain,
// stand-down, fence or crash), with no other writer active (a target that received its
// handoff, a zombie) and none promoting, relocating or waiting as a target.
// It waits at most servingGrace past the later of the scheduled end and the last move, and
// servingOvertime in all, and stops at once when the copy can no longer serve. No step
// starts in overtime (as none starts once the traffic stopped): overtime only gives the
// protocol the chance to show what it does, it never adds a fault. A copy that does not serve
// within the bound is judged as it stands: a copy that stays blocked still fails.
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
	var seq, lastAck, lastMove int // signal numbers since the scheduled end (0: none)
	wake := make(chan struct{}, 1)
	cancel := cr.cluster.Bus().Subscribe(func(sig writers.Signal) {
		mu.Lock()
		seq++
		switch {
		case sig.Writer == s && sig.Kind == history.SigAcked:
			lastAck = seq
		case movesChain[sig.Kind]:
			lastMove = seq
		}
		mu.Unlock()
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	defer cancel()

	grace := max(servingGrace, cr.clock.Scenario(servingGraceFloor))
	start, seenMove := time.Now(), 0
	timer := cr.clock.NewTimer(grace)
	defer timer.Stop()
	hard := cr.clock.NewTimer(max(servingOvertime, cr.clock.Scenario(2*servingGraceFloor)))
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
			ack, move := lastAck, lastMove
			mu.Unlock()
			if move > seenMove { // the chain moved: the grace runs from now
				seenMove = move
				timer.Reset(grace)
			}
			if ack > move && w.State() == writers.StateActive && cr.chainSettled(s) {
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

// movesChain are the signals after which the serving copy must acknowledge again before the
// traffic may stop in overtime.
var movesChain = map[history.SignalKind]bool{
	history.SigClaimed: true, history.SigPromoted: true, history.SigAdopted: true, history.SigReverted: true,
	history.SigTransferred: true, history.SigHandedOff: true, history.SigDrained: true, history.SigStoodDown: true,
	history.SigFenced: true, history.SigCrashed: true,
}

// chainSettled reports whether s is the only writer that believes it is primary, and no
// writer is promoting, relocating or reserved as a target. A relocation target that received
// its handoff is active before it adopts the chain at its first sync, and a zombie is active
// until its next fence write: either will move the chain, or find it cannot.
func (cr *cellRun) chainSettled(s string) bool {
	for _, w := range cr.cluster.Writers() {
		switch w.State() {
		case writers.StatePromoting, writers.StateRelocating, writers.StateTarget:
			return false
		case writers.StateActive:
			if w.ID() != s {
				return false
			}
		}
	}
	return true
}
