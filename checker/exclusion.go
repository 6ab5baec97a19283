package checker

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/fencebench/fencebench/history"
)

// exclusionJudge judges that one writer owns a term at a time: MutualExclusion and
// FencedIsTerminal.
type exclusionJudge struct {
	*index
	// best and second are, per prefix of the acquisitions, the highest term and the highest
	// term of another writer (termLeaders).
	best, second []termTop
}

// attributionJudge judges that every ack is its acker's own op: AckAttribution.
type attributionJudge struct{ *index }

// MutualExclusion, for each ack by W at term Tw whose CAS was invoked at t: a violation when
// another writer V completed an acquisition before t at a term above Tw, or at Tw and after
// W's own latest acquisition completed before t, unless the fence key's chain shows V's
// acquisition wrote before W's (see chainOlder). An acquisition at a lower term never counts
// against W: it is the lower-term writer's acks that are then in violation.
func (x *exclusionJudge) mutualExclusion() InvariantResult {
	r := newResult(MutualExclusion)
	n := len(x.acqs)
	x.best, x.second = x.termLeaders()
	firstAck, firstV := int32(-1), -1
	for _, p := range x.acks {
		v := x.rivalOwner(p)
		if v < 0 {
			continue
		}
		r.Violations++
		if firstAck < 0 {
			firstAck, firstV = p, v
		}
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s checked against %s", plural(len(x.acks), "ack", "acks"),
			plural(n, "ownership acquisition", "ownership acquisitions"))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s by a writer that was no longer the owner", plural(r.Violations, "ack", "acks"))
	e := &x.ev[firstAck]
	v := x.acqs[firstV]
	cas := x.casOf(firstAck)
	why := "a higher term"
	if v.term == e.Term {
		why = "the same term, after " + e.Writer + "'s own acquisition"
	}
	r.Narrative = fmt.Sprintf("%s (term %d) %s at %s; %s (term %d) then invoked a CAS at %s that was accepted, "+
		"and acknowledged %s at %s: two owners at once, since %s holds %s",
		v.writer, v.term, verbFor(v.kind), secs(v.complete), e.Writer, e.Term, secs(e.Invoke),
		opList(e.Ops), secs(e.Complete), v.writer, why)
	r.Counterexample = x.idsOf(firstAck, cas)
	r.Counterexample = append(r.Counterexample, v.id)
	slices.Sort(r.Counterexample)
	r.Counterexample = slices.Compact(r.Counterexample)
	return r
}

// termTop is the highest term among a prefix of the acquisitions, and the acquisition's index.
type termTop struct {
	term int64
	i    int
}

// termLeaders computes the prefix maxima of term over distinct writers: for each prefix of
// the acquisitions, the best and the best of any other writer.
func (x *exclusionJudge) termLeaders() (best, second []termTop) {
	n := len(x.acqs)
	best = make([]termTop, n)
	second = make([]termTop, n)
	for i, a := range x.acqs {
		b, s := termTop{-1 << 63, -1}, termTop{-1 << 63, -1}
		if i > 0 {
			b, s = best[i-1], second[i-1]
		}
		switch {
		case b.i < 0 || a.term > b.term:
			if b.i >= 0 && x.acqs[b.i].writer != a.writer {
				s = b
			}
			b = termTop{a.term, i}
		case x.acqs[b.i].writer != a.writer && (s.i < 0 || a.term > s.term):
			s = termTop{a.term, i}
		}
		best[i], second[i] = b, s
	}
	return best, second
}

// rivalOwner returns the index of an acquisition by another writer that owned the fence when
// ack p was invoked (a higher term, or the same term acquired later), or -1.
func (x *exclusionJudge) rivalOwner(p int32) int {
	n := len(x.acqs)
	e := &x.ev[p]
	t := e.Invoke
	pfx := sort.Search(n, func(i int) bool { return x.acqs[i].complete >= t })
	if pfx == 0 {
		return -1
	}
	v := -1
	b, s := x.best[pfx-1], x.second[pfx-1]
	if b.i >= 0 && x.acqs[b.i].writer != e.Writer && b.term > e.Term {
		v = b.i
	} else if s.i >= 0 && x.acqs[s.i].writer != e.Writer && s.term > e.Term {
		v = s.i
	}
	// When the ack's own fence step was an acquisition (a re-adoption or a relocation
	// target's adopt, invoked at t and completed by the ack), the writer acquired after
	// every equal-term acquisition that completed before t.
	ownStep := false
	for i := pfx; i < n && x.acqs[i].complete <= e.Complete; i++ {
		if a := x.acqs[i]; a.writer == e.Writer && a.term == e.Term && a.invoke >= t {
			ownStep = true
			break
		}
	}
	if v < 0 && !ownStep {
		own := -1 // W's latest acquisition completed before t
		for i := pfx - 1; i >= 0; i-- {
			if x.acqs[i].writer == e.Writer {
				own = i
				break
			}
		}
		for i := pfx - 1; i > own; i-- {
			if a := x.acqs[i]; a.term == e.Term && !x.chainOlder(i, own) {
				v = i
				break
			}
		}
	}
	return v
}

