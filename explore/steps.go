package explore

import (
	"fmt"
	"maps"
	"strings"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// builders draw the steps of one kind; ok is false when the schedule so far leaves the kind
// nothing to act on (no standby to promote). room is how many steps may still be added.
var builders = map[string]func(g *gen, room int) ([]scenarios.Step, bool){
	kPromote:   (*gen).promote,
	kPartition: (*gen).partition,
	kOneWay:    func(g *gen, _ int) ([]scenarios.Step, bool) { return g.window1(scenarios.OneWay), true },
	kReset:     func(g *gen, _ int) ([]scenarios.Step, bool) { return g.window1(scenarios.Reset), true },
	kLatency:   (*gen).latency,
	kFlap:      (*gen).flap,
	kPause:     (*gen).pause,
	kCrash:     (*gen).crash,
	kRelocate:  (*gen).relocate,
	kGC:        func(g *gen, _ int) ([]scenarios.Step, bool) { return g.segmentWork(scenarios.GC, history.SigCollected) },
	kRefresh: func(g *gen, _ int) ([]scenarios.Step, bool) {
		return g.segmentWork(scenarios.Refresh, history.SigPublished)
	},
	kRecover:  (*gen).recoverCopy,
	kHTTP:     (*gen).http,
	kDrive:    (*gen).driveOffline,
	kStoreRst: (*gen).storeRestart,
}

// drawStep draws one kind from the swarm's weights and adds its steps, if it has any.
func (g *gen) drawStep(room int) {
	if len(g.weights) == 0 {
		return // a shape took the only kinds the seed enabled
	}
	kind := g.pick(g.weights)
	if steps, ok := builders[kind](g, room); ok {
		g.steps = append(g.steps, steps...)
	}
}

// base are the events every writer holding a term emits.
var base = []history.SignalKind{history.SigClaimed, history.SigSynced, history.SigAcked}

// trigger draws when a step fires: mostly at a protocol event of a writer holding a term
// (weighted toward the dangerous moments its earlier steps create), sometimes at a time.
func (g *gen) trigger() (string, time.Duration, *scenarios.EventTrigger) {
	if len(g.c.active) == 0 || g.chance(0.3) {
		return scenarios.TriggerAt, g.at(), nil
	}
	w := g.oneOf(g.c.active)
	weights := map[history.SignalKind]int{history.SigClaimed: 2, history.SigSynced: 3, history.SigAcked: 3}
	for _, e := range g.c.events[w] {
		weights[e] += 3
	}
	if l := g.o.System; l != nil {
		maps.DeleteFunc(weights, func(e history.SignalKind, _ int) bool { return !l.event(e) })
	}
	ev := pick(g.dice, weights)
	t := &scenarios.EventTrigger{Writer: w, Event: ev, Count: 1}
	if ev == history.SigAcked || ev == history.SigSynced || ev == history.SigPublished {
		t.Count = 1 + g.r.IntN(5)
	}
	if g.chance(0.5) {
		t.Delay = g.ms(1, 200)
	}
	return scenarios.TriggerAfter, 0, t
}

// at draws a time in the first four fifths of the schedule, in 10ms steps.
func (g *gen) at() time.Duration {
	hi := int(g.o.Duration*4/5/time.Millisecond) / 10
	if hi < 10 {
		hi = 10
	}
	return time.Duration(10*(10+g.r.IntN(hi-9))) * time.Millisecond
}

func (g *gen) step(a scenarios.Action, pr scenarios.Params) scenarios.Step {
	st := scenarios.Step{Action: a, Params: pr}
	st.Trigger, st.At, st.After = g.trigger()
	if st.At > g.o.Duration {
		st.At = g.o.Duration
	}
	return st
}

// later is a step that fires d after st does, on the same trigger.
func (g *gen) later(st scenarios.Step, a scenarios.Action, pr scenarios.Params, d time.Duration) scenarios.Step {
	out := scenarios.Step{Trigger: st.Trigger, Action: a, Params: pr}
	if st.After != nil {
		t := *st.After
		t.Delay += d
		out.After = &t
	} else {
		out.At = min(st.At+d, g.o.Duration)
	}
	return out
}

// target draws a writer for a network or protocol fault: one holding a term if any is left,
// else the last primary.
func (g *gen) target() string { return g.c.target(g.dice) }

func (g *gen) window1(a scenarios.Action) []scenarios.Step {
	st := g.step(a, scenarios.Params{Writer: g.target()})
	st.For = g.window()
	return []scenarios.Step{st}
}

func (g *gen) partition(int) ([]scenarios.Step, bool) {
	st := g.step(scenarios.Partition, scenarios.Params{Writer: g.target(), Mode: g.oneOf([]string{"refuse", "blackhole"})})
	st.For = g.window()
	return []scenarios.Step{st}, true
}

func (g *gen) latency(int) ([]scenarios.Step, bool) {
	st := g.step(scenarios.Latency, scenarios.Params{Writer: g.target(), Delay: g.ms(5, 300)})
	st.For = g.window()
	return []scenarios.Step{st}, true
}

func (g *gen) flap(int) ([]scenarios.Step, bool) {
	st := g.step(scenarios.Flap, scenarios.Params{Writer: g.target(), On: g.ms(20, 200), Off: g.ms(20, 200)})
	st.For = g.ms(200, 1000)
	return []scenarios.Step{st}, true
}

// pause freezes a writer for a window, or until a later resume step.
func (g *gen) pause(room int) ([]scenarios.Step, bool) {
	st := g.step(scenarios.Pause, scenarios.Params{Writer: g.target()})
	if room >= 2 && g.chance(0.4) {
		return []scenarios.Step{st, g.later(st, scenarios.Resume, st.Params, g.window())}, true
	}
	st.For = g.window()
	return []scenarios.Step{st}, true
}

// promote gives a standby a higher term, or sometimes the term a writer already holds (an
// equal-term twin).
func (g *gen) promote(int) ([]scenarios.Step, bool) {
	if len(g.c.standby) == 0 {
		return nil, false
	}
	w := g.oneOf(g.c.standby)
	pr := scenarios.Params{Writer: w, Term: g.c.newTerm()}
	if g.chance(0.15) && (g.o.System == nil || g.o.System.Twin) {
		pr.Term, pr.Twin = g.c.terms[g.r.IntN(len(g.c.terms))], true
	}
	st := g.step(scenarios.Promote, pr)
	g.c.promote(w)
	return []scenarios.Step{st}, true
}

// readFault sometimes (three schedules in ten) puts a rule, from the start, on the path of a
// standby the schedule promotes or recovers, that hits its first reads of one kind of file
// (translog metadata, .tlog, segment reference sets, segment data; the segment kinds twice as
// often when the schedule refreshes): the reads of the restore point it starts its term from,
// of its hydration, or of its recovery. A restore read that took a failed read for an empty
// one would start the new term without the ops its predecessor acknowledged, a hydration that
// did so without the segments published before, and the other request rules, spread over
// every request, meet those few reads too seldom. A third of a promoted copy's .tlog faults
// answer 404, a store hiding a file the restore point names: the promotion must refuse to
// serve from the broken lineage. It is drawn from a stream of its own after
// the rest of the schedule, so the other draws of a seed stay as they were; a shape that is
// the whole schedule gets none.
func (g *gen) readFault(steps []scenarios.Step) (scenarios.Step, bool) {
	var ws []string
	promoted := map[string]bool{}
	refreshes := false
	for _, st := range steps {
		switch st.Action {
		case scenarios.Promote, scenarios.Recover:
			ws = append(ws, st.Params.Writer)
			promoted[st.Params.Writer] = promoted[st.Params.Writer] || st.Action == scenarios.Promote
		case scenarios.Refresh:
			refreshes = true
		}
	}
	if g.sole || len(ws) == 0 || g.o.System != nil || g.reads.Float64() >= 0.3 {
		return scenarios.Step{}, false
	}
	w := ws[g.reads.IntN(len(ws))]
	// The files themselves: "?" keeps the listings of the metadata prefixes out of the rule.
	i := g.reads.IntN(4)
	if refreshes && i < 2 && g.reads.IntN(2) == 0 {
		// Reference sets were published: the hydration's reads are the ones to fail, where a
		// failed listing or fetch taken for an empty one leaves the new owner without segments.
		i += 2
	}
	fam := []family{{"metadata", "*/translog/metadata/metadata__?*", nil}, families[2],
		{"segment-metadata", "*/segments/metadata/metadata__?*", nil}, families[3]}[i]
	// A third of the metadata kinds' faults take the listing instead (the exact prefix, which
	// no file's name is): a restore read or hydration whose listing fails has read nothing.
	if (i == 0 || i == 2) && g.listings.IntN(3) == 0 {
		fam = family{fam.name + "-listing", strings.TrimSuffix(fam.key, "?*"), nil}
	}
	acts := []string{"status-500", "status-503", string(faults.DropResponse), string(faults.Delay)}
	act := acts[g.reads.IntN(len(acts))]
	if i == 1 && promoted[w] && w != g.serving && g.hidden.IntN(3) == 0 {
		// A store that hides a .tlog the restore point names (a 404 for a file that stands):
		// the promotion must refuse to serve from the broken lineage, and stays a standby; one
		// that took the missing file for an empty one would start its term without the ops in
		// it. Only a promotion's: a recovery notes missing files and finishes (the store is
		// trusted to keep what the primary's lineage names), and a copy that must end serving
		// cannot be refused its term.
		act = "status-404"
	}
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("%s-first-%s-read-%d", act, fam.name, g.rules), Key: fam.key, Method: "GET",
		Nth: 1, Count: 1 + g.reads.IntN(2)}
	setAction(&r, act, func() time.Duration { return time.Duration(10+g.reads.IntN(50)) * 10 * time.Millisecond })
	g.deny(&r)
	return scenarios.Step{Trigger: scenarios.TriggerAt, Action: scenarios.HTTP, Params: scenarios.Params{Writer: w, Rule: r}}, true
}

