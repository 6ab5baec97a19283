package explore

import (
	"time"

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
)

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
	if len(g.c.standby) == 0 || g.c.primary != "a" {
		return nil
	}
	g.quiet = true
	// The shape publishes once during the fetch, within the retention bound; another
	// publication from a later step would cross the bound the design documents (S23), where
	// the correct protocol loses a file too.
	delete(g.weights, kRefresh)
	delete(g.weights, kGC)
	t := g.oneOf(g.c.standby)
	a := scenarios.Params{Writer: "a"}
	after := func(w string, ev history.SignalKind, n int, act scenarios.Action, pr scenarios.Params) scenarios.Step {
		return scenarios.Step{Trigger: scenarios.TriggerAfter, Action: act, Params: pr,
			After: &scenarios.EventTrigger{Writer: w, Event: ev, Count: n}}
	}
	sets := 1 + g.r.IntN(3)
	out := []scenarios.Step{{Trigger: scenarios.TriggerAt, At: time.Duration(100+10*g.r.IntN(20)) * time.Millisecond,
		Action: scenarios.Refresh, Params: a}}
	for n := 1; n < sets; n++ {
		out = append(out, after("a", history.SigPublished, n, scenarios.Refresh, a))
	}
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