// chainOlder reports whether acquisition i wrote its fence key before acquisition own did,
// whatever their completion order: both left a token on the same key and i's seq is lower.
// A claim returns only after its verifying read and a final listing, so a copy stalled
// there can complete after an equal-term twin took the object over from it and re-adopted
// it: the twin's later writes are still the chain's, and the stalled copy's next step
// (its re-adoption, guarded by recorded ownership) finds it no longer the owner. Accepted
// writes of a key advance seq by exactly one (SeqMonotonic), so seq orders them as the store
// applied them. Equal seqs are never excused, nor is an acquisition whose seq another
// accepted write of the key also claims with another token (a fork, as a store without
// atomic preconditions allows): there the chain orders nothing.
func (x *exclusionJudge) chainOlder(i, own int) bool {
	if own < 0 {
		return false
	}
	a, o := x.acqs[i], x.acqs[own]
	if a.term != o.term || a.key == "" || a.key != o.key || a.token == "" || o.token == "" || a.seq >= o.seq {
		return false
	}
	for p := range x.ev {
		e := &x.ev[p]
		if writesKey(e.Kind) && e.Outcome == history.OK && e.Key == a.key && e.Seq == a.seq &&
			normToken(e.Token) != normToken(a.token) {
			return false
		}
	}
	return true
}

func (x *attributionJudge) ackAttribution() (InvariantResult, int) {
	r := newResult(AckAttribution)
	lo, hi, nOps, nAcked := x.opRange()
	wid := writerIDs{}
	submitted, extra := x.submissions(lo, hi, nOps, wid)
	checkSubmission := len(x.ops) > 0
	ackedBy := newIDMap(lo, hi, nAcked)
	distinct := 0
	var firstP, firstOther int32 = -1, -1
	var firstOp int64
	for _, p := range x.acks {
		e := &x.ev[p]
		w := wid.id(e.Writer)
		for _, op := range e.Ops {
			if prev, ok := ackedBy.get(op); ok {
				r.Violations++
				if firstP < 0 {
					firstP, firstOther, firstOp = p, prev, op
				}
				continue
			}
			ackedBy.set(op, p)
			distinct++
			if !checkSubmission {
				continue
			}
			sw, ok := submitted.get(op)
			if ok && (sw == w || slices.Contains(extra[op], w)) {
				continue
			}
			r.Violations++
			if firstP < 0 {
				firstP, firstOther, firstOp = p, -1, op
			}
		}
	}
	if r.Violations == 0 {
		if !checkSubmission && len(x.acks) > 0 {
			r.Status = Inconclusive
			r.Explanation = "no Op events were recorded: whether acked ops were submitted to their acker cannot be judged"
			return r, distinct
		}
		r.Explanation = fmt.Sprintf("%s acknowledged once each, each by a writer it was submitted to",
			plural(nAcked, "op", "ops"))
		return r, distinct
	}
	return x.attributionFailure(r, firstP, firstOther, firstOp), distinct
}

// opRange is the range of the op IDs of the submissions and acks, and how many of each there are.
func (x *attributionJudge) opRange() (lo, hi int64, nOps, nAcked int) {
	first := true
	note := func(op int64) {
		if first || op < lo {
			lo = op
		}
		if first || op > hi {
			hi = op
		}
		first = false
	}
	for _, p := range x.ops {
		for _, op := range x.ev[p].Ops {
			note(op)
			nOps++
		}
	}
	for _, p := range x.acks {
		for _, op := range x.ev[p].Ops {
			note(op)
			nAcked++
		}
	}
	return lo, hi, nOps, nAcked
}

// writerIDs numbers writers in the order they are first seen.
type writerIDs map[string]int32

func (m writerIDs) id(w string) int32 {
	id, ok := m[w]
	if !ok {
		id = int32(len(m))
		m[w] = id
	}
	return id
}

