package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// durabilityJudge judges what an acknowledgement promises: NoAckedWriteLoss, TargetAcksAreDurable
// and RecoverySeesAcked.
type durabilityJudge struct{ *index }

func (x *durabilityJudge) noAckedWriteLoss() (InvariantResult, []LostWrite) {
	r := newResult(NoAckedWriteLoss)
	if read, ack, op := x.restoredWithoutAcked(); read >= 0 {
		e, a := &x.ev[read], &x.ev[ack]
		r.Status, r.Violations = Fail, 1
		r.Explanation = "a promotion's restore read is missing an op acknowledged before it began"
		r.Narrative = fmt.Sprintf("op %d, acknowledged by %s (term %d) at %s, is missing from %s's restore read at term %d, "+
			"which began at %s: the promoted copy starts its term without it", op, a.Writer, a.Term, secs(a.Complete),
			e.Writer, e.Term, secs(e.Invoke))
		r.Counterexample = x.idsOf(ack, read)
		return r, nil
	}
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

// restoredWithoutAcked finds a promotion's restore read (a RestoreRead at a term, recorded
// ok) that is missing an op whose Ack completed before the read began, and returns the read,
// the Ack and the op; -1 when there is none. An op acknowledged is named by the lineage of
// the newest metadata from then on (its CAS landed after its metadata, and no CAS lands after
// a higher or equal term's seal), and a restore read follows the newest metadata: a promoted
// copy that misses one took a failed or partial read for the restore point, and starts its
// term without what its predecessor acknowledged, whatever the final auditor later sees.
func (x *durabilityJudge) restoredWithoutAcked() (int32, int32, int64) {
	for _, p := range x.restores {
		e := &x.ev[p]
		if e.Term == 0 || e.Outcome != history.OK {
			continue
		}
		ack, op := int32(-1), int64(0)
		x.missingAcks(e.Ops, e.Invoke, func(a int32, o int64) bool { ack, op = a, o; return false })
		if ack >= 0 {
			return p, ack, op
		}
	}
	return -1, -1, 0
}

// missingAcks calls fn with each op of an Ack completed before before that ops lacks, and
// its Ack, in history order, until fn returns false.
func (x *durabilityJudge) missingAcks(ops []int64, before time.Duration, fn func(ack int32, op int64) bool) {
	has := make(map[int64]bool, len(ops))
	for _, op := range ops {
		has[op] = true
	}
	for _, a := range x.acks {
		ack := &x.ev[a]
		if ack.Complete >= before {
			continue
		}
		for _, op := range ack.Ops {
			if !has[op] && !fn(a, op) {
				return
			}
		}
	}
}

// narrateLoss tells how op lw.Op, acknowledged at ack event p, went missing: who acked it,
// through which CAS, and which other writer took ownership and read its restore point around
// that time.
func (x *durabilityJudge) narrateLoss(lw LostWrite, p int32, more int) (string, []int64) {
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
	ids := x.idsOf(p, cas, restore)
	if succ >= 0 {
		ids = append(ids, x.acqs[succ].id)
		slices.Sort(ids)
	}
	return b.String(), slices.Compact(ids)
}

// successor picks the other writer's acquisition (at a term >= term) that best explains a
// loss at time t: the latest one completed by t, else the first one after.
func (x *durabilityJudge) successor(w string, term int64, t time.Duration) int {
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

func (x *durabilityJudge) restoreAfter(w string, t time.Duration) int32 {
	for _, p := range x.restores {
		if e := &x.ev[p]; e.Writer == w && e.Invoke >= t {
			return p
		}
	}
	return -1
}

func (x *durabilityJudge) targetAcksAreDurable() InvariantResult {
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

// recoverySeesAcked: every ok RestoreRead at term 0 (a copy that recovered while the primary
// worked, as a replica does; the span runs from the recovery's start to its finish and Ops is
// the copy's op set at the finish) must contain every op whose Ack completed before the
// recovery finished: acknowledged before, an op is in the snapshot the copy read or was
// replicated to it, or the recovery had to fail and start over.
func (x *durabilityJudge) recoverySeesAcked() InvariantResult {
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
		x.missingAcks(e.Ops, e.Complete, func(a int32, op int64) bool {
			r.Violations++
			if firstRead < 0 {
				firstRead, firstAck, firstOp = p, a, op
			}
			return true
		})
	}
	if reads == 0 {
		r.Explanation = "no copy recovered without a term"
		return r
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s held every op acknowledged before it finished", plural(reads, "recovery", "recoveries"))
		return r
	}
	r.Status = Fail
	e, ack := &x.ev[firstRead], &x.ev[firstAck]
	r.Explanation = fmt.Sprintf("%s acknowledged before a recovery finished but missing from it", plural(r.Violations, "op", "ops"))
	r.Narrative = fmt.Sprintf("op %d, acknowledged by %s (term %d) at %s, is missing from %s's recovery, which ran from %s "+
		"to %s (%s)", firstOp, ack.Writer, ack.Term, secs(ack.Complete), e.Writer, secs(e.Invoke), secs(e.Complete), orNone(e.Detail))
	r.Counterexample = x.idsOf(firstAck, firstRead)
	return r
}

func orNone(s string) string {
	if s == "" {
		return "no metadata file"
	}
	return s
}
