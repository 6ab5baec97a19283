package checker

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/history"
)

// ackTimeJudge judges TimeToAck: a serving writer left alone acknowledges what it is given.
type ackTimeJudge struct{ *index }

// servingSpan is a stretch of time in which a writer held the chain: from a grant of its own
// (a promotion, an adoption or a revert that succeeded) to its first stop after it (a fence,
// a stand-down, a crash, a transfer of its own) or the end of the history.
type servingSpan struct {
	writer   string
	from, to time.Duration
}

// timeToAck judges every op given to a writer while it served and left alone for the bound:
// the op was given at t within a serving span of its writer that lasts past t+bound, no fault
// was open at any time in [t, t+bound], no other writer's claim, promotion, adoption, revert
// or transfer was invoked from the span's start to t+bound, and t+bound is no later than the
// last op the clients gave anyone. Such an op, taken or refused, must be acknowledged by
// t+bound: a writer that refuses what it should take, buffers what it never syncs, or syncs
// without acknowledging fails it. Ops the protocol may rightly lose (a superseded writer's,
// a faulted writer's) are never judged.
func (x *ackTimeJudge) timeToAck(bound time.Duration) InvariantResult {
	r := newResult(TimeToAck)
	spans := x.servingSpans()
	var lastOp time.Duration
	for _, p := range x.ops {
		lastOp = max(lastOp, x.ev[p].Invoke)
	}
	ackedAt := map[int64]time.Duration{}
	for _, p := range x.acks {
		e := &x.ev[p]
		for _, op := range e.Ops {
			if at, ok := ackedAt[op]; !ok || e.Complete < at {
				ackedAt[op] = e.Complete
			}
		}
	}
	faults, grants := x.faultWindows(), x.grantSteps()
	judged := 0
	var slowest time.Duration
	var first int32 = -1
	var firstSpan servingSpan
	for _, p := range x.ops {
		e := &x.ev[p]
		t := e.Invoke
		if t+bound > lastOp {
			continue
		}
		sp, ok := spanAt(spans, e.Writer, t)
		if !ok || sp.to < t+bound || disturbed(x.ev, grants, e.Writer, sp.from, t+bound) || overlaps(faults, t, t+bound) {
			continue
		}
		for _, op := range e.Ops {
			judged++
			at, acked := ackedAt[op]
			if acked && at <= t+bound {
				slowest = max(slowest, at-t)
				continue
			}
			r.Violations++
			if first < 0 {
				first, firstSpan = p, sp
			}
		}
	}
	if r.Violations == 0 {
		if judged == 0 {
			r.Explanation = fmt.Sprintf("no op was given to a writer serving undisturbed for %s", secs(bound))
			return r
		}
		r.Explanation = fmt.Sprintf("%s given to undisturbed serving writers, each acknowledged within %s (slowest %s)",
			plural(judged, "op", "ops"), secs(bound), secs(slowest))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s of %d given to undisturbed serving writers not acknowledged within %s",
		plural(r.Violations, "op", "ops"), judged, secs(bound))
	e := &x.ev[first]
	what := "took"
	if e.Outcome == history.Fail {
		what = fmt.Sprintf("refused (%q)", e.Err)
	}
	r.Narrative = fmt.Sprintf("%s, serving since %s with no fault, stop or other writer's claim until %s, %s op %v at %s, "+
		"and it was not acknowledged by %s", e.Writer, secs(firstSpan.from), secs(e.Invoke+bound), what, e.Ops,
		secs(e.Invoke), secs(e.Invoke+bound))
	r.Counterexample = x.idsOf(first)
	return r
}

// servingSpans are the writers' serving spans, in history order.
func (x *ackTimeJudge) servingSpans() []servingSpan {
	var end time.Duration
	for i := range x.ev {
		end = max(end, x.ev[i].Complete)
	}
	open := map[string]int{} // writer -> index into out of its open span
	var out []servingSpan
	closeAt := func(w string, t time.Duration) {
		if i, ok := open[w]; ok {
			out[i].to = t
			delete(open, w)
		}
	}
	for _, p := range x.order {
		e := &x.ev[p]
		switch e.Kind {
		case history.Promote, history.Adopt, history.Revert:
			if e.Outcome == history.OK {
				closeAt(e.Writer, e.Complete)
				open[e.Writer] = len(out)
				out = append(out, servingSpan{writer: e.Writer, from: e.Complete, to: end})
			}
		case history.Fenced, history.StandDown, history.Crash, history.Transfer:
			closeAt(e.Writer, e.Invoke)
		}
	}
	return out
}

// spanAt is w's serving span holding t.
func spanAt(spans []servingSpan, w string, t time.Duration) (servingSpan, bool) {
	for _, s := range spans {
		if s.writer == w && s.from <= t && t <= s.to {
			return s, true
		}
	}
	return servingSpan{}, false
}

// disturbed reports whether a writer other than w invoked a claim, a promotion, an adoption,
// a revert or a transfer within [from, to] (grants, in history order): a step that may
// supersede w or move its chain.
func disturbed(ev []history.Event, grants []int32, w string, from, to time.Duration) bool {
	for _, p := range grants {
		e := &ev[p]
		if e.Invoke > to {
			return false
		}
		if e.Writer != w && e.Invoke >= from {
			return true
		}
	}
	return false
}

// grantSteps are the positions, in history order, of every claim, promotion, adoption,
// revert and transfer.
func (x *ackTimeJudge) grantSteps() []int32 {
	var out []int32
	for _, p := range x.order {
		switch x.ev[p].Kind {
		case history.Claim, history.Promote, history.Adopt, history.Revert, history.Transfer:
			out = append(out, p)
		}
	}
	return out
}

// window is a stretch of time in which a fault was open.
type window struct{ from, to time.Duration }

// faultWindows are the windows of every fault the history records (FaultStart to its
// FaultEnd, or to the end of the history when it never ended), whoever it was open on.
func (x *ackTimeJudge) faultWindows() []window {
	var out []window
	for _, ws := range x.faultWindowsByWriter() {
		out = append(out, ws...)
	}
	return out
}

// overlaps reports whether any window meets [from, to].
func overlaps(ws []window, from, to time.Duration) bool {
	for _, w := range ws {
		if w.from <= to && from <= w.to {
			return true
		}
	}
	return false
}
