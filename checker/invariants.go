package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// guarantees states each invariant in one sentence; the report prints it next to the verdict.
var guarantees = map[string]string{
	NoAckedWriteLoss: "every acknowledged op is in the auditor's recovered set",
	MutualExclusion: "once a writer's ownership acquisition (claim, adopt, revert) completed, no CAS invoked " +
		"afterwards by another writer at a lower term, or at the same term with an older acquisition, is turned into an ack",
	AckAttribution: "every op is acknowledged at most once, by one writer, and only by a writer it was submitted to",
	FencedTerminal: "a writer that reported fenced never acknowledges nor acquires ownership again in that incarnation",
	SeqMonotonic:   "the accepted writes of each fence key advance seq by exactly one, and no token (ETag) repeats on a key",
	NoSpuriousFencing: "a writer is fenced only after another writer claimed a higher term, or legitimately " +
		"claimed, adopted or reverted its own term",
	TargetAcksAreDurable: "every op a relocation target acknowledged after adopting the fence is in the recovered set",
	HydrationIntegrity:   "a hydrating owner never finds missing a segment file its reference set lists",
	OwnerNeverReadUnsealed: "a writer reads its restore point or hydrates at term T only after its own claim at T " +
		"completed (a same-term relocation target hydrating is exempt)",
	StoreLinearizable: "the store's answers to the conditional writes, reads and deletes of each fence key, as the " +
		"ledger saw them, are linearizable as a compare-and-swap register",
	RecoverySeesAcked: "a copy recovering from the store (without a term) sees every op acknowledged before its " +
		"recovery read began",
	TimeToFence: "every superseded writer that keeps acting is fenced within the scenario's bound",
}

func newResult(name string) InvariantResult {
	return InvariantResult{Name: name, Status: Pass, Guarantee: guarantees[name]}
}

