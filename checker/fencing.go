package checker

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/history"
)

// fencingJudge judges that every stop was justified by a grant elsewhere: NoSpuriousFencing.
type fencingJudge struct{ *index }

// NoSpuriousFencing judges every stop of a writer W at term T — the first Fenced event of
// each incarnation, and every StandDown (a relocation source giving up after its revert was
// refused) — against W's own most recent grant at T invoked by the time the stop completed:
// an ownership acquisition of its own (an ok Claim, Adopt or Revert), its own Transfer, or a
// Transfer to W, either of which possibly applied. The stop is justified only by a
// supersession by another writer that was invoked by then and did not complete before that
// grant was invoked (a writer with no grant at T may be superseded at any earlier time):
//   - a Claim at a term above T that did not fail outright (its sweep may have run even if
//     the claim itself then failed retryably);
//   - a seal at T that succeeded, or whose unknown outcome the ledger shows applied
//     (equal-term arbitration);
//   - a Revert at T that possibly applied;
//   - an ok readopt Claim or a possibly applied Adopt at T by a writer X that owned the term
//     legitimately: X had sealed T itself, or a Transfer to X that possibly applied was not
//     followed by an ok Revert of its transferrer before X's adoption.
//
// A stop is also justified when, after that grant, the fault proxy answered one of W's
// requests on its fence key itself with a 412 or a 404 (toldSuperseded): W believed the
// store, which is right; what it was told was false.
//
// A supersession that was over before the grant cannot explain the stop: the source's own
// seal, for instance, does not justify fencing its relocation target after the transfer. A
// claim of a higher term is the exception across a grant that never looks for higher terms
// (a transfer, a revert): the object it may have created still stands after them, and the
// term floor of the next claim or adoption at T rightly refuses. Only W's own ok Claim or
// Adopt at T, each of which checked that no higher term existed, ends it.
//
// A relocation target's StandDown (Detail "relocation-target": it gave the handoff up, for
// instance because its hydration failed) is also justified by a failed store call of its
// own (a store request or a segment fetch that failed or had an unknown outcome) invoked
// after that grant, or in its incarnation when it has none, and completed by the
// stand-down: the store, not the protocol, stopped it. A target that gives up without
// either is caught.
//
// Likewise every publication the segment publish gate refused must be preceded by a Claim by
// another writer at a higher term (any outcome): the gate refuses only a superseded writer.
func (x *fencingJudge) noSpuriousFencing() InvariantResult {
	r := newResult(NoSpuriousFencing)
	stops := x.stops()
	var first stopJudgement
	targets, told := false, 0
	for _, p := range stops {
		j := x.judgeStop(p)
		targets = targets || j.target
		if j.told {
			told++
		}
		if j.justified {
			continue
		}
		r.Violations++
		if r.Violations == 1 {
			first = j
		}
	}
	silenced, refusals := x.silencedPublishes()
	if wp, n := x.unownedWithdrawal(); n > 0 && r.Violations == 0 && len(silenced) == 0 {
		// Every stop was justified, but a claim deleted a key another writer owned.
		w := &x.ev[wp]
		r.Status, r.Violations = Fail, n
		r.Explanation = fmt.Sprintf("%s deleted its term's key without owning it (a claim withdraws only a key it "+
			"created and read back as its own)", plural(n, "claim", "claims"))
		r.Narrative = fmt.Sprintf("%s %s's claim at term %d deleted %s before it ended at %s (%s), although it had not "+
			"created the key, or had last read it holding another writer's version: the key's owner is fenced by a "+
			"delete it did nothing to deserve", secs(w.Invoke), w.Writer, w.Term, w.Key, secs(w.Complete), w.Err)
		r.Counterexample = x.idsOf(wp)
		return r
	}
	if r.Violations == 0 && len(silenced) == 0 {
		what := x.stopsText(stops)
		if refusals > 0 {
			what += " and " + plural(refusals, "refused publication", "refused publications")
		}
		r.Explanation = what + ", each after a legitimate supersession"
		if targets {
			r.Explanation = what + ", each after a legitimate supersession or, for a relocation target giving " +
				"the handoff up, a failed store call"
		}
		if told > 0 {
			r.Explanation += fmt.Sprintf("; %d of them after the fault proxy answered, in the store's place, that "+
				"the writer's fence key had moved or was gone (an injected 412 or 404)", told)
		}
		return r
	}
	r.Status = Fail
	if r.Violations == 0 {
		return x.silencedResult(r, silenced)
	}
	r.Violations += len(silenced)
	r.Explanation = fmt.Sprintf("%s without a legitimate supersession", plural(r.Violations, "fence or stand-down",
		"fences or stand-downs"))
	r.Narrative = x.stopNarrative(first)
	r.Counterexample = x.idsOf(first.pos, first.grant, first.stale, first.illegit)
	return r
}

