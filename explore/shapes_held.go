package explore

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// sHeldFenceRead: a promoted standby's read of its new fence object is held in flight (the
// read that verifies its claim, or the read of its first re-adoption) while a second standby
// is promoted: a twin at the same term, which takes the object by arbitration, or a higher
// term, which sweeps it. When the held read lands the object belongs to someone else or is
// gone. The reader must stand aside and touch nothing: a claim that withdraws an object it
// lost deletes the twin's, and a re-adoption that re-creates a vanished object brings an old
// token back to life. Those moments last as long as one request, which a hold makes wide.
//
// In a third of the schedules that hold the verifying read, the hold falls instead on the
// claim's final listing, the step after it: the claim has passed its verification and is
// overtaken before it returns. A higher term is then seen by that listing (the claim
// withdraws); a twin is not (the claim returns after the twin took the object over,
// re-adopted it and acknowledged, and only the reader's own re-adoption finds it lost).
//
// In another third the hold falls on the listing that finds the keys to sweep: the claim has
// created its object and stalls before its sweep, so a higher term that claims meanwhile
// finds two lower terms alive, the incumbent's (still acknowledging) and the stalled one's,
// and must sweep both: a sweep that takes only the term just below its own leaves the
// incumbent acknowledging under the new term's feet.
const sHeldFenceRead = "held-fence-read"

// sweepListing and claimListing are the claim's listings of the fence keys among a promoted
// standby's listings: the first refuses a higher term, the second (sweepListing) finds the
// keys to sweep, the third (claimListing) re-checks both after the verifying read.
const (
	sweepListing = 2
	claimListing = 3
)

// heldFenceRead needs two standbys: the reader whose read is held and the one that overtakes it.
func (g *gen) heldFenceRead() []scenarios.Step {
	if len(g.c.standby) < 2 {
		return nil
	}
	w := g.oneOf(g.c.standby)
	other := g.oneOf(remove(g.c.standby, w))
	twin := g.chance(0.5)
	// The first GET of the fence object verifies the claim; the second is the first
	// re-adoption's read (after the first sync), which a higher term's sweep can overtake.
	nth := 1
	if !twin && g.chance(0.6) {
		nth = 2
	}
	hold := g.ms(250, 600)
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("hold-fence-read-%d", g.rules), Method: "GET", Key: "*fence__?*",
		Nth: nth, Count: 1, Action: faults.Delay, Delay: hold}
	if nth == 1 {
		// The listing is matched on the prefix it lists, which names no term.
		switch g.stalls.IntN(3) {
		case 0:
			r.Name, r.Key, r.Nth = fmt.Sprintf("hold-final-listing-%d", g.rules), "*fence__", claimListing
		case 1:
			// A twin sweeps nothing: the claim stalled before its sweep is overtaken by a
			// higher term.
			r.Name, r.Key, r.Nth = fmt.Sprintf("hold-sweep-listing-%d", g.rules), "*fence__", sweepListing
			twin = false
		}
	}
	if k := g.fails.IntN(4); nth == 1 && r.Key == "*fence__?*" && k < 2 {
		// Half the time the verifying read is held while the other copy overtakes, and then
		// fails (a 500, or its answer lost): a claim must not take a read it could not make
		// for a verified key.
		r.Name = fmt.Sprintf("fail-fence-read-%d", g.rules)
		r.Action, r.Status = faults.SyntheticStatus, 500
		if k == 1 {
			r.Action, r.Status = faults.DropResponse, 0
		}
	}
	rule := scenarios.Step{Action: scenarios.HTTP, Params: scenarios.Params{Writer: w, Rule: r}}
	rule.Trigger, rule.At, rule.After = g.incumbentTrigger()
	term := g.c.newTerm()
	first := g.later(rule, scenarios.Promote, g.promoteNow(w, term, false), 0)
	var overtake scenarios.Step
	if nth != 2 {
		// The verifying read (or a listing around it) is part of the promotion, so the
		// reader's history.SigPromoted comes only after the hold: the overtaking promotion is timed
		// from the reader's own start.
		pr := g.promoteNow(other, g.c.newTerm(), false)
		if twin {
			pr = g.promoteNow(other, term, true)
		}
		overtake = g.later(rule, scenarios.Promote, pr, g.ms(20, int(hold.Milliseconds())/2))
	} else {
		// The first re-adoption's read comes after the reader's first sync, past its promotion.
		overtake = scenarios.Step{Action: scenarios.Promote, Trigger: scenarios.TriggerAfter,
			After:  &scenarios.EventTrigger{Writer: w, Event: history.SigPromoted, Count: 1, Delay: g.ms(50, int(hold.Milliseconds())-100)},
			Params: g.promoteNow(other, g.c.newTerm(), false)}
	}
	out := []scenarios.Step{rule, first, overtake}
	if st, ok := g.stopOvertaker(other); ok {
		out = append(out, st)
	}
	return out
}