// crash stops a writer; usually a new incarnation restarts it later at a higher term.
func (g *gen) crash(room int) ([]scenarios.Step, bool) {
	if len(g.c.active) == 0 {
		return nil, false
	}
	w := g.oneOf(g.c.active)
	st := g.step(scenarios.Crash, scenarios.Params{Writer: w})
	g.c.crash(w)
	out := []scenarios.Step{st}
	if room >= 2 && g.chance(0.7) && (g.o.System == nil || g.o.System.Promote) {
		as := g.c.freshID(w)
		rs := g.later(st, scenarios.Restart, scenarios.Params{Writer: w, As: as, Term: g.c.newTerm()}, g.ms(50, 500))
		g.c.restart(w, as)
		out = append(out, rs)
	}
	return out, true
}

// relocate hands the primary's term to a standby, sometimes aborting or losing the answer or
// the message.
func (g *gen) relocate(room int) ([]scenarios.Step, bool) {
	if len(g.c.standby) == 0 || !contains(g.c.active, g.c.primary) {
		return nil, false
	}
	src, dst := g.c.primary, g.oneOf(g.c.standby)
	pr := scenarios.Params{Writer: src, Target: dst,
		AbortAt:     draw(g.dice, []history.AbortPoint{history.AbortNone, history.AbortNone, history.AbortBeforeTargetWrites, history.AbortAfterTargetAcks}),
		LoseHandoff: g.chance(0.3)}
	// A quarter of the relocations hydrate the target while the source still serves (its own
	// stream, after the rest): a hydration that fails then must leave both as they were.
	pr.Prehydrate = g.handoffs.IntN(4) == 0
	// Half of the others with no abort point lose the message itself (same stream): the
	// target never hears of the relocation, and the source reverts once its answer times out.
	pr.LoseMessage = pr.AbortAt == history.AbortNone && !pr.LoseHandoff && g.handoffs.IntN(2) == 0
	if g.o.System != nil {
		// A system's relocation is the bench's relocate, then a promotion of the target at a
		// new term: the simulated copies' abort, lost handoff and prehydration are theirs alone.
		pr.AbortAt, pr.LoseHandoff, pr.LoseMessage, pr.Prehydrate = history.AbortNone, false, false, false
		g.c.newTerm()
	}
	st := g.step(scenarios.Relocate, pr)
	g.c.handOff(src, dst, pr.AbortAt == history.AbortNone && !pr.LoseMessage)
	out := []scenarios.Step{st}
	if rf, ok := g.relocationFault(st); ok && room >= 2 {
		out = append(out, rf)
	}
	return out, true
}

