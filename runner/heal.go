package runner

import (
	"context"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/writers"
)

// healBound is how long, in scenario time, the copies have after every fault healed to leave
// the steps that move the chain and acknowledge the op each active copy was given
// (expect.serves_after_heal). A promotion retries with backoff and a relocation source waits
// out its answer timeout (2 s) before it reverts: with nothing failing any more, each ends in
// a few seconds. On the simulated stack the clock is virtual, so the bound is the same on a
// loaded machine; on a real one a run that fell behind its schedule excuses a miss
// (checker.LagTolerance).
const healBound = 30 * time.Second

// healProbe runs once every fault healed, when the scenario asks for ServesAfterHeal: it
// records a Heal event, gives each copy that is active an op of its own (once per copy, as
// the copies become active) and waits until no copy is promoting or relocating and every op
// it gave is acknowledged, or its copy is no longer active (fenced, crashed). A copy still
// in such a step at the bound is recorded as Stuck, with the state it is in; the checker
// judges both. A copy recovering is waited for once a copy at the highest term granted served
// the op it was given (a recovery with no such primary to recover from waits for good in a
// correct protocol). A relocation target is waited for too: its handoff message is on its
// way (a relocation whose message was lost, or held for an abort, returns its target to
// standby when it ends), so it must adopt the chain or give the handoff up.
func (cr *cellRun) healProbe(ctx context.Context) {
	cr.rec.Record(history.Event{Kind: history.Heal})
	bctx, cancel := cr.clock.WithTimeout(ctx, healBound)
	defer cancel()
	bus := cr.cluster.Bus()
	given := map[*writers.Writer]int64{} // the copy's acknowledged count before its op
	for {
		var busy, recovering []*writers.Writer
		served := false
		for _, w := range cr.cluster.Writers() {
			switch w.State() {
			case writers.StateActive:
				before, ok := given[w]
				if !ok {
					before = bus.Acked(w.ID())
					if w.Submit(cr.cluster.NextOp()) != nil {
						break // no longer active: looked at again on the next round
					}
					given[w] = before
				}
				if bus.Acked(w.ID()) <= before {
					busy = append(busy, w)
				} else if w.Term() >= cr.cluster.MaxTerm() {
					served = true
				}
			case writers.StatePromoting, writers.StateRelocating, writers.StateTarget:
				busy = append(busy, w)
			case writers.StateRecovering:
				recovering = append(recovering, w)
			}
		}
		if served {
			// A copy at the highest term granted serves: a recovery has a primary to recover
			// from, and must finish. (Below a higher grant, say a promotion that crashed
			// after creating its term's key, a recovery rightly starts over until a new
			// promotion settles who is primary.)
			busy = append(busy, recovering...)
		}
		if len(busy) == 0 {
			return
		}
		if !cr.clock.For(bctx, healPoll) {
			if ctx.Err() != nil {
				return // the cell itself ended: nothing to judge
			}
			for _, w := range busy {
				st := string(w.State())
				if st == string(writers.StateActive) {
					st = "active with the op it was given unacknowledged"
				}
				cr.rec.Record(history.Event{Kind: history.Stuck, Writer: w.ID(), Detail: st})
			}
			return
		}
	}
}

// healPoll is how often, in scenario time, healProbe looks at the copies again.
const healPoll = 50 * time.Millisecond
