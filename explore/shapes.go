package explore

import (
	"fmt"
	"slices"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// A shape is a small, fixed arrangement of steps around one dangerous moment the protocol
// names, with its parameters drawn: the kinds alone reach these moments only by rare luck.
// Shapes are drawn first, on the initial cluster (a primary "a" at the first term and its
// standbys), so they know every writer's role; the kinds' steps follow.
const (
	// sFailedSweep: a standby's promotion sweep reports a per-key failure for the
	// incumbent's fence object, which survives, while the incumbent keeps writing.
	sFailedSweep = "failed-sweep"
	// sUnreadable: the incumbent cannot read the fence (listings answer 5xx) and keeps
	// publishing and collecting segments while a successor hydrates slowly.
	sUnreadable = "unreadable-fence"
	// sTwinContest: a standby is promoted at the incumbent's own term, and the incumbent's
	// next CAS after that meets a 409, a lost answer or a 500.
	sTwinContest = "twin-contest"
	// sTwinArbitration: a standby is promoted at the incumbent's own term, and its own
	// arbitration of the equal-term key meets a fault: the read of the key, or the CAS onto
	// it, is refused, denied, failed, lost, held or misdirected.
	sTwinArbitration = "twin-arbitration"
)

var shapeNames = []string{sFailedSweep, sUnreadable, sTwinContest, sTwinArbitration, sRecoveryRelocation, sSameTermHydration, sHeldFenceRead, sHandoffResolves, sHeldMetadata, sPendingPublish, sOvertakenSeal, sOvertakenHandoff}

var shapeBuilders = map[string]func(g *gen) []scenarios.Step{
	sFailedSweep:        (*gen).failedSweep,
	sUnreadable:         (*gen).unreadableFence,
	sTwinContest:        (*gen).twinContest,
	sTwinArbitration:    (*gen).twinArbitration,
	sRecoveryRelocation: (*gen).recoveryRelocation,
	sSameTermHydration:  (*gen).sameTermHydration,
	sHeldFenceRead:      (*gen).heldFenceRead,
	sHandoffResolves:    (*gen).handoffResolves,
	sHeldMetadata:       (*gen).heldMetadata,
	sPendingPublish:     (*gen).pendingPublish,
	sStalledWrite:       (*gen).stalledWrite,
	sOvertakenSeal:      (*gen).overtakenSeal,
	sOvertakenHandoff:   (*gen).overtakenHandoff,
}

// maxSteps bounds a schedule's steps: a shape and a few kinds' steps after it.
const maxSteps = 12

// drawShape draws at most one shape for the seed (with probability one half, when the
// cluster has a standby) and returns its steps.
func (g *gen) drawShape() []scenarios.Step {
	if g.clean || len(g.c.standby) == 0 || g.chance(0.5) {
		return nil
	}
	names := shapeNames
	if l := g.o.System; l != nil {
		if names = l.shapes(); len(names) == 0 {
			return nil
		}
	}
	g.shapeOf = g.oneOf(names)
	steps := shapeBuilders[g.shapeOf](g)
	if len(steps) == 0 {
		g.shapeOf = "" // the cluster cannot take this shape
	}
	return steps
}

// promoteNow records that w is promoted by a shape at term (a twin when twin is true).
func (g *gen) promoteNow(w string, term int64, twin bool) scenarios.Params {
	g.c.promote(w)
	return scenarios.Params{Writer: w, Term: term, Twin: twin}
}

// incumbentTrigger fires at one of the incumbent's early acks, or at an early time.
func (g *gen) incumbentTrigger() (string, time.Duration, *scenarios.EventTrigger) {
	if g.chance(0.5) {
		return scenarios.TriggerAt, time.Duration(200+10*g.r.IntN(60)) * time.Millisecond, nil
	}
	return scenarios.TriggerAfter, 0, &scenarios.EventTrigger{Writer: "a", Event: history.SigAcked, Count: 1 + g.r.IntN(8)}
}

// failedSweep: DeleteObjects answers 200 with a per-key failure for the incumbent's key on
// the promoted standby's path (once or twice), then the standby is promoted. The claim must
// see the survivor and retry the whole claim; the incumbent keeps acking until it is swept.
func (g *gen) failedSweep() []scenarios.Step {
	w := g.oneOf(g.c.standby)
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("sweep-fails-%d", g.rules), Method: "POST", Key: "*fence__*",
		Nth: 1, Count: 1 + g.r.IntN(2), Action: faults.FailDeleteKeys}
	st := scenarios.Step{Action: scenarios.HTTP, Params: scenarios.Params{Writer: w, Rule: r}}
	st.Trigger, st.At, st.After = g.incumbentTrigger()
	pr := g.promoteNow(w, g.c.newTerm(), false)
	return []scenarios.Step{st, g.later(st, scenarios.Promote, pr, g.ms(1, 100))}
}