func (g *gen) segmentWork(a scenarios.Action, event history.SignalKind) ([]scenarios.Step, bool) {
	w := g.target()
	st := g.step(a, scenarios.Params{Writer: w})
	g.c.emit(w, event)
	return []scenarios.Step{st}, true
}

// recoverCopy makes a standby hydrate from the store while the primary works.
func (g *gen) recoverCopy(int) ([]scenarios.Step, bool) {
	if len(g.c.standby) == 0 {
		return nil, false
	}
	w := g.oneOf(g.c.standby)
	pr := scenarios.Params{Writer: w}
	if g.chance(0.5) && contains(g.c.ids, g.c.primary) {
		pr.From = g.c.primary
	}
	st := g.step(scenarios.Recover, pr)
	g.c.assign(w)
	return []scenarios.Step{st}, true
}

func (g *gen) driveOffline(int) ([]scenarios.Step, bool) {
	st := g.step(scenarios.DriveOffline, scenarios.Params{Drive: 1 + g.r.IntN(4)})
	st.For = g.window()
	return []scenarios.Step{st}, true
}

func (g *gen) storeRestart(int) ([]scenarios.Step, bool) {
	return []scenarios.Step{g.step(scenarios.StoreRestart, scenarios.Params{Down: g.ms(50, 500)})}, true
}

func (g *gen) latencyFallback() scenarios.Step {
	return scenarios.Step{Trigger: scenarios.TriggerAt, At: g.o.Duration / 4, For: 100 * time.Millisecond,
		Action: scenarios.Latency, Params: scenarios.Params{Writer: "a", Delay: 50 * time.Millisecond}}
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}
