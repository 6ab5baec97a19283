package explore

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/faults"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

const (
	// sRecoveryRelocation: a copy recovers from the primary and freezes at one phase of its
	// recovery (before its file copy, or right after opening its engine) while the primary
	// relocates (aborted late in some seeds); it carries on once the target has acknowledged
	// writes of its own. A target that does not replicate to its source's recoveries, or a
	// recovery that does not check for a relocation after opening its engine, loses the
	// target's acknowledged writes in the recovered copy.
	sRecoveryRelocation = "recovery-during-relocation"
	// sSameTermHydration: the primary publishes a few reference sets and relocates with its
	// target hydrating first, at the same term; the target freezes before fetching its files
	// while the primary publishes once more and collects, and carries on after the collection.
	// Within the retention bound the correct protocol loses nothing; a collection that keeps
	// less than the bound deletes a file the target listed.
	sSameTermHydration = "same-term-hydration"
	// sPendingPublish: the primary publishes a few reference sets; a standby recovers from
	// the store and its fetches of the files the newest set names are held in flight; meanwhile
	// the primary's next refresh uploads its files and its publication is held in flight, or
	// fails (500, for one refresh or two), or lands with its answer lost, and the primary
	// collects while its own refresh has uploaded but not published; the recovery's fetches
	// then reach the store. Only the sets the primary really published may count towards what it
	// retains: one that counts a pending or failed set, or collects what a pending refresh
	// uploaded, deletes a file the recovery still fetches. At most one publication lands while
	// the fetches are held, within the retention bound.
	sPendingPublish = "pending-publish"
)

// pendingPublish: see sPendingPublish. Without client traffic, so that the publications are
// the schedule's own.
func (g *gen) pendingPublish() []scenarios.Step {
	t := g.quietPublisher()
	if t == "" {
		return nil
	}
	// Half the time the shape is the whole schedule: a promotion, a crash or a partition
	// drawn after it would as often as not end the primary's term before its collection.
	g.sole = g.r.IntN(2) == 0
	a := scenarios.Params{Writer: "a"}
	sets := 1 + g.r.IntN(4)
	out := g.publishSets(sets)
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("pending-publish-%d", g.rules), Method: "PUT", Key: "*/segments/metadata/metadata__*",
		Nth: 1, Count: 1}
	refreshes, collect := 1, g.ms(50, 250)
	switch g.r.IntN(3) {
	case 0: // held in flight across the collection
		r.Action, r.Delay = faults.Delay, g.ms(400, 900)
	case 1: // refused, for one refresh or two: none of them is published
		r.Action, r.Status = faults.SyntheticStatus, 500
		refreshes = 1 + g.r.IntN(2)
		r.Count = refreshes
		collect = g.ms(250, 450)
	default: // landed, its answer lost: the primary does not know it published
		r.Action = faults.DropResponse
		collect = g.ms(150, 350)
	}
	hy := func(d time.Duration, act scenarios.Action, pr scenarios.Params) scenarios.Step {
		return afterEvent(t, history.SigHydrating, 1, d, act, pr)
	}
	// The recovery's file fetches are held in flight until after the collection: armed with
	// the recovery, they reach the store only once the primary collected.
	g.rules++
	fetch := faults.Rule{Name: fmt.Sprintf("hold-fetches-%d", g.rules), Method: "GET", Key: "*/segments/data/*",
		Nth: 1, Count: 6, Action: faults.Delay, Delay: collect + g.ms(200, 500)}
	out = append(out,
		afterEvent("a", history.SigPublished, sets, 0, scenarios.HTTP, scenarios.Params{Writer: t, Rule: fetch}),
		afterEvent("a", history.SigPublished, sets, 0, scenarios.Recover, scenarios.Params{Writer: t}),
		hy(0, scenarios.HTTP, scenarios.Params{Writer: "a", Rule: r}),
		hy(10*time.Millisecond, scenarios.Refresh, a))
	if refreshes == 2 {
		out = append(out, hy(g.ms(80, 150), scenarios.Refresh, a))
	}
	out = append(out, hy(collect, scenarios.GC, a))
	g.c.emit("a", history.SigPublished, history.SigCollected)
	g.c.assign(t)
	g.c.emit(t, history.SigHydrating, history.SigHydrated)
	return out
}

