package checker

import (
	"github.com/fencebench/fencebench/history"
)

// withdrawal is what one claim did with its own term's key after it lost the claim
// (fencing-protocol.md, claim step 5.2, "withdraw").
type withdrawal struct {
	claim int32 // the claim step
	del   int32 // its delete of its key, or -1
	// owned: the claim created the key (its If-None-Match create answered 200 within its
	// span) and its last read of the key before the delete (or before it ended) returned
	// the version that create made.
	owned bool
	// relisted: after that read it listed the fence keys (the re-list that finds a higher
	// term), so a fenced end means a higher term superseded it mid-claim.
	relisted bool
}

// withdrawals reads every claim step that did not overlap another fence step of its writer
// (their requests cannot be told apart) and whose requests on its key the history holds.
func (x *index) withdrawals() []withdrawal {
	type wk struct{ writer, key string }
	calls := map[wk][]int32{}
	lists := map[string][]int32{}
	steps := map[string][]int32{}
	for _, p := range x.order {
		switch e := &x.ev[p]; {
		case fenceSteps[e.Kind]:
			steps[e.Writer] = append(steps[e.Writer], p)
		case e.Kind == history.StoreList && isFenceKey(e.Key):
			lists[e.Writer] = append(lists[e.Writer], p)
		case e.Kind.StoreCall() && isFenceKey(e.Key):
			calls[wk{e.Writer, e.Key}] = append(calls[wk{e.Writer, e.Key}], p)
		}
	}
	var out []withdrawal
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Kind != history.Claim || e.Key == "" || x.overlapsStep(steps[e.Writer], p) {
			continue
		}
		w := withdrawal{claim: p, del: -1}
		var created, read *history.Event
		for _, q := range calls[wk{e.Writer, e.Key}] {
			c := &x.ev[q]
			if c.Invoke < e.Invoke || c.Complete > e.Complete {
				continue
			}
			switch c.Kind {
			case history.StorePutIfAbsent:
				if c.Outcome == history.OK {
					created = c
				}
			case history.StoreGet:
				if w.del < 0 {
					read = c
				}
			case history.StoreDelete:
				if w.del < 0 {
					w.del = q
				}
			}
		}
		w.owned = created != nil && read != nil && read.Invoke > created.Complete &&
			read.Outcome == history.OK && read.Token == created.Token
		if w.owned {
			for _, q := range lists[e.Writer] {
				l := &x.ev[q]
				if l.Invoke > read.Complete && l.Complete <= e.Complete {
					w.relisted = true
					break
				}
			}
		}
		out = append(out, w)
	}
	return out
}

// unownedWithdrawal returns the first claim that deleted its own term's key although it had
// not created it, or had last read it holding another writer's version (-1 if none), and how
// many did. Such a key was won by arbitration, or taken over mid-claim by an equal-term twin:
// deleting it fences its owner, which had done nothing to lose it.
func (x *index) unownedWithdrawal() (first int32, n int) {
	first = -1
	for _, w := range x.withdrawals() {
		if w.del >= 0 && !w.owned {
			if first < 0 {
				first = w.claim
			}
			n++
		}
	}
	return first, n
}

// keptStaleGrant returns the first claim that created its key, read its own version back,
// re-listed and ended fenced (a higher term superseded it mid-claim) without deleting the
// key (-1 if none), and how many did. The stale key stays among the fence keys, where the
// newer owner's claims find a lower term surviving their sweep.
func (x *index) keptStaleGrant() (first int32, n int) {
	first = -1
	for _, w := range x.withdrawals() {
		if w.owned && w.relisted && w.del < 0 && x.ev[w.claim].Outcome == history.FencedOut {
			if first < 0 {
				first = w.claim
			}
			n++
		}
	}
	return first, n
}