// twinContest: a standby is promoted at the incumbent's term; once its promotion is done,
// the incumbent's next If-Match write meets a 409, a lost answer or a 500. A protocol that
// trusts the answer, or adopts whatever the key holds, acks next to the twin.
//
// For accept-unenforced-store, the one variant whose schedules may strip preconditions, the
// incumbent's next If-Match writes are as often applied without their condition, as a store
// that ignores If-Match would, and the rival is as often promoted at a new term: the
// stripped write then lands on a key the rival swept or moved on.
func (g *gen) twinContest() []scenarios.Step {
	w := g.oneOf(g.c.standby)
	acts := []string{"status-409", "status-409", string(faults.DropResponse), "status-500"}
	term, twin := g.c.terms[0], true
	if g.o.Variant == unenforcedVariant && g.chance(0.5) {
		acts = []string{string(faults.StripConditions)}
		if g.chance(0.5) {
			term, twin = g.c.newTerm(), false
		}
	}
	pr := g.promoteNow(w, term, twin)
	st := scenarios.Step{Action: scenarios.Promote, Params: pr}
	st.Trigger, st.At, st.After = g.incumbentTrigger()
	act := g.oneOf(acts)
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("%s-after-twin-%d", act, g.rules), Method: "PUT", Key: "*fence__*",
		Header: "If-Match", Nth: 1, Count: 1 + g.r.IntN(2)}
	setAction(&r, act, nil) // no hold among the acts
	g.strip = g.strip || r.Action == faults.StripConditions
	ev := draw(g.dice, []history.SignalKind{history.SigClaimed, history.SigPromoted})
	rule := scenarios.Step{Action: scenarios.HTTP, Trigger: scenarios.TriggerAfter,
		Params: scenarios.Params{Writer: "a", Rule: r},
		After:  &scenarios.EventTrigger{Writer: w, Event: ev, Count: 1, Delay: g.ms(0, 30)}}
	return []scenarios.Step{st, rule}
}

// twinArbitration: a standby is promoted at the incumbent's term, and the first read of the
// equal-term key or the first CAS onto it on the standby's own path (its arbitration) meets a
// fault: a 412 (as when the incumbent moved the key between the read and the write), a 403, a
// 404, a 409 or a 5xx, a request or answer lost, a hold of up to 300 ms, or (on sim) another
// object's content for the read. A claim that takes a refusal for a win, a win for a refusal,
// a denial for an unknown outcome or an unknown outcome for a verdict acks beside the
// incumbent, or gives up on a key it holds.
//
// Otherwise (one time in three, when a third copy stands by) the twin wins its arbitration
// and its final listing of the fence keys (its third: before the create, before the sweep,
// after the read-back) is held until the third copy, promoted at a higher term after it,
// has claimed: the listing finds the higher term, and the twin is fenced without touching
// the key, which it won by arbitration and never withdraws.
func (g *gen) twinArbitration() []scenarios.Step {
	w := g.oneOf(g.c.standby)
	others := remove(slices.Clone(g.c.standby), w)
	st := scenarios.Step{Action: scenarios.HTTP}
	st.Trigger, st.At, st.After = g.incumbentTrigger()
	g.rules++
	if len(others) > 0 && g.chance(0.35) {
		o := g.oneOf(others)
		st.Params = scenarios.Params{Writer: w, Rule: faults.Rule{Name: fmt.Sprintf("hold-twin-relist-%d", g.rules),
			Method: "GET", Key: "*fence__", Nth: 3, Count: 1, Action: faults.Delay},
			Until: &scenarios.EventTrigger{Writer: o, Event: history.SigClaimed, Count: 1}}
		d := g.ms(1, 100)
		twin := g.later(st, scenarios.Promote, g.promoteNow(w, g.c.terms[0], true), d)
		return []scenarios.Step{st, twin, g.later(st, scenarios.Promote, g.promoteNow(o, g.c.newTerm(), false), d+g.ms(20, 200))}
	}
	// "?" keeps the rule off the listings of the fence keys, matched on their prefix.
	r := faults.Rule{Key: "*fence__?*", Nth: 1, Count: 1 + g.r.IntN(2)}
	// A denial twice as often as any other answer: the only one the claim must not retry.
	acts := []string{"status-403", "status-403", "status-404", "status-500", "status-503", string(faults.DropResponse)}
	if g.chance(0.6) {
		r.Method, r.Header = "PUT", "If-Match"
		acts = append(acts, "status-412", "status-412", "status-409", string(faults.DropRequest))
	} else {
		r.Method = "GET"
		acts = append(acts, string(faults.Delay))
		if g.o.Misdirect && g.o.System == nil {
			acts = append(acts, string(faults.Misdirect))
		}
	}
	act := g.oneOf(acts)
	r.Name = fmt.Sprintf("%s-twin-arbitration-%d", act, g.rules)
	setAction(&r, act, func() time.Duration { return g.ms(10, 300) })
	st.Params = scenarios.Params{Writer: w, Rule: r}
	return []scenarios.Step{st, g.later(st, scenarios.Promote, g.promoteNow(w, g.c.terms[0], true), g.ms(1, 100))}
}