// stopJudgement is the verdict on one stop (a first Fenced event or a StandDown).
type stopJudgement struct {
	pos       int32
	term      int64
	justified bool
	grant     int32 // the writer's most recent grant at term before the stop, or -1
	stale     int32 // the latest supersession that came before that grant, or -1
	illegit   int32 // an illegitimate same-term acquisition that may explain the stop, or -1
	target    bool  // a relocation target giving the handoff up
	told      bool  // justified by a refusal the fault proxy made up (toldSuperseded)
}

// toldSuperseded reports whether, since its grant (invoked at since), the stopping writer
// asked about its fence key and the fault proxy answered in the store's place that the key
// had moved or was gone (a 412 or 404 no store gave). The protocol is right to believe the
// store: such a stop is the fault's doing, not a supersession the protocol made up, as a
// step that fails on an injected 500 is. The ledger tells the two apart.
func (x *fencingJudge) toldSuperseded(f *history.Event, since time.Duration) bool {
	path := x.pathOf(f.Writer)
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		if l.Writer != path || l.Injected != 412 && l.Injected != 404 {
			continue
		}
		if f.Key != "" && l.Key != f.Key || !isFenceKey(l.Key) {
			continue
		}
		if l.Time >= since && l.Done <= f.Complete {
			return true
		}
	}
	return false
}

// judgeStop judges the stop at p.
func (x *fencingJudge) judgeStop(p int32) stopJudgement {
	f := &x.ev[p]
	term := f.Term
	if term == 0 {
		term = x.termBefore(f.Writer, f.Complete)
	}
	j := stopJudgement{pos: p, term: term, grant: x.latestGrant(f.Writer, term, f.Complete)}
	var since, floor time.Duration
	if j.grant >= 0 {
		since = x.ev[j.grant].Invoke
	}
	if g := x.latestFloorGrant(f.Writer, term, f.Complete); g >= 0 {
		floor = x.ev[g].Invoke
	}
	var by int32
	by, j.stale, j.illegit = x.supersededSince(f.Writer, term, since, floor, f.Complete)
	j.justified = by >= 0
	if !j.justified && x.toldSuperseded(f, since) {
		j.justified, j.told = true, true
	}
	if j.target = f.Kind == history.StandDown && f.Detail == targetGaveUp; j.target && !j.justified {
		if j.grant < 0 {
			since = x.incarnationStart(f.Writer, f.Invoke)
		}
		j.justified = x.storeFailedSince(f.Writer, since, f.Complete)
	}
	return j
}

// targetGaveUp is the Detail of a relocation target's StandDown.
const targetGaveUp = "relocation-target"

// storeFailedSince reports whether a store call or segment fetch of w invoked at or after
// since and completed by t failed or had an unknown outcome.
func (x *fencingJudge) storeFailedSince(w string, since, t time.Duration) bool {
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer != w || e.Invoke < since || e.Complete > t {
			continue
		}
		if e.Outcome != history.Fail && e.Outcome != history.Ambiguous {
			continue
		}
		if e.Kind == history.Hydrate || e.Kind.StoreCall() {
			return true
		}
	}
	return false
}

