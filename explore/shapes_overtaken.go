package explore

import (
	"fmt"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// sOvertakenSeal: a promoted standby has sealed its term and its restore read's listing of
// the translog metadata is held in flight, while a second standby is promoted right after the
// seal: a twin at the same term, which takes the fence object by arbitration, or a higher
// term, which sweeps it. The overtaker syncs before the held listing lands, so the reader's
// restore point is the overtaker's, at the reader's term or above: before it serves, the
// reader must find that its seal no longer holds (the key moved past its token, or is gone)
// and stand aside, or its generations would collide with the overtaker's. In a third of the
// schedules the read that checks the seal then fails (a 500 or a lost answer) once or twice
// and must be retried, not taken for a seal that holds; in another third the overtaker stops
// right after its first or second sync (stopOvertaker).
const sOvertakenSeal = "overtaken-seal"

func (g *gen) overtakenSeal() []scenarios.Step {
	if len(g.c.standby) < 2 {
		return nil
	}
	w := g.oneOf(g.c.standby)
	other := g.oneOf(remove(g.c.standby, w))
	term := g.c.newTerm()
	first := scenarios.Step{Action: scenarios.Promote, Params: g.promoteNow(w, term, false)}
	first.Trigger, first.At, first.After = g.incumbentTrigger()
	g.rules++
	hold := faults.Rule{Name: fmt.Sprintf("hold-restore-listing-%d", g.rules), Method: "GET",
		Key: "*/translog/metadata/metadata__", Nth: 1, Count: 1, Action: faults.Delay, Delay: g.ms(400, 900)}
	// Armed with the promotion: the listing is the restore read's first request.
	rule := scenarios.Step{Action: scenarios.HTTP, Params: scenarios.Params{Writer: w, Rule: hold},
		Trigger: first.Trigger, At: first.At, After: first.After}
	pr := g.promoteNow(other, term, true)
	if g.chance(0.35) {
		pr = g.promoteNow(other, g.c.newTerm(), false)
	}
	overtake := scenarios.Step{Action: scenarios.Promote, Params: pr, Trigger: scenarios.TriggerAfter,
		After: &scenarios.EventTrigger{Writer: w, Event: history.SigClaimed, Count: 1, Delay: g.ms(0, 40)}}
	if g.chance(0.5) {
		// Pinned: the listing lands once the overtaker has synced, not after a drawn hold.
		rule.Params.Until = &scenarios.EventTrigger{Writer: other, Event: history.SigSynced, Count: 1}
		rule.Params.Rule.Delay = 0
	}
	out := []scenarios.Step{first, rule, overtake}
	if g.fails.IntN(3) == 0 {
		// The seal's check is the reader's second read of its fence object (the claim's
		// verifying read is the first); it fails once or twice after the overtake.
		g.rules++
		r := faults.Rule{Name: fmt.Sprintf("fail-seal-check-%d", g.rules), Method: "GET", Key: "*fence__?*",
			Nth: 2, Count: 1 + g.fails.IntN(2), Action: faults.SyntheticStatus, Status: 500}
		if g.fails.IntN(2) == 0 {
			r.Name, r.Action, r.Status = fmt.Sprintf("lose-seal-check-%d", g.rules), faults.DropResponse, 0
		}
		out = append(out, scenarios.Step{Action: scenarios.HTTP, Params: scenarios.Params{Writer: w, Rule: r},
			Trigger: first.Trigger, At: first.At, After: first.After})
	} else if st, ok := g.stopOvertaker(other); ok {
		out = append(out, st)
	}
	return out
}

// sOvertakenHandoff: the primary relocates to a standby and, at one of the handoff's steps,
// a third copy is promoted: a twin at the primary's term (which takes the fence object by
// arbitration) or a higher term (which sweeps it).
//
//   - Before the transfer: the source's transfer write is held once it has drained and the
//     overtaker claims meanwhile; the transfer then meets a moved or vanished key and the
//     source must stand aside without handing anything to its target.
//   - Before the revert: the relocation aborts before the target writes and the overtaker
//     claims once the source has transferred; the source's revert meets the overtaker's
//     object and must stand down, not take it back.
//   - After the adoption: the target adopted the chain and the overtaker claims after its
//     first acknowledgements; the target must find out at its next fence write.
//
// No copy is named to end serving: who does depends on the race the overtaker wins.
const sOvertakenHandoff = "overtaken-handoff"

func (g *gen) overtakenHandoff() []scenarios.Step {
	if g.c.primary != "a" || len(g.c.standby) < 2 {
		return nil
	}
	t := g.oneOf(g.c.standby)
	other := g.oneOf(remove(g.c.standby, t))
	rel := scenarios.Params{Writer: "a", Target: t}
	at := g.r.IntN(3)
	if at == 1 {
		rel.AbortAt = history.AbortBeforeTargetWrites
	}
	st := scenarios.Step{Action: scenarios.Relocate, Params: rel, Trigger: scenarios.TriggerAfter,
		After: &scenarios.EventTrigger{Writer: "a", Event: history.SigAcked, Count: 1 + g.r.IntN(4)}}
	g.minDuration = handoffDuration
	term := g.c.terms[0]
	g.c.handOff("a", t, at != 1)
	pr := g.promoteNow(other, term, true)
	if g.chance(0.4) {
		pr = g.promoteNow(other, g.c.newTerm(), false)
	}
	overtake := scenarios.Step{Action: scenarios.Promote, Params: pr, Trigger: scenarios.TriggerAfter}
	out := []scenarios.Step{st}
	switch at {
	case 0:
		g.rules++
		r := faults.Rule{Name: fmt.Sprintf("hold-transfer-%d", g.rules), Method: "PUT", Key: "*fence__*",
			Header: "If-Match", Nth: 1, Count: 1, Action: faults.Delay, Delay: g.ms(300, 700)}
		drained := &scenarios.EventTrigger{Writer: "a", Event: history.SigDrained, Count: 1}
		hold := scenarios.Params{Writer: "a", Rule: r}
		if g.chance(0.5) {
			// Pinned: the transfer lands once the overtaker has claimed.
			hold.Until, hold.Rule.Delay = &scenarios.EventTrigger{Writer: other, Event: history.SigClaimed, Count: 1}, 0
		}
		out = append(out, scenarios.Step{Action: scenarios.HTTP, Trigger: scenarios.TriggerAfter,
			Params: hold, After: drained})
		overtake.After = &scenarios.EventTrigger{Writer: "a", Event: history.SigDrained, Count: 1, Delay: g.ms(0, 40)}
	case 1:
		overtake.After = &scenarios.EventTrigger{Writer: "a", Event: history.SigTransferred, Count: 1, Delay: g.ms(0, 300)}
	default:
		overtake.After = &scenarios.EventTrigger{Writer: t, Event: history.SigAcked, Count: 1 + g.r.IntN(3), Delay: g.ms(0, 40)}
	}
	return append(out, overtake)
}