// recoveryRelocation needs two standbys: the recovering copy and the relocation target.
func (g *gen) recoveryRelocation() []scenarios.Step {
	if len(g.c.standby) < 2 || g.c.primary != "a" {
		return nil
	}
	r := g.oneOf(g.c.standby)
	g.c.assign(r)
	t := g.oneOf(g.c.standby)
	after := func(w string, ev history.SignalKind, n int, a scenarios.Action, pr scenarios.Params) scenarios.Step {
		return scenarios.Step{Trigger: scenarios.TriggerAfter, Action: a, Params: pr,
			After: &scenarios.EventTrigger{Writer: w, Event: ev, Count: n}}
	}
	phase := draw(g.dice, []history.SignalKind{history.SigRecoveryStarted, history.SigEngineOpened})
	reloc := scenarios.Params{Writer: "a", Target: t}
	if g.chance(0.3) {
		reloc.AbortAt = history.AbortAfterTargetAcks
	}
	start := scenarios.Step{Trigger: scenarios.TriggerAt, At: time.Duration(100+10*g.r.IntN(40)) * time.Millisecond,
		Action: scenarios.Refresh, Params: scenarios.Params{Writer: "a"}}
	out := []scenarios.Step{
		start,
		after("a", history.SigPublished, 1, scenarios.Recover, scenarios.Params{Writer: r, From: "a"}),
		after(r, phase, 1, scenarios.Pause, scenarios.Params{Writer: r}),
		after(r, phase, 1, scenarios.Relocate, reloc),
		after(t, history.SigAcked, 1+g.r.IntN(4), scenarios.Resume, scenarios.Params{Writer: r}),
	}
	g.c.emit("a", history.SigPublished)
	g.c.handOff("a", t, reloc.AbortAt == history.AbortNone)
	g.c.emit(r, history.SigRecoveryStarted, history.SigEngineOpened, history.SigRecovered)
	g.c.emit(t, history.SigAcked)
	return out
}

// sameTermHydration relocates the primary with a prehydrating target and races the target's
// file fetch with one more publication and a collection; it needs a schedule without client
// traffic so that the publications are the schedule's own.
func (g *gen) sameTermHydration() []scenarios.Step {
	// The shape publishes once during the fetch, within the retention bound; another
	// publication from a later step would cross the bound the design documents (S23), where
	// the correct protocol loses a file too.
	t := g.quietPublisher()
	if t == "" {
		return nil
	}
	a := scenarios.Params{Writer: "a"}
	after := func(w string, ev history.SignalKind, n int, act scenarios.Action, pr scenarios.Params) scenarios.Step {
		return afterEvent(w, ev, n, 0, act, pr)
	}
	// Up to six sets before the relocation: past the retention window (two), so the source's
	// known and retained sets differ before the target hydrates.
	sets := 1 + g.r.IntN(6)
	out := g.publishSets(sets)
	out = append(out,
		after("a", history.SigPublished, sets, scenarios.Relocate, scenarios.Params{Writer: "a", Target: t, Prehydrate: true}),
		after(t, history.SigHydrating, 1, scenarios.Pause, scenarios.Params{Writer: t}),
		after(t, history.SigHydrating, 1, scenarios.Refresh, a),
		after("a", history.SigPublished, sets+1, scenarios.GC, a),
		after("a", history.SigCollected, 1, scenarios.Resume, scenarios.Params{Writer: t}))
	g.c.emit("a", history.SigPublished, history.SigCollected, history.SigTransferred, history.SigHandedOff, history.SigDrained)
	g.c.join(t, true)
	g.c.emit(t, history.SigHydrating, history.SigAdopted, history.SigHydrated)
	return out
}

// quietPublisher readies a shape whose reference-set publications are the schedule's own: no
// client traffic, and no refresh or collection drawn by the kinds. It returns the standby the
// shape acts on, "" when the cluster cannot take the shape.
func (g *gen) quietPublisher() string {
	if len(g.c.standby) == 0 || g.c.primary != "a" {
		return ""
	}
	g.quiet = true
	delete(g.weights, kRefresh)
	delete(g.weights, kGC)
	return g.oneOf(g.c.standby)
}

// publishSets has the primary publish sets reference sets: a refresh at a drawn moment, and
// one more after each publication.
func (g *gen) publishSets(sets int) []scenarios.Step {
	a := scenarios.Params{Writer: "a"}
	out := []scenarios.Step{{Trigger: scenarios.TriggerAt, At: time.Duration(100+10*g.r.IntN(20)) * time.Millisecond,
		Action: scenarios.Refresh, Params: a}}
	for n := 1; n < sets; n++ {
		out = append(out, afterEvent("a", history.SigPublished, n, 0, scenarios.Refresh, a))
	}
	return out
}

// afterEvent is a step that runs d after w's n-th ev.
func afterEvent(w string, ev history.SignalKind, n int, d time.Duration, act scenarios.Action, pr scenarios.Params) scenarios.Step {
	return scenarios.Step{Trigger: scenarios.TriggerAfter, Action: act, Params: pr,
		After: &scenarios.EventTrigger{Writer: w, Event: ev, Count: n, Delay: d}}
}