// stops returns the first Fenced event of each incarnation of each writer and the first
// StandDown, whichever came first (a writer stops once), in history order. A relocation
// target giving a handoff up is judged too, but it ends only that handoff: the copy may
// serve later under another grant, so it does not hide the stop that ends the incarnation.
func (x *fencingJudge) stops() []int32 {
	var out []int32
	seen := map[string]time.Duration{} // writer -> incarnation start of its recorded stop
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Kind != history.Fenced && e.Kind != history.StandDown {
			continue
		}
		start := x.incarnationStart(e.Writer, e.Invoke)
		if s, ok := seen[e.Writer]; ok && s == start {
			continue
		}
		if e.Kind != history.StandDown || e.Detail != targetGaveUp {
			seen[e.Writer] = start
		}
		out = append(out, p)
	}
	return out
}

// latestGrant is w's most recent grant at term invoked by t: an ownership acquisition of its
// own, its own Transfer or a Transfer to it that applied; -1 when there is none. A Transfer
// whose outcome stayed unknown is no grant here: taking it for one would move the point a
// supersession must follow past a supersession that did explain the stop (a transfer cut by a
// reset after the successor's sweep), and a stop is called spurious only when it is sure.
func (x *fencingJudge) latestGrant(w string, term int64, t time.Duration) int32 {
	var best int32 = -1
	consider := func(p int32) {
		if best < 0 || eventOrder(x.ev[p], x.ev[best]) > 0 {
			best = p
		}
	}
	for _, a := range x.acqs {
		if a.writer == w && a.term == term && a.invoke <= t {
			consider(a.pos)
		}
	}
	for _, p := range x.transfers {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if (e.Writer == w || e.Detail == w) && (e.Term == term || e.Term == 0) && x.certainlyApplied(p) {
			consider(p)
		}
	}
	return best
}

// latestFloorGrant is w's most recent grant at term invoked by t that looked for higher
// terms: an ok Claim or Adopt of its own, whose term floor would have refused it had a higher
// term's object been there. A transfer or a revert only moves the term's own object, so a
// higher term claimed before them still stands after them; -1 when there is none.
func (x *fencingJudge) latestFloorGrant(w string, term int64, t time.Duration) int32 {
	var best int32 = -1
	for _, a := range x.acqs {
		if a.writer == w && a.term == term && a.invoke <= t && a.kind != history.Revert &&
			(best < 0 || eventOrder(x.ev[a.pos], x.ev[best]) > 0) {
			best = a.pos
		}
	}
	return best
}

// Kinds of supersession an event of another writer can be.
const (
	notSupersession = iota
	supersedes
	illegitimate // a same-term acquisition by a writer that did not own the term
)

// supersessionKind says whether the event at p, by another writer than w, supersedes w at
// term (whatever its timing).
func (x *fencingJudge) supersessionKind(p int32, w string, term int64) int {
	e := &x.ev[p]
	if e.Writer == w {
		return notSupersession
	}
	legit := func() int {
		if x.ownsTermLegitimately(e.Writer, term, e.Invoke) {
			return supersedes
		}
		return illegitimate
	}
	switch e.Kind {
	case history.Claim:
		switch {
		case e.Term < term:
			return notSupersession
		case e.Term > term && (e.Outcome != history.Fail || x.claimWrote(p)):
			// A higher-term claim that failed supersedes when it got as far as writing: a
			// created key or a sweep (its read-back may fail after both).
			return supersedes
		case e.Term > term || e.Outcome == history.Fail:
			return notSupersession
		case e.Detail == "readopt":
			if e.Outcome == history.OK {
				return legit()
			}
		case e.Outcome == history.OK || e.Outcome == history.Ambiguous && x.resolved[p].Outcome == ResolvedApplied:
			// A same-term seal supersedes when it succeeded, or when its outcome stayed
			// unknown to its writer but the ledger shows the store applied its arbitration.
			return supersedes
		case e.Outcome == history.FencedOut && x.tookFrom(p, w):
			// A seal that took w's object over and was fenced later in its claim (its final
			// listing found a higher term): its arbitration ended w's grant all the same.
			return supersedes
		}
	case history.Revert:
		if e.Term == term && x.possiblyApplied(p) {
			return supersedes
		}
	case history.Adopt:
		if e.Term == term && x.possiblyApplied(p) {
			return legit()
		}
	}
	return notSupersession
}

