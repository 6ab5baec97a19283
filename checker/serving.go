package checker

import (
	"fmt"
	"strings"

	"github.com/fencebench/fencebench/history"
)

// servingJudge judges that a relocation ends with one copy serving: HandoffResolves.
type servingJudge struct{ *index }

// HandoffResolves judges Expect.Serving: the named writer S ends holding the chain. Its latest
// ownership acquisition (an ok Claim, Adopt or Revert) must be followed by no stop of its own
// — a Fenced or StandDown event, a Crash, a completed Handoff or a Transfer that possibly
// applied — and by no other writer's acquisition at a higher term, or at its term completed
// after its own. The final auditor, which claims above every term once the writers are
// closed, is left out. Holding the chain is not enough when clients sent ops in the run (any
// Op event): S must also have acknowledged an op after that acquisition, so a copy that owns
// the chain but never serves (a source whose revert succeeded and that stays blocked) fails.
// With no writer named the invariant holds trivially.
func (x *servingJudge) handoffResolves() InvariantResult {
	r := x.handoffResolvesAsRun()
	if u := x.in.Expect.Unrun; r.Status == Fail && len(u) > 0 {
		// The expectation assumed a schedule that did not happen: a step that would have
		// moved the chain never ran, so the copy named may rightly not be serving.
		r.Status, r.Violations = Inconclusive, 0
		r.Explanation = fmt.Sprintf("not shown: the schedule assumed a step that never ran (%s); as it stands, %s",
			strings.Join(u, "; "), r.Explanation)
		r.Narrative, r.Counterexample = "", nil
	}
	return r
}

// handoffResolvesAsRun judges Expect.Serving on the history as it is, whether or not every
// step of the schedule ran.
func (x *servingJudge) handoffResolvesAsRun() InvariantResult {
	r := newResult(HandoffResolves)
	s := x.in.Expect.Serving
	if s == "" {
		r.Explanation = "no copy was named to end serving"
		return r
	}
	auditors := map[string]bool{}
	for _, p := range x.audits {
		auditors[x.ev[p].Writer] = true
	}
	last := -1
	for i, a := range x.acqs {
		if a.writer == s {
			last = i
		}
	}
	if last < 0 {
		r.Status, r.Violations = Fail, 1
		r.Explanation = s + " never took the chain"
		r.Narrative = fmt.Sprintf("%s was expected to end serving, but no claim, adoption or revert of its own succeeded", s)
		if o := x.finalOwner(auditors); o >= 0 {
			a := x.acqs[o]
			r.Narrative += fmt.Sprintf("; the last to take the chain was %s (%s, term %d, at %s)", a.writer,
				verbFor(a.kind), a.term, secs(a.complete))
			r.Counterexample = x.idsOf(a.pos)
		}
		return r
	}
	a := x.acqs[last]
	if p := x.stopAfter(s, a); p >= 0 {
		e := &x.ev[p]
		r.Status, r.Violations = Fail, 1
		r.Explanation = fmt.Sprintf("%s %s after it last took the chain", s, stopVerb(e))
		r.Narrative = fmt.Sprintf("%s was expected to end serving, but after it %s (term %d) at %s it %s at %s",
			s, verbFor(a.kind), a.term, secs(a.complete), stopVerb(e), secs(e.Complete))
		if e.Err != "" {
			r.Narrative += fmt.Sprintf(" (%q)", e.Err)
		}
		r.Counterexample = x.idsOf(a.pos, p)
		return r
	}
	for _, o := range x.acqs {
		if o.writer == s || auditors[o.writer] || o.term < a.term || o.term == a.term && o.complete <= a.complete {
			continue
		}
		r.Status, r.Violations = Fail, 1
		r.Explanation = fmt.Sprintf("%s was superseded by %s after it last took the chain", s, o.writer)
		r.Narrative = fmt.Sprintf("%s was expected to end serving, but after it %s (term %d) at %s, %s %s (term %d) at %s",
			s, verbFor(a.kind), a.term, secs(a.complete), o.writer, verbFor(o.kind), o.term, secs(o.complete))
		r.Counterexample = x.idsOf(a.pos, o.pos)
		return r
	}
	if len(x.ops) > 0 && !x.ackedSince(s, a) {
		if end := x.in.Expect.TrafficEnd; end > 0 && a.complete >= end {
			// It took the chain once the clients had stopped (a starved machine can stretch an
			// abort's revert past the end of the traffic): it had nothing left to acknowledge.
			r.Status = Inconclusive
			r.Explanation = fmt.Sprintf("%s took the chain (%s, term %d) at %s, after the clients stopped at %s: "+
				"whether it serves again is not shown", s, verbFor(a.kind), a.term, secs(a.complete), secs(end))
			return r
		}
		r.Status, r.Violations = Fail, 1
		r.Explanation = fmt.Sprintf("%s holds the chain but acknowledged nothing after it last took it", s)
		r.Narrative = fmt.Sprintf("%s was expected to end serving: it %s (term %d) at %s and nothing took the chain "+
			"from it, but it acknowledged no op afterwards although clients sent %s in the run", s, verbFor(a.kind),
			a.term, secs(a.complete), plural(len(x.ops), "op", "ops"))
		r.Counterexample = x.idsOf(a.pos)
		return r
	}
	r.Explanation = fmt.Sprintf("%s ends serving: it %s (term %d) at %s, nothing took the chain from it, and it "+
		"acknowledged ops afterwards", s, verbFor(a.kind), a.term, secs(a.complete))
	if len(x.ops) == 0 {
		r.Explanation = fmt.Sprintf("%s ends serving: it %s (term %d) at %s and nothing took the chain from it "+
			"(no client sent an op)", s, verbFor(a.kind), a.term, secs(a.complete))
	}
	return r
}

// ackedSince reports whether w acknowledged an op at a's term once acquisition a completed.
func (x *servingJudge) ackedSince(w string, a acq) bool {
	for _, p := range x.acks {
		if e := &x.ev[p]; e.Writer == w && e.Term == a.term && e.Complete >= a.complete {
			return true
		}
	}
	return false
}

// stopAfter is the first event of w, invoked once acquisition a completed, that ends its
// serving: a fence, a stand-down, a crash, a completed handoff or a transfer that possibly
// applied; -1 when there is none.
func (x *servingJudge) stopAfter(w string, a acq) int32 {
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Writer != w || e.Invoke < a.complete || p == a.pos {
			continue
		}
		switch e.Kind {
		case history.Fenced, history.StandDown, history.Crash:
			return p
		case history.Handoff:
			if e.Outcome == history.OK {
				return p
			}
		case history.Transfer:
			if x.possiblyApplied(p) {
				return p
			}
		}
	}
	return -1
}

// stopVerb says what a stop event did.
func stopVerb(e *history.Event) string {
	switch e.Kind {
	case history.Fenced:
		return "was fenced"
	case history.StandDown:
		return "stood down"
	case history.Crash:
		return "crashed"
	case history.Handoff:
		return "handed the primary over to " + e.Detail
	default:
		return "transferred the chain to " + e.Detail
	}
}

// finalOwner is the index in acqs of the last acquisition by a writer other than the
// auditors, -1 when there is none.
func (x *servingJudge) finalOwner(auditors map[string]bool) int {
	for i := len(x.acqs) - 1; i >= 0; i-- {
		if !auditors[x.acqs[i].writer] {
			return i
		}
	}
	return -1
}