// stopOvertaker: in a third of the held reads, the copy that overtook stops right after its
// first or second sync: it crashes, freezes for a while, or a third standby takes over at a
// higher term. Whatever the overtaker acknowledged must survive the reader it overtook and
// whoever comes next. Drawn from a stream of its own after the shape's other draws; a
// takeover takes a term, so the terms of later promotions move up by one.
func (g *gen) stopOvertaker(w string) (scenarios.Step, bool) {
	if g.stops.IntN(3) != 0 {
		return scenarios.Step{}, false
	}
	st := scenarios.Step{Trigger: scenarios.TriggerAfter, Params: scenarios.Params{Writer: w},
		After: &scenarios.EventTrigger{Writer: w, Event: history.SigSynced, Count: 1 + g.stops.IntN(2)}}
	if g.o.System != nil {
		st.After.Event = history.SigAcked // a system's node reports its acks, not its syncs
	}
	rest := g.c.standby
	k := g.stops.IntN(3)
	if k == 2 && len(rest) == 0 {
		k = 1 // no standby left to take over: a freeze
	}
	if k == 1 && g.o.System != nil && !g.o.System.Pause {
		k = 0 // a node the bench cannot pause: a crash
	}
	switch k {
	case 0:
		st.Action = scenarios.Crash
		g.c.crash(w)
	case 1:
		st.Action, st.For = scenarios.Pause, time.Duration(200+10*g.stops.IntN(40))*time.Millisecond
	default:
		third := rest[g.stops.IntN(len(rest))]
		st.Action, st.Params = scenarios.Promote, g.promoteNow(third, g.c.newTerm(), false)
	}
	g.stopped = true
	return st, true
}

// sHandoffResolves: the primary relocates to a standby, sometimes aborting before the target
// writes (its answer lost in some seeds) or after the target acknowledged, and nothing else
// happens: the schedule names the copy that must end serving (the source after an early
// abort, the target otherwise), so HandoffResolves judges it. A source that takes its chain
// back but never serves again fences, stands down and loses nothing; only this catches it.
const sHandoffResolves = "handoff-resolves"

// handoffDuration is the shortest schedule that lets an early relocation abort and the source
// serve again: drain, the 2 s answer timeout, the revert and a few syncs.
const handoffDuration = 4 * time.Second

// handoffResolves is the schedule's only step; g.sole keeps the kinds from adding others,
// since any fault could rightly change who ends serving.
func (g *gen) handoffResolves() []scenarios.Step {
	if g.c.primary != "a" {
		return nil
	}
	t := g.oneOf(g.c.standby)
	// An early abort twice as often as the others: its transfer and revert are where a lost
	// answer or a failed read-back leaves the source's own write to be recognised.
	pr := scenarios.Params{Writer: "a", Target: t, AbortAt: draw(g.dice, []history.AbortPoint{history.AbortNone,
		history.AbortBeforeTargetWrites, history.AbortBeforeTargetWrites, history.AbortAfterTargetAcks})}
	g.serving = t
	if pr.AbortAt == history.AbortBeforeTargetWrites {
		pr.LoseHandoff = g.chance(0.5)
		g.serving = "a"
	}
	// An event trigger, early: the shrinker keeps an event-triggered schedule's length, and an
	// abort needs it, since the source gives up only after the 2 s answer timeout.
	st := scenarios.Step{Action: scenarios.Relocate, Params: pr, Trigger: scenarios.TriggerAfter,
		After: &scenarios.EventTrigger{Writer: "a", Event: history.SigAcked, Count: 1 + g.r.IntN(4)}}
	g.minDuration = handoffDuration
	out := []scenarios.Step{st}
	if pr.AbortAt == history.AbortBeforeTargetWrites && g.chance(0.7) {
		// The answer of the source's next fence write is lost: once it has drained that write
		// is the transfer, which applied, and the source must find its own write (the recorded
		// allocation) before it reverts; once it has transferred it is the revert, which
		// applied too, and the source must find its own write before it stands down.
		on, what, paired := history.SigDrained, "transfer", 0.6
		if g.chance(0.5) {
			// A lost revert answer alone is resolved by the read-back; with the read-back
			// failing, the retried revert meets its own write: pair them more often.
			on, what, paired = history.SigTransferred, "revert", 0.8
		}
		g.rules++
		r := faults.Rule{Name: fmt.Sprintf("drop-%s-answer-%d", what, g.rules), Method: "PUT", Key: "*fence__*",
			Header: "If-Match", Nth: 1, Count: 1, Action: faults.DropResponse}
		after := &scenarios.EventTrigger{Writer: "a", Event: on, Count: 1}
		out = append(out, scenarios.Step{Action: scenarios.HTTP, Trigger: scenarios.TriggerAfter,
			Params: scenarios.Params{Writer: "a", Rule: r}, After: after})
		if g.chance(paired) {
			// And the read that would tell whether it landed fails too: the retried write is
			// refused by its own landed write, which the source must recognise as its own.
			g.rules++
			rr := faults.Rule{Name: fmt.Sprintf("fence-read-fails-%d", g.rules), Method: "GET", Key: "*fence__?*",
				Nth: 1, Count: 1, Action: faults.SyntheticStatus, Status: 500}
			out = append(out, scenarios.Step{Action: scenarios.HTTP, Trigger: scenarios.TriggerAfter,
				Params: scenarios.Params{Writer: "a", Rule: rr}, After: after})
		}
	}
	g.c.handOff("a", t, false)
	g.c.primary = g.serving
	g.sole = true
	return out
}