// claimWrote reports whether claim p created its key or swept the fence keys: a create or
// batch delete of fence keys by its writer, within its span, that the store may have applied
// (answered, or left without an answer).
func (x *fencingJudge) claimWrote(p int32) bool {
	e := &x.ev[p]
	for _, q := range x.orderFrom(e.Invoke) {
		c := &x.ev[q]
		if c.Invoke > e.Complete {
			break
		}
		if c.Writer == e.Writer && isFenceKey(c.Key) &&
			(c.Kind == history.StorePutIfAbsent || c.Kind == history.StoreDeleteMany) && c.Outcome != history.Fail {
			return true
		}
	}
	return false
}

// tookFrom reports whether claim p took w's fence object over: the ledger shows one of its
// conditional PUTs on the claim's key, sent while the claim ran, applied with an If-Match
// naming a token w held on that key.
func (x *fencingJudge) tookFrom(p int32, w string) bool {
	e := &x.ev[p]
	held := map[string]bool{}
	for i := range x.ev {
		o := &x.ev[i]
		if o.Writer == w && o.Key == e.Key && o.Token != "" && writesKey(o.Kind) && x.possiblyApplied(int32(i)) {
			held[normToken(o.Token)] = true
		}
	}
	if len(held) == 0 {
		return false
	}
	path := x.pathOf(e.Writer)
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		if l.Method == "PUT" && l.Writer == path && l.Key == e.Key && l.IfMatch != "" && l.Applied() &&
			l.Time >= e.Invoke-ledgerSlack && l.Time <= e.Complete && held[normToken(l.IfMatch)] {
			return true
		}
	}
	return false
}

// supersededSince finds a supersession of w at term by another writer, invoked by t and not
// completed before since (a claim of a higher term: not completed before floor, w's latest
// grant that looked for higher terms). It returns it (or -1), the latest supersession that completed
// before since (or -1), and an illegitimate same-term acquisition in the window (or -1).
func (x *fencingJudge) supersededSince(w string, term int64, since, floor, t time.Duration) (by, stale, illegit int32) {
	stale, illegit = -1, -1
	for _, list := range [][]int32{x.claims, x.reverts, x.adopts} {
		for _, p := range list {
			e := &x.ev[p]
			if e.Invoke > t {
				break
			}
			after := since
			if e.Kind == history.Claim && e.Term > term {
				after = floor
			}
			k := x.supersessionKind(p, w, term)
			switch {
			case k == notSupersession:
			case e.Complete < after:
				if k == supersedes && (stale < 0 || e.Complete > x.ev[stale].Complete) {
					stale = p
				}
			case k == supersedes:
				return p, -1, -1
			case illegit < 0:
				illegit = p
			}
		}
	}
	return -1, stale, illegit
}

// stopsText counts fences and stand-downs for an explanation.
func (x *fencingJudge) stopsText(stops []int32) string {
	fences := 0
	for _, p := range stops {
		if x.ev[p].Kind == history.Fenced {
			fences++
		}
	}
	s := plural(fences, "fence", "fences")
	if n := len(stops) - fences; n > 0 {
		s += " and " + plural(n, "stand-down", "stand-downs")
	}
	return s
}

// stopNarrative tells why a stop was not justified.
func (x *fencingJudge) stopNarrative(j stopJudgement) string {
	f := &x.ev[j.pos]
	what := "was fenced"
	if f.Kind == history.StandDown {
		what = "stood down"
	}
	s := fmt.Sprintf("%s (term %d) %s at %s (%q), but ", f.Writer, j.term, what, secs(f.Complete), f.Err)
	if j.grant >= 0 {
		g := &x.ev[j.grant]
		s += fmt.Sprintf("after %s at %s ", grantText(g, f.Writer), secs(g.Invoke))
	} else {
		s += "before then "
	}
	s += fmt.Sprintf("no other writer had claimed a higher term, nor legitimately claimed, adopted or reverted term %d", j.term)
	if j.target {
		s += ", and no store call of its own had failed: the target gave the handoff up without cause"
	}
	if j.stale >= 0 {
		e := &x.ev[j.stale]
		s += fmt.Sprintf("; %s's %s at %s was over before that grant and cannot explain it", e.Writer,
			supersessionName(e, j.term), secs(e.Complete))
	}
	if j.illegit >= 0 {
		e := &x.ev[j.illegit]
		verb := "adopted"
		if e.Kind == history.Claim {
			verb = "re-adopted"
		}
		s += fmt.Sprintf("; %s %s term %d at %s without owning it (no seal of its own and no standing "+
			"transfer to it)", e.Writer, verb, j.term, secs(e.Complete))
	}
	return s
}