// submissions maps each op to the writer it was first submitted to; extra lists the other
// writers an op was submitted to as well.
func (x *attributionJudge) submissions(lo, hi int64, nOps int, wid writerIDs) (*idMap, map[int64][]int32) {
	submitted := newIDMap(lo, hi, nOps)
	extra := map[int64][]int32{}
	for _, p := range x.ops {
		e := &x.ev[p]
		if e.Outcome == history.Fail {
			continue
		}
		w := wid.id(e.Writer)
		for _, op := range e.Ops {
			if prev, ok := submitted.get(op); ok {
				if prev != w {
					extra[op] = append(extra[op], w)
				}
				continue
			}
			submitted.set(op, w)
		}
	}
	return submitted, extra
}

// attributionFailure tells the first violation: op acknowledged by ack p, either a second
// time (other is the first ack) or by a writer it was not submitted to (other is -1).
func (x *attributionJudge) attributionFailure(r InvariantResult, p, other int32, op int64) InvariantResult {
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s of ack attribution", plural(r.Violations, "violation", "violations"))
	e := &x.ev[p]
	if other >= 0 {
		o := &x.ev[other]
		r.Narrative = fmt.Sprintf("op %d was acknowledged twice: by %s (term %d) at %s and again by %s (term %d) at %s",
			op, o.Writer, o.Term, secs(o.Complete), e.Writer, e.Term, secs(e.Complete))
		r.Counterexample = x.idsOf(other, p)
		return r
	}
	r.Narrative = fmt.Sprintf("op %d was acknowledged by %s (term %d) at %s, but no client submitted it to %s",
		op, e.Writer, e.Term, secs(e.Complete), e.Writer)
	r.Counterexample = x.idsOf(p)
	return r
}

// fencedAnswers are the protocol steps that can come back fenced.
var fencedAnswers = map[history.Kind]bool{history.Claim: true, history.CAS: true, history.Sync: true,
	history.Adopt: true, history.Revert: true, history.Transfer: true}

// retriedAfterFenced finds a protocol step (a claim, CAS, sync, adoption, revert or
// transfer) that came back fenced and a step of the same kind, by the same writer in the same
// incarnation at the same term, invoked after it completed: fenced is an answer, not a
// failure to retry. It returns their positions, or -1, -1.
func (x *exclusionJudge) retriedAfterFenced() (int32, int32) {
	type step struct {
		w     string
		start time.Duration
		kind  history.Kind
		term  int64
	}
	fenced := map[step]int32{}
	for _, p := range x.order {
		e := &x.ev[p]
		if !fencedAnswers[e.Kind] {
			continue
		}
		k := step{e.Writer, x.incarnationStart(e.Writer, e.Invoke), e.Kind, e.Term}
		if f, ok := fenced[k]; ok && x.ev[f].Complete < e.Invoke {
			return f, p
		}
		if e.Outcome == history.FencedOut {
			if _, ok := fenced[k]; !ok {
				fenced[k] = p
			}
		}
	}
	return -1, -1
}

// fenceEnds are the steps whose fenced answer ends the writer's service: the writer records
// its Fenced event (becomes fenced for good) rather than standing by, retrying or serving on.
// A revert that meets a moved key stands down instead, and is judged as a stand-down.
var fenceEnds = map[history.Kind]bool{history.Promote: true, history.Claim: true, history.CAS: true,
	history.Sync: true, history.Adopt: true, history.Transfer: true}

// unrecordedFence finds a step of fenceEnds that came back fenced while no Fenced event of
// its writer follows in the same incarnation, nor a Crash (a crash ends the incarnation before
// the writer could record anything). It returns the step's position, or -1. A system's node
// (Expect.LedgerActors) is left out: its promotion refused as fenced is the cluster's
// answer, and the node says itself when it is fenced. A writer told it
// is fenced that does not say so would stand by as a copy that may be promoted again, or hide
// from the history that it stopped for good.
func (x *exclusionJudge) unrecordedFence() int32 {
	ended := map[string][]time.Duration{} // writer -> invoke times of its Fenced and Crash events
	for _, p := range x.fenced {
		e := &x.ev[p]
		ended[e.Writer] = append(ended[e.Writer], e.Invoke)
	}
	for _, p := range x.crashes {
		e := &x.ev[p]
		ended[e.Writer] = append(ended[e.Writer], e.Invoke)
	}
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Outcome != history.FencedOut || !fenceEnds[e.Kind] || slices.Contains(x.in.Expect.LedgerActors, e.Writer) {
			continue
		}
		if !slices.ContainsFunc(ended[e.Writer], func(t time.Duration) bool { return t >= e.Invoke }) {
			return p
		}
	}
	return -1
}