// sHeldMetadata: the incumbent's next translog metadata upload is held in flight while a
// standby is promoted at a higher term: the incumbent's CAS may only follow the upload, so it
// meets the successor's sweep and nothing it held is acknowledged. A CAS issued next to the
// upload is accepted before the sweep and acknowledges ops whose metadata lands after the
// successor read its restore point (S2, a straddling upload).
const sHeldMetadata = "held-metadata-upload"

func (g *gen) heldMetadata() []scenarios.Step {
	if g.c.primary != "a" {
		return nil
	}
	w := g.oneOf(g.c.standby)
	hold := g.ms(500, 900)
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("hold-metadata-%d", g.rules), Method: "PUT", Key: "*/translog/metadata/metadata__*",
		Nth: 1, Count: 1, Action: faults.Delay, Delay: hold}
	rule := scenarios.Step{Action: scenarios.HTTP, Params: scenarios.Params{Writer: "a", Rule: r}}
	rule.Trigger, rule.At, rule.After = g.incumbentTrigger()
	// The upload leaves at the incumbent's next sync, within a sync interval of the rule.
	return []scenarios.Step{rule, g.later(rule, scenarios.Promote, g.promoteNow(w, g.c.newTerm(), false), g.ms(150, 350))}
}

// sStalledWrite: after the owner's k-th acknowledgement its next writes are held in flight,
// and a moment later the owner itself freezes for a second or more, while the writes stay
// held a second or more past its waking: a lease or election the owner's freeze outlasts
// lets another node take over, and the held writes land after it did. Both steps wait for
// the owner's own acknowledgements, so the race is pinned by the protocol, not by the
// machine's speed. Drawn only for a system that elects its owner itself and whose nodes can
// be paused (its owner is the schedule's first primary).
const sStalledWrite = "stalled-write"

func (g *gen) stalledWrite() []scenarios.Step {
	w := g.c.primary
	k := 3 + g.r.IntN(10)
	freeze := g.ms(1000, 3000)
	hold := freeze + g.ms(1000, 3000)
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("stall-writes-%d", g.rules), Method: "PUT", Key: "*", Nth: 1, Count: 3,
		Action: faults.Delay, Delay: hold}
	rule := scenarios.Step{Action: scenarios.HTTP, Params: scenarios.Params{Writer: w, Rule: r}, Trigger: scenarios.TriggerAfter,
		After: &scenarios.EventTrigger{Writer: w, Event: history.SigAcked, Count: k}}
	pause := scenarios.Step{Action: scenarios.Pause, Params: scenarios.Params{Writer: w}, For: freeze, Trigger: scenarios.TriggerAfter,
		After: &scenarios.EventTrigger{Writer: w, Event: history.SigAcked, Count: k, Delay: g.ms(50, 300)}}
	return []scenarios.Step{rule, pause}
}