// supersessionName names a supersession of a writer at term.
func supersessionName(e *history.Event, term int64) string {
	switch {
	case e.Kind == history.Claim && e.Term > term:
		return fmt.Sprintf("claim of term %d", e.Term)
	case e.Kind == history.Claim && e.Detail == "readopt":
		return "re-adoption"
	case e.Kind == history.Claim:
		return "seal"
	case e.Kind == history.Adopt:
		return "adoption"
	default:
		return string(e.Kind)
	}
}

// grantText names a grant of writer w.
func grantText(g *history.Event, w string) string {
	switch {
	case g.Kind == history.Transfer && g.Writer == w:
		return "its own transfer of the chain to " + g.Detail
	case g.Kind == history.Transfer:
		return "the transfer of the chain to it by " + g.Writer
	case g.Kind == history.Claim && g.Detail != "":
		return "its own " + g.Detail
	case g.Kind == history.Claim:
		return "its own claim"
	default:
		return "its own " + string(g.Kind)
	}
}

// ownsTermLegitimately reports whether writer xw could legitimately take term's chain at time
// t: it sealed the term itself, or a transfer to it stands (not reverted before t).
func (x *fencingJudge) ownsTermLegitimately(xw string, term int64, t time.Duration) bool {
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer == xw && e.Term == term && e.Outcome == history.OK && e.Detail != "readopt" && e.Complete <= t {
			return true
		}
	}
	for _, p := range x.transfers {
		tr := &x.ev[p]
		if tr.Invoke > t {
			break
		}
		if tr.Detail != xw || (tr.Term != 0 && tr.Term != term) || !x.possiblyApplied(p) {
			continue
		}
		reverted := false
		for _, q := range x.reverts {
			rv := &x.ev[q]
			if rv.Writer == tr.Writer && rv.Outcome == history.OK && rv.Invoke > tr.Invoke && rv.Complete < t {
				reverted = true
				break
			}
		}
		if !reverted {
			return true
		}
	}
	return false
}

// silencedPublishes returns the publications the segment publish gate refused (Publish with
// outcome fail and no key) although no other writer had yet invoked a claim at a higher term,
// and how many refusals there were. The gate refuses only when it lists a strictly higher
// term, and such a key exists only once a claim at that term was invoked (whatever its
// outcome); a refusal without one silenced a healthy shard, for instance because the fence
// could not be read.
func (x *fencingJudge) silencedPublishes() ([]int32, int) {
	var out []int32
	refusals := 0
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Kind != history.Publish || e.Outcome != history.Fail || e.Key != "" {
			continue
		}
		refusals++
		justified := false
		for _, c := range x.claims {
			o := &x.ev[c]
			if o.Invoke > e.Complete {
				break
			}
			if o.Writer != e.Writer && o.Term > e.Term {
				justified = true
				break
			}
		}
		if !justified {
			out = append(out, p)
		}
	}
	return out, refusals
}

// silencedResult reports refused publications when no fence was spurious.
func (x *fencingJudge) silencedResult(r InvariantResult, silenced []int32) InvariantResult {
	r.Violations = len(silenced)
	r.Explanation = fmt.Sprintf("%s refused without a higher term", plural(r.Violations, "publication", "publications"))
	e := &x.ev[silenced[0]]
	r.Narrative = fmt.Sprintf("%s (term %d) had a segment publication refused at %s (%q), but before then no other "+
		"writer had claimed a higher term: the publish gate silenced a healthy shard", e.Writer, e.Term, secs(e.Complete), e.Err)
	r.Counterexample = x.idsOf(silenced[0])
	return r
}