// FencedTerminal: after a writer's Fenced event (ordered by completion, then ID), no Ack and
// no ok Claim, Adopt or Revert by that writer until its next Crash (a restart is a new
// incarnation). A StandDown at term T is terminal for T in the same way: no Ack and no ok
// acquisition at T afterwards in that incarnation. A relocation target that gave a handoff
// up may serve later only under a grant at another term.
func (x *exclusionJudge) fencedTerminal() InvariantResult {
	r := newResult(FencedTerminal)
	type stop struct {
		p     int32
		start time.Duration
	}
	byWriter := map[string][]stop{}
	for _, p := range x.firstFenced() {
		e := &x.ev[p]
		byWriter[e.Writer] = append(byWriter[e.Writer], stop{p, x.incarnationStart(e.Writer, e.Invoke)})
	}
	fences, standDowns := len(byWriter), 0
	for _, p := range x.standDowns {
		e := &x.ev[p]
		byWriter[e.Writer] = append(byWriter[e.Writer], stop{p, x.incarnationStart(e.Writer, e.Invoke)})
		standDowns++
	}
	if p, q := x.retriedAfterFenced(); q >= 0 {
		f, e := &x.ev[p], &x.ev[q]
		r.Status, r.Violations = Fail, 1
		r.Explanation = "a writer tried a protocol step again after it came back fenced"
		r.Narrative = fmt.Sprintf("%s's %s at term %d came back fenced at %s (%q), and %s tried it again at %s",
			f.Writer, f.Kind, f.Term, secs(f.Complete), f.Err, e.Writer, secs(e.Invoke))
		r.Counterexample = x.idsOf(p, q)
		return r
	}
	if p := x.unrecordedFence(); p >= 0 {
		e := &x.ev[p]
		r.Status, r.Violations = Fail, 1
		r.Explanation = "a writer came back fenced and did not become fenced"
		r.Narrative = fmt.Sprintf("%s's %s at term %d came back fenced at %s (%q), and %s never recorded that it was fenced",
			e.Writer, e.Kind, e.Term, secs(e.Complete), e.Err, e.Writer)
		r.Counterexample = x.idsOf(p)
		return r
	}
	if len(byWriter) == 0 {
		r.Explanation = "no writer was fenced or stood down"
		return r
	}
	var firstF, firstE int32 = -1, -1
	check := func(p int32) {
		e := &x.ev[p]
		start := x.incarnationStart(e.Writer, e.Invoke)
		for _, f := range byWriter[e.Writer] {
			fe := &x.ev[f.p]
			if f.start != start || (fe.Kind == history.StandDown && fe.Term != e.Term) {
				continue
			}
			if fe.Complete < e.Complete || (fe.Complete == e.Complete && fe.ID < e.ID) {
				r.Violations++
				if firstE < 0 || x.ev[p].Complete < x.ev[firstE].Complete {
					firstF, firstE = f.p, p
				}
				return
			}
		}
	}
	for _, p := range x.acks {
		check(p)
	}
	for _, a := range x.acqs {
		check(a.pos)
	}
	if r.Violations == 0 {
		switch {
		case standDowns == 0:
			r.Explanation = fmt.Sprintf("%s fenced; none acted afterwards", plural(fences, "writer", "writers"))
		case fences == 0:
			r.Explanation = fmt.Sprintf("%s; none acted afterwards at its term", plural(standDowns, "stand-down", "stand-downs"))
		default:
			r.Explanation = fmt.Sprintf("%s fenced and %s; none acted afterwards", plural(fences, "writer", "writers"),
				plural(standDowns, "stand-down", "stand-downs"))
		}
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s by writers after they were fenced or stood down", plural(r.Violations, "action", "actions"))
	f, e := &x.ev[firstF], &x.ev[firstE]
	what := "acknowledged " + opList(e.Ops)
	if e.Kind != history.Ack {
		what = fmt.Sprintf("%s at term %d", verbFor(e.Kind), e.Term)
	}
	verb := "was fenced"
	if f.Kind == history.StandDown {
		verb = "stood down"
	}
	r.Narrative = fmt.Sprintf("%s %s at %s (term %d: %q) and still %s at %s",
		f.Writer, verb, secs(f.Complete), f.Term, f.Err, what, secs(e.Complete))
	r.Counterexample = x.idsOf(firstF, firstE)
	return r
}