func idsOf(x *index, ps ...int32) []int64 {
	var ids []int64
	for _, p := range ps {
		if p >= 0 {
			ids = append(ids, x.ev[p].ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func verbFor(k history.Kind) string {
	switch k {
	case history.Adopt:
		return "adopted the fence"
	case history.Revert:
		return "reverted the fence"
	default:
		return "claimed"
	}
}

// --- NoAckedWriteLoss -----------------------------------------------------------------------

func (x *index) noAckedWriteLoss() (InvariantResult, []LostWrite) {
	r := newResult(NoAckedWriteLoss)
	if x.recovered == nil {
		if len(x.acks) == 0 {
			r.Explanation = "nothing was acknowledged and there is no auditor recovery"
			r.Status = Inconclusive
			return r, nil
		}
		r.Status = Inconclusive
		r.Explanation = "no auditor recovery (neither Final.Recovered nor an Audit event): durability cannot be judged"
		return r, nil
	}
	adoptedAt := map[string]time.Duration{}
	for _, a := range x.acqs {
		if a.kind == history.Adopt {
			if _, ok := adoptedAt[a.writer]; !ok {
				adoptedAt[a.writer] = a.complete
			}
		}
	}
	var lost []LostWrite
	var firstPos int32 = -1
	acked := 0
	for _, p := range x.acks {
		e := &x.ev[p]
		for _, op := range e.Ops {
			acked++
			if x.recoveredHas(op) {
				continue
			}
			at, adopted := adoptedAt[e.Writer]
			lost = append(lost, LostWrite{Op: op, Writer: e.Writer, Term: e.Term, AckedAt: e.Complete,
				AckEvent: e.ID, AfterAdopt: adopted && e.Complete > at})
			if firstPos < 0 {
				firstPos = p
			}
		}
	}
	if len(lost) == 0 {
		r.Explanation = fmt.Sprintf("all %s acknowledged are in %s", plural(acked, "op", "ops"), x.recoveredSrc)
		return r, nil
	}
	sort.SliceStable(lost, func(i, j int) bool { return lost[i].AckedAt < lost[j].AckedAt })
	r.Status = Fail
	r.Violations = len(lost)
	r.Explanation = fmt.Sprintf("%s acknowledged but missing from %s", plural(len(lost), "op", "ops"), x.recoveredSrc)
	r.Narrative, r.Counterexample = x.narrateLoss(lost[0], firstPos, len(lost)-1)
	return r, lost
}

// narrateLoss tells how op lw.Op, acknowledged at ack event p, went missing: who acked it,
// through which CAS, and which other writer took ownership and read its restore point around
// that time.
func (x *index) narrateLoss(lw LostWrite, p int32, more int) (string, []int64) {
	a := &x.ev[p]
	var b strings.Builder
	fmt.Fprintf(&b, "op %d, acknowledged by %s (term %d) at %s, is missing from %s",
		lw.Op, a.Writer, a.Term, secs(a.Complete), x.recoveredSrc)
	succ := x.successor(a.Writer, a.Term, a.Complete)
	var restore int32 = -1
	if succ >= 0 {
		s := x.acqs[succ]
		fmt.Fprintf(&b, "; %s (term %d) %s at %s", s.writer, s.term, verbFor(s.kind), secs(s.complete))
		restore = x.restoreAfter(s.writer, s.invoke)
		if restore >= 0 {
			fmt.Fprintf(&b, " and read its restore point at %s", secs(x.ev[restore].Invoke))
		}
	} else {
		b.WriteString("; no other writer acquired ownership before it")
	}
	cas := x.casOf(p)
	if cas >= 0 {
		c := &x.ev[cas]
		fmt.Fprintf(&b, "; %s's CAS on %s at %s was accepted (seq %d)", a.Writer, c.Key, secs(c.Invoke), c.Seq)
	}
	if a.Key != "" {
		for _, o := range x.in.Final.FenceKeys {
			if o.Key == a.Key {
				fmt.Fprintf(&b, "; %s was never deleted: it is still in the final listing", a.Key)
				break
			}
		}
	}
	if more > 0 {
		fmt.Fprintf(&b, "; %s also missing", plural(more, "more acknowledged op is", "more acknowledged ops are"))
	}
	ids := idsOf(x, p, cas, restore)
	if succ >= 0 {
		ids = append(ids, x.acqs[succ].id)
		slices.Sort(ids)
	}
	return b.String(), slices.Compact(ids)
}

// successor picks the other writer's acquisition (at a term >= term) that best explains a
// loss at time t: the latest one completed by t, else the first one after.
func (x *index) successor(w string, term int64, t time.Duration) int {
	best := -1
	for i, a := range x.acqs {
		if a.writer == w || a.term < term {
			continue
		}
		if a.complete <= t {
			best = i
			continue
		}
		if best < 0 {
			best = i
		}
		break
	}
	return best
}

func (x *index) restoreAfter(w string, t time.Duration) int32 {
	for _, p := range x.restores {
		if e := &x.ev[p]; e.Writer == w && e.Invoke >= t {
			return p
		}
	}
	return -1
}

// casOf finds the accepted CAS behind the ack at p: same writer, key and seq, invoked when
// the ack says.
func (x *index) casOf(p int32) int32 {
	a := &x.ev[p]
	var found int32 = -1
	for _, c := range x.cas {
		e := &x.ev[c]
		if e.Invoke > a.Complete {
			break
		}
		if e.Writer == a.Writer && e.Outcome == history.OK &&
			(e.Invoke == a.Invoke || (e.Key == a.Key && e.Seq == a.Seq)) {
			found = c
		}
	}
	return found
}

// --- MutualExclusion ------------------------------------------------------------------------

// MutualExclusion, for each ack by W at term Tw whose CAS was invoked at t: a violation when
// another writer V completed an acquisition before t at a term above Tw, or at Tw and after
// W's own latest acquisition completed before t. An acquisition at a lower term never counts
// against W: it is the lower-term writer's acks that are then in violation.
func (x *index) mutualExclusion() InvariantResult {
	r := newResult(MutualExclusion)
	n := len(x.acqs)
	// Prefix maxima of term over distinct writers: best and the best of any other writer.
	type top struct {
		term int64
		i    int
	}
	best := make([]top, n)
	second := make([]top, n)
	for i, a := range x.acqs {
		b, s := top{-1 << 63, -1}, top{-1 << 63, -1}
		if i > 0 {
			b, s = best[i-1], second[i-1]
		}
		switch {
		case b.i < 0 || a.term > b.term:
			if b.i >= 0 && x.acqs[b.i].writer != a.writer {
				s = b
			}
			b = top{a.term, i}
		case x.acqs[b.i].writer != a.writer && (s.i < 0 || a.term > s.term):
			s = top{a.term, i}
		}
		best[i], second[i] = b, s
	}
	firstAck, firstV := int32(-1), -1
	for _, p := range x.acks {
		e := &x.ev[p]
		t := e.Invoke
		pfx := sort.Search(n, func(i int) bool { return x.acqs[i].complete >= t })
		if pfx == 0 {
			continue
		}
		v := -1
		b, s := best[pfx-1], second[pfx-1]
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
			for i := pfx - 1; i >= 0; i-- {
				a := x.acqs[i]
				if a.writer == e.Writer {
					break
				}
				if a.term == e.Term {
					v = i
					break
				}
			}
		}
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
	r.Counterexample = idsOf(x, firstAck, cas)
	r.Counterexample = append(r.Counterexample, v.id)
	slices.Sort(r.Counterexample)
	r.Counterexample = slices.Compact(r.Counterexample)
	return r
}

// --- AckAttribution -------------------------------------------------------------------------

func (x *index) ackAttribution() (InvariantResult, int) {
	r := newResult(AckAttribution)
	var lo, hi int64
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
	nOps := 0
	for _, p := range x.ops {
		for _, op := range x.ev[p].Ops {
			note(op)
			nOps++
		}
	}
	nAcked := 0
	for _, p := range x.acks {
		for _, op := range x.ev[p].Ops {
			note(op)
			nAcked++
		}
	}
	writerIDs := map[string]int32{}
	wid := func(w string) int32 {
		id, ok := writerIDs[w]
		if !ok {
			id = int32(len(writerIDs))
			writerIDs[w] = id
		}
		return id
	}
	submitted := newIDMap(lo, hi, nOps)
	extra := map[int64][]int32{} // ops submitted to more than one writer
	for _, p := range x.ops {
		e := &x.ev[p]
		if e.Outcome == history.Fail {
			continue
		}
		w := wid(e.Writer)
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
	checkSubmission := len(x.ops) > 0
	ackedBy := newIDMap(lo, hi, nAcked)
	distinct := 0
	var firstP, firstOther int32 = -1, -1
	var firstOp int64
	var firstKind string
	for _, p := range x.acks {
		e := &x.ev[p]
		w := wid(e.Writer)
		for _, op := range e.Ops {
			if prev, ok := ackedBy.get(op); ok {
				r.Violations++
				if firstP < 0 {
					firstP, firstOther, firstOp, firstKind = p, prev, op, "twice"
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
				firstP, firstOther, firstOp, firstKind = p, -1, op, "unsubmitted"
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
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s of ack attribution", plural(r.Violations, "violation", "violations"))
	e := &x.ev[firstP]
	if firstKind == "twice" {
		o := &x.ev[firstOther]
		r.Narrative = fmt.Sprintf("op %d was acknowledged twice: by %s (term %d) at %s and again by %s (term %d) at %s",
			firstOp, o.Writer, o.Term, secs(o.Complete), e.Writer, e.Term, secs(e.Complete))
		r.Counterexample = idsOf(x, firstOther, firstP)
		return r, distinct
	}
	r.Narrative = fmt.Sprintf("op %d was acknowledged by %s (term %d) at %s, but no client submitted it to %s",
		firstOp, e.Writer, e.Term, secs(e.Complete), e.Writer)
	r.Counterexample = idsOf(x, firstP)
	return r, distinct
}

// --- FencedTerminal -------------------------------------------------------------------------

// FencedTerminal: after a writer's Fenced event (ordered by completion, then ID), no Ack and
// no ok Claim, Adopt or Revert by that writer until its next Crash (a restart is a new
// incarnation).
func (x *index) fencedTerminal() InvariantResult {
	r := newResult(FencedTerminal)
	type fence struct {
		p     int32
		start time.Duration
	}
	byWriter := map[string][]fence{}
	for _, p := range x.firstFenced() {
		e := &x.ev[p]
		byWriter[e.Writer] = append(byWriter[e.Writer], fence{p, x.incarnationStart(e.Writer, e.Invoke)})
	}
	if len(byWriter) == 0 {
		r.Explanation = "no writer was fenced"
		return r
	}
	var firstF, firstE int32 = -1, -1
	check := func(p int32) {
		e := &x.ev[p]
		fs := byWriter[e.Writer]
		if len(fs) == 0 {
			return
		}
		start := x.incarnationStart(e.Writer, e.Invoke)
		for _, f := range fs {
			fe := &x.ev[f.p]
			if f.start != start {
				continue
			}
			if fe.Complete < e.Complete || (fe.Complete == e.Complete && fe.ID < e.ID) {
				r.Violations++
				if firstE < 0 || x.ev[p].Complete < x.ev[firstE].Complete {
					firstF, firstE = f.p, p
				}
			}
			return
		}
	}
	for _, p := range x.acks {
		check(p)
	}
	for _, a := range x.acqs {
		check(a.pos)
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s fenced; none acted afterwards", plural(len(byWriter), "writer", "writers"))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s by writers after they were fenced", plural(r.Violations, "action", "actions"))
	f, e := &x.ev[firstF], &x.ev[firstE]
	what := "acknowledged " + opList(e.Ops)
	if e.Kind != history.Ack {
		what = fmt.Sprintf("%s at term %d", verbFor(e.Kind), e.Term)
	}
	r.Narrative = fmt.Sprintf("%s was fenced at %s (term %d: %q) and still %s at %s",
		f.Writer, secs(f.Complete), f.Term, f.Err, what, secs(e.Complete))
	r.Counterexample = idsOf(x, firstF, firstE)
	return r
}

// --- SeqMonotonic ---------------------------------------------------------------------------

type chainWrite struct {
	seq    int64
	token  string
	pos    int32 // event position; -1 for a write known from the ledger only
	writer string
}

// SeqMonotonic: per fence key, the accepted writes (ok Claim, CAS, Transfer, Revert, Adopt,
// plus ambiguous ones the ledger shows applied) sorted by seq must form a chain: no two
// distinct writes at one seq (a fork; this includes a recreated key), and no gap unless an
// ambiguous write of unknown outcome at the missing seq may fill it. Ordering by seq rather
// than by time keeps the check independent of response delays. Tokens must not repeat on a
// key, neither in the events nor among the ETags the ledger saw applied conditional PUTs
// return.
func (x *index) seqMonotonic() InvariantResult {
	r := newResult(SeqMonotonic)
	chains := map[string][]chainWrite{}
	excused := map[string]map[int64]bool{}
	var ledgerByID map[int64]int
	for _, i := range x.order {
		e := &x.ev[i]
		if !writesKey(e.Kind) || e.Key == "" {
			continue
		}
		switch e.Outcome {
		case history.OK:
			chains[e.Key] = append(chains[e.Key], chainWrite{e.Seq, normToken(e.Token), i, e.Writer})
		case history.Ambiguous:
			res := x.resolved[i]
			switch res.Outcome {
			case ResolvedApplied:
				if ledgerByID == nil {
					ledgerByID = make(map[int64]int, len(x.in.Ledger))
					for j := range x.in.Ledger {
						ledgerByID[x.in.Ledger[j].ID] = j
					}
				}
				tok := ""
				for _, id := range res.Ledger {
					if l := &x.in.Ledger[ledgerByID[id]]; l.Applied() {
						tok = normToken(l.ETag)
					}
				}
				chains[e.Key] = append(chains[e.Key], chainWrite{e.Seq, tok, i, e.Writer})
			case ResolvedUnknown:
				if excused[e.Key] == nil {
					excused[e.Key] = map[int64]bool{}
				}
				excused[e.Key][e.Seq] = true
			}
		}
	}
	var firstA, firstB int32 = -1, -1
	var firstMsg string
	violate := func(a, b int32, msg string) {
		r.Violations++
		if firstMsg == "" {
			firstA, firstB, firstMsg = a, b, msg
		}
	}
	keys := make([]string, 0, len(chains))
	for k := range chains {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	writes := 0
	for _, k := range keys {
		ch := chains[k]
		writes += len(ch)
		// Stable: writes at one seq stay in history order.
		sort.SliceStable(ch, func(i, j int) bool { return ch[i].seq < ch[j].seq })
		// Drop repeats of one write (the same writer recording the same seq twice, e.g. an
		// ambiguous attempt later adopted by identity).
		out := ch[:0]
		for _, w := range ch {
			if n := len(out); n > 0 && out[n-1].seq == w.seq && out[n-1].writer == w.writer &&
				(out[n-1].token == w.token || out[n-1].token == "" || w.token == "") {
				if out[n-1].token == "" {
					out[n-1].token = w.token
				}
				continue
			}
			out = append(out, w)
		}
		ch = out
		tokens := map[string]int{}
		for i, w := range ch {
			if i > 0 {
				prev := ch[i-1]
				switch {
				case w.seq == prev.seq:
					violate(prev.pos, w.pos, fmt.Sprintf("%s has two accepted writes at seq %d: by %s and by %s",
						k, w.seq, prev.writer, w.writer))
				case w.seq > prev.seq+1:
					for s := prev.seq + 1; s < w.seq; s++ {
						if !excused[k][s] {
							violate(prev.pos, w.pos, fmt.Sprintf("%s jumps from seq %d (by %s) to seq %d (by %s): "+
								"seq %d was never accepted", k, prev.seq, prev.writer, w.seq, w.writer, s))
							break
						}
					}
				}
			}
			if w.token == "" {
				continue
			}
			if j, dup := tokens[w.token]; dup && ch[j].seq != w.seq {
				violate(ch[j].pos, w.pos, fmt.Sprintf("%s returned token %s twice: at seq %d (by %s) and at seq %d (by %s)",
					k, w.token, ch[j].seq, ch[j].writer, w.seq, w.writer))
			} else if !dup {
				tokens[w.token] = i
			}
		}
	}
	// The ledger's view: two applied conditional PUTs on one key must not yield one ETag.
	etags := map[[2]string]int64{}
	var ledgerDup []int64
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		if l.Method != "PUT" || !isFenceKey(l.Key) || !l.Applied() || l.ETag == "" ||
			(l.IfMatch == "" && l.IfNoneMatch == "") {
			continue
		}
		k := [2]string{l.Key, normToken(l.ETag)}
		if prev, dup := etags[k]; dup {
			r.Violations++
			if firstMsg == "" && ledgerDup == nil {
				ledgerDup = []int64{prev, l.ID}
				firstMsg = fmt.Sprintf("the store returned ETag %s twice on %s (ledger entries %d and %d): "+
					"an old token became valid again", k[1], l.Key, prev, l.ID)
			}
			continue
		}
		etags[k] = l.ID
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s on %s form gap-free chains with distinct tokens",
			plural(writes, "accepted fence write", "accepted fence writes"), plural(len(keys), "key", "keys"))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s of the per-key seq chain", plural(r.Violations, "violation", "violations"))
	r.Narrative = firstMsg
	r.Counterexample = idsOf(x, firstA, firstB)
	r.LedgerEntries = ledgerDup
	return r
}

// --- NoSpuriousFencing ----------------------------------------------------------------------

// NoSpuriousFencing: the first Fenced event of each incarnation of writer W at term T must be
// preceded (by invoke time, at or before the Fenced event completes) by one of:
//   - a Claim by another writer at a term above T that did not fail outright (its sweep may
//     have run even if the claim itself then failed retryably);
//   - an ok Claim by another writer at T that is a seal (equal-term arbitration);
//   - a Revert by another writer at T that possibly applied;
//   - an ok readopt Claim or a possibly applied Adopt by another writer X at T, provided X
//     owned the term legitimately: X had sealed T itself, or a Transfer to X that possibly
//     applied was not followed by an ok Revert of its transferrer before X's adoption.
func (x *index) noSpuriousFencing() InvariantResult {
	r := newResult(NoSpuriousFencing)
	fenced := x.firstFenced()
	var first int32 = -1
	var firstIllegit int32 = -1
	for _, p := range fenced {
		f := &x.ev[p]
		term := f.Term
		if term == 0 {
			term = x.termBefore(f.Writer, f.Complete)
		}
		ok, illegit := x.fenceJustified(f.Writer, term, f.Complete)
		if ok {
			continue
		}
		r.Violations++
		if first < 0 {
			first, firstIllegit = p, illegit
		}
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s, each after a legitimate supersession", plural(len(fenced), "fence", "fences"))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s without a legitimate supersession", plural(r.Violations, "fence", "fences"))
	f := &x.ev[first]
	term := f.Term
	if term == 0 {
		term = x.termBefore(f.Writer, f.Complete)
	}
	r.Narrative = fmt.Sprintf("%s (term %d) was fenced at %s (%q), but before then no other writer had claimed a "+
		"higher term, nor legitimately claimed, adopted or reverted term %d", f.Writer, term, secs(f.Complete), f.Err, term)
	if firstIllegit >= 0 {
		e := &x.ev[firstIllegit]
		verb := "adopted"
		if e.Kind == history.Claim {
			verb = "re-adopted"
		}
		r.Narrative += fmt.Sprintf("; %s %s term %d at %s without owning it (no seal of its own and no standing "+
			"transfer to it)", e.Writer, verb, term, secs(e.Complete))
	}
	r.Counterexample = idsOf(x, first, firstIllegit)
	return r
}

// termBefore is the term of w's latest claim or acquisition invoked by t.
func (x *index) termBefore(w string, t time.Duration) int64 {
	var term int64
	for _, p := range x.claims {
		if e := &x.ev[p]; e.Writer == w && e.Invoke <= t {
			term = e.Term
		}
	}
	for _, a := range x.acqs {
		if a.writer == w && a.invoke <= t && a.term > term {
			term = a.term
		}
	}
	return term
}

// fenceJustified reports whether w, at term, had been legitimately superseded by time t; when
// not, it returns an illegitimate same-term acquisition that may explain the fence (or -1).
func (x *index) fenceJustified(w string, term int64, t time.Duration) (bool, int32) {
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer == w || e.Outcome == history.Fail {
			continue
		}
		if e.Term > term {
			return true, -1
		}
		if e.Term == term && e.Outcome == history.OK && e.Detail != "readopt" {
			return true, -1
		}
	}
	var illegit int32 = -1
	check := func(ps []int32) bool {
		for _, p := range ps {
			e := &x.ev[p]
			if e.Invoke > t {
				break
			}
			if e.Writer == w || e.Term != term || !x.possiblyApplied(p) {
				continue
			}
			if e.Kind == history.Revert || x.ownsTermLegitimately(e.Writer, term, e.Invoke) {
				return true
			}
			if illegit < 0 {
				illegit = p
			}
		}
		return false
	}
	if check(x.reverts) || check(x.adopts) {
		return true, -1
	}
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer != w && e.Term == term && e.Outcome == history.OK && e.Detail == "readopt" {
			if x.ownsTermLegitimately(e.Writer, term, e.Invoke) {
				return true, -1
			}
			if illegit < 0 {
				illegit = p
			}
		}
	}
	return false, illegit
}

// ownsTermLegitimately reports whether writer xw could legitimately take term's chain at time
// t: it sealed the term itself, or a transfer to it stands (not reverted before t).
func (x *index) ownsTermLegitimately(xw string, term int64, t time.Duration) bool {
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

// --- TargetAcksAreDurable -------------------------------------------------------------------

func (x *index) targetAcksAreDurable() InvariantResult {
	r := newResult(TargetAcksAreDurable)
	adopted := map[string]int{} // writer -> index into acqs of its first adoption
	for i, a := range x.acqs {
		if a.kind == history.Adopt {
			if _, ok := adopted[a.writer]; !ok {
				adopted[a.writer] = i
			}
		}
	}
	if len(adopted) == 0 {
		r.Explanation = "no relocation target adopted the fence"
		return r
	}
	var firstP int32 = -1
	var firstOp int64
	acked := 0
	for _, p := range x.acks {
		e := &x.ev[p]
		i, ok := adopted[e.Writer]
		if !ok || e.Complete <= x.acqs[i].complete {
			continue
		}
		acked += len(e.Ops)
		if x.recovered == nil {
			continue
		}
		for _, op := range e.Ops {
			if !x.recoveredHas(op) {
				r.Violations++
				if firstP < 0 {
					firstP, firstOp = p, op
				}
			}
		}
	}
	if x.recovered == nil {
		if acked > 0 {
			r.Status = Inconclusive
			r.Explanation = "no auditor recovery: the targets' acks cannot be judged"
		} else {
			r.Explanation = "no relocation target acknowledged anything after adopting"
		}
		return r
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("all %s acknowledged by adopted targets are in %s",
			plural(acked, "op", "ops"), x.recoveredSrc)
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s acknowledged by an adopted target but missing from %s",
		plural(r.Violations, "op", "ops"), x.recoveredSrc)
	e := &x.ev[firstP]
	ad := x.acqs[adopted[e.Writer]]
	r.Narrative = fmt.Sprintf("op %d, acknowledged by relocation target %s (term %d) at %s after it adopted the fence "+
		"at %s, is missing from %s", firstOp, e.Writer, e.Term, secs(e.Complete), secs(ad.complete), x.recoveredSrc)
	ids := []int64{ad.id, e.ID}
	for _, a := range x.acqs {
		if a.writer != e.Writer && a.term == ad.term && a.kind == history.Revert && a.complete > ad.complete {
			r.Narrative += fmt.Sprintf("; source %s reverted the fence at %s and its revert was accepted", a.writer, secs(a.complete))
			ids = append(ids, a.id)
			break
		}
	}
	slices.Sort(ids)
	r.Counterexample = ids
	return r
}

// --- HydrationIntegrity ---------------------------------------------------------------------

// HydrationIntegrity: no Hydrate failed with 404 (a listed file vanished) — scoped, as in the
// segment-flow model, to owners: a hydrating writer superseded by a higher-term claim before
// the fetch completed may lose files, which is the correct outcome for it.
func (x *index) hydrationIntegrity() InvariantResult {
	r := newResult(HydrationIntegrity)
	var first int32 = -1
	skipped := 0
	for _, p := range x.hydrates {
		h := &x.ev[p]
		if h.Outcome != history.Fail || h.Status != 404 {
			continue
		}
		if x.supersededBy(h.Writer, h.Term, h.Complete) >= 0 {
			skipped++
			continue
		}
		r.Violations++
		if first < 0 {
			first = p
		}
	}
	note := ""
	if skipped > 0 {
		note = fmt.Sprintf(" (%s by superseded writers ignored)", plural(skipped, "missing file", "missing files"))
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s, none found a listed file missing%s",
			plural(len(x.hydrates), "hydration fetch", "hydration fetches"), note)
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s found a listed segment file missing%s",
		plural(r.Violations, "hydration fetch", "hydration fetches"), note)
	h := &x.ev[first]
	r.Narrative = fmt.Sprintf("%s (term %d), hydrating at %s, found segment file %s missing (404) although its "+
		"reference set lists it", h.Writer, h.Term, secs(h.Invoke), h.Key)
	var col int32 = -1
	for _, p := range x.collects {
		c := &x.ev[p]
		if c.Key == h.Key && c.Outcome == history.OK && c.Invoke <= h.Complete {
			col = p
		}
	}
	if col >= 0 {
		c := &x.ev[col]
		r.Narrative += fmt.Sprintf("; %s (term %d) collected it at %s", c.Writer, c.Term, secs(c.Complete))
	} else {
		r.Narrative += "; no recorded collection deleted it"
	}
	r.Counterexample = idsOf(x, first, col)
	return r
}

// supersededBy returns a claim by another writer at a term above term, not failed outright,
// invoked by t; -1 when none.
func (x *index) supersededBy(w string, term int64, t time.Duration) int32 {
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer != w && e.Term > term && e.Outcome != history.Fail {
			return p
		}
	}
	return -1
}

// --- OwnerNeverReadUnsealed -----------------------------------------------------------------

// OwnerNeverReadUnsealed: every RestoreRead, and every Hydrate not marked
// "relocation-target", by W at T is invoked after an ok Claim by W at T completed. Reads at
// term 0 are exempt: they are a recovering copy that holds no term and serves nothing as an
// owner (Hydrate Detail "recovery").
func (x *index) ownerNeverReadUnsealed() InvariantResult {
	r := newResult(OwnerNeverReadUnsealed)
	type wt struct {
		w    string
		term int64
	}
	sealed := map[wt]time.Duration{}
	sealEv := map[wt]int32{}
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Outcome != history.OK {
			continue
		}
		k := wt{e.Writer, e.Term}
		if t, ok := sealed[k]; !ok || e.Complete < t {
			sealed[k], sealEv[k] = e.Complete, p
		}
	}
	var first int32 = -1
	reads := 0
	check := func(p int32) {
		e := &x.ev[p]
		if e.Kind == history.Hydrate && e.Detail == "relocation-target" || e.Term == 0 {
			return
		}
		reads++
		if t, ok := sealed[wt{e.Writer, e.Term}]; ok && t <= e.Invoke {
			return
		}
		r.Violations++
		if first < 0 || e.Invoke < x.ev[first].Invoke {
			first = p
		}
	}
	for _, p := range x.restores {
		check(p)
	}
	for _, p := range x.hydrates {
		check(p)
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s, each after the reader's own claim", plural(reads, "read", "reads"))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s of remote state before the reader sealed its term", plural(r.Violations, "read", "reads"))
	e := &x.ev[first]
	what := "read its restore point"
	if e.Kind == history.Hydrate {
		what = "hydrated segment file " + e.Key
	}
	k := wt{e.Writer, e.Term}
	claim, ok := sealEv[k]
	if ok {
		r.Narrative = fmt.Sprintf("%s %s at term %d at %s before sealing: its claim of term %d completed only at %s",
			e.Writer, what, e.Term, secs(e.Invoke), e.Term, secs(x.ev[claim].Complete))
		r.Counterexample = idsOf(x, first, claim)
	} else {
		r.Narrative = fmt.Sprintf("%s %s at term %d at %s without ever claiming term %d",
			e.Writer, what, e.Term, secs(e.Invoke), e.Term)
		r.Counterexample = idsOf(x, first)
	}
	return r
}

// --- RecoverySeesAcked ----------------------------------------------------------------------

// recoverySeesAcked: every ok RestoreRead at term 0 (a copy recovering while the primary
// works, as a replica would) must contain every op whose Ack completed before the read was
// invoked. An op acknowledged while the read ran may or may not be in it.
func (x *index) recoverySeesAcked() InvariantResult {
	r := newResult(RecoverySeesAcked)
	reads := 0
	var firstRead, firstAck int32 = -1, -1
	var firstOp int64
	for _, p := range x.restores {
		e := &x.ev[p]
		if e.Term != 0 || e.Outcome != history.OK {
			continue
		}
		reads++
		has := make(map[int64]bool, len(e.Ops))
		for _, op := range e.Ops {
			has[op] = true
		}
		for _, a := range x.acks {
			ack := &x.ev[a]
			if ack.Complete >= e.Invoke {
				continue
			}
			for _, op := range ack.Ops {
				if has[op] {
					continue
				}
				r.Violations++
				if firstRead < 0 {
					firstRead, firstAck, firstOp = p, a, op
				}
			}
		}
	}
	if reads == 0 {
		r.Explanation = "no copy recovered without a term"
		return r
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s saw every op acknowledged before it began", plural(reads, "recovery", "recoveries"))
		return r
	}
	r.Status = Fail
	e, ack := &x.ev[firstRead], &x.ev[firstAck]
	r.Explanation = fmt.Sprintf("%s acknowledged before a recovery began but missing from it", plural(r.Violations, "op", "ops"))
	r.Narrative = fmt.Sprintf("op %d, acknowledged by %s (term %d) at %s, is missing from %s's recovery, which began at %s "+
		"and followed %s", firstOp, ack.Writer, ack.Term, secs(ack.Complete), e.Writer, secs(e.Invoke), orNone(e.Detail))
	r.Counterexample = idsOf(x, firstAck, firstRead)
	return r
}

func orNone(s string) string {
	if s == "" {
		return "no metadata file"
	}
	return s
}