// unreadableFence: the incumbent publishes three reference sets, then its fence listings
// fail (5xx) while a standby is promoted and hydrates slowly; right after the standby's
// restore read the incumbent, which has not noticed (the schedule has no client traffic, so
// it writes no fence), publishes twice more and collects. Publishing fails open, collection
// must fail closed. The listing failures start before the publications in some seeds, so a
// publish gate that fails closed silences the healthy incumbent.
func (g *gen) unreadableFence() []scenarios.Step {
	g.quiet = true
	w := g.oneOf(g.c.standby)
	t0 := time.Duration(100+10*g.r.IntN(20)) * time.Millisecond
	at := func(d time.Duration, a scenarios.Action, pr scenarios.Params) scenarios.Step {
		return scenarios.Step{Trigger: scenarios.TriggerAt, At: t0 + d, Action: a, Params: pr}
	}
	a := scenarios.Params{Writer: "a"}
	g.c.emit("a", history.SigPublished, history.SigCollected)
	g.rules++
	status := []int{500, 503}[g.r.IntN(2)]
	fail := faults.Rule{Name: fmt.Sprintf("fence-unreadable-%d", g.rules), Method: "GET", Key: "*fence__*",
		Action: faults.SyntheticStatus, Status: status}
	failAt := 400 * time.Millisecond
	if g.chance(0.4) {
		failAt = 0
	}
	g.rules++
	slow := faults.Rule{Name: fmt.Sprintf("slow-hydration-%d", g.rules), Method: "GET", Key: "*/segments/data/*",
		Action: faults.Delay, Delay: g.ms(300, 900)}
	out := []scenarios.Step{
		at(failAt, scenarios.HTTP, scenarios.Params{Writer: "a", Rule: fail}),
		at(50*time.Millisecond, scenarios.Refresh, a),
		at(200*time.Millisecond, scenarios.Refresh, a),
		at(350*time.Millisecond, scenarios.Refresh, a),
		at(450*time.Millisecond, scenarios.HTTP, scenarios.Params{Writer: w, Rule: slow}),
	}
	pr := g.promoteNow(w, g.c.newTerm(), false)
	out = append(out, at(500*time.Millisecond, scenarios.Promote, pr))
	for _, d := range []time.Duration{g.ms(5, 30), g.ms(40, 90), g.ms(150, 450)} {
		act := scenarios.Refresh
		if len(out) == 8 {
			act = scenarios.GC
		}
		out = append(out, scenarios.Step{Trigger: scenarios.TriggerAfter, Action: act, Params: a,
			After: &scenarios.EventTrigger{Writer: w, Event: history.SigRestoreRead, Count: 1, Delay: d}})
	}
	return out
}
