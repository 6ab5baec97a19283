package checker

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"github.com/fencebench/fencebench/history"
)

// fenceSteps are the steps that end in a conditional write of a fence key: the writer's own
// answer to that write decides how the step ends.
var fenceSteps = map[history.Kind]bool{
	history.Claim: true, history.CAS: true, history.Adopt: true, history.Transfer: true, history.Revert: true,
}

// A definite answer the protocol classifies one way only (fencing-protocol.md, error
// classification): 403 AccessDenied is a configuration error, which the step neither
// retries nor takes for fencing, so it fails; 404 to an If-Match write is a key gone, which
// fences (a revert stands down), and is never an unknown outcome or a success. An answer the
// store adapter classified as unknown (no response, a 5xx, a 409 conflict) is the opposite:
// the step may be retried, so it never fails on it.
const accessDenied = "AccessDenied"

// misreadAnswer returns the first fence step (a claim, CAS, adoption, transfer or revert)
// that took the answer one of its own requests got for another (-1 if none), how many did,
// and what the answer was. Two requests are read: the step's last conditional write (a 403
// fails the step, a 404 to If-Match fences it), and its last request of any kind on its key,
// or listing or batch delete of the fence keys (a 403 neither succeeds nor leaves the
// outcome unknown; an unknown outcome neither fails the step nor ends it ok: a step decides
// only on answers). A 403 to a read may end a step fenced, and an unknown outcome of a
// listing may end it failed: a fenced decision (a refused revert fails) is followed by a
// listing that only names the highest term, or by the withdrawal of a lost key. A step that
// overlaps another fence step of its writer is not judged: their requests cannot be told
// apart. A step whose read of its key was answered with another object's content (the
// ledger's misdirect action) fails: content that is not the key's own is unrecognized,
// never a verdict and never a success.
func (x *index) misreadAnswer() (first int32, n int, answer string) {
	type wk struct{ writer, key string }
	conds := map[wk][]int32{}
	calls := map[wk][]int32{}     // a writer's requests on a fence key; key "": its listings and batch deletes
	steps := map[string][]int32{} // every fence step of a writer
	for _, p := range x.order {
		switch e := &x.ev[p]; {
		case fenceSteps[e.Kind]:
			steps[e.Writer] = append(steps[e.Writer], p)
		case e.Kind == history.StorePutIfAbsent || e.Kind == history.StorePutIfMatch:
			conds[wk{e.Writer, e.Key}] = append(conds[wk{e.Writer, e.Key}], p)
			fallthrough
		case e.Kind.StoreCall() && isFenceKey(e.Key):
			calls[wk{e.Writer, e.Key}] = append(calls[wk{e.Writer, e.Key}], p)
			if e.Kind == history.StoreList || e.Kind == history.StoreDeleteMany {
				calls[wk{e.Writer, ""}] = append(calls[wk{e.Writer, ""}], p)
			}
		}
	}
	for w, ps := range calls {
		if w.key == "" {
			calls[w] = slices.DeleteFunc(ps, x.gateListing)
		}
	}
	first = -1
	for _, p := range x.order {
		e := &x.ev[p]
		if !fenceSteps[e.Kind] || x.overlapsStep(steps[e.Writer], p) {
			continue
		}
		a := ""
		if c := x.lastWithin(conds[wk{e.Writer, e.Key}], e); c != nil {
			switch {
			case c.Code == accessDenied && e.Outcome != history.Fail:
				a = fmt.Sprintf("%d %s", c.Status, c.Code)
			case c.Kind == history.StorePutIfMatch && c.Status == 404 && (c.Code == "" || c.Code == "NoSuchKey") &&
				(e.Outcome == history.OK || e.Outcome == history.Ambiguous):
				a = "404 to If-Match"
			}
		}
		c := x.lastWithin(calls[wk{e.Writer, e.Key}], e)
		if l := x.lastWithin(calls[wk{e.Writer, ""}], e); c == nil || l != nil && l.Invoke > c.Invoke {
			c = l
		}
		if a == "" && c != nil {
			switch {
			case c.Code == accessDenied && (e.Outcome == history.OK || e.Outcome == history.Ambiguous):
				a = fmt.Sprintf("%d %s to its %s", c.Status, c.Code, c.Kind)
			case c.Outcome == history.Ambiguous && e.Outcome == history.Fail && c.Kind != history.StoreList:
				a = fmt.Sprintf("no definite answer to its %s", c.Kind)
			case c.Outcome == history.Ambiguous && e.Outcome == history.OK:
				a = fmt.Sprintf("no definite answer to its %s, taken for success", c.Kind)
			}
		}
		if a == "" && e.Outcome != history.Fail && x.misdirectedWithin(e) {
			a = "another object's content to its read of the key (a misdirected read)"
		}
		if a == "" {
			continue
		}
		if first < 0 {
			first, answer = p, a
		}
		n++
	}
	return first, n, answer
}

// gateListing reports whether the store call at p is a segment gate's listing of the fence
// keys: a publication or collection of its writer begins within ledgerSlack of its end (an
// allowed gate records nothing of its own), or a refused one spans it. A gate runs beside
// the fence steps, and its fail-open or fail-closed reading of an unknown outcome is its own.
func (x *index) gateListing(p int32) bool {
	l := &x.ev[p]
	if l.Kind != history.StoreList {
		return false
	}
	for _, q := range x.orderFrom(l.Invoke - ledgerSlack) {
		e := &x.ev[q]
		if e.Invoke > l.Complete+ledgerSlack {
			break
		}
		if e.Writer == l.Writer && (e.Kind == history.Publish || e.Kind == history.Collect) &&
			e.Complete >= l.Complete {
			return true
		}
	}
	return false
}

// orderFrom returns the positions of x.order invoked at t or later, in history order.
func (x *index) orderFrom(t time.Duration) []int32 {
	return x.order[sort.Search(len(x.order), func(i int) bool { return x.ev[x.order[i]].Invoke >= t }):]
}

// lastWithin returns the last of the requests ps (in invoke order) invoked within e's span,
// if it also completed within it, or nil.
func (x *index) lastWithin(ps []int32, e *history.Event) *history.Event {
	i := sort.Search(len(ps), func(i int) bool { return x.ev[ps[i]].Invoke > e.Complete }) - 1
	if i < 0 {
		return nil
	}
	c := &x.ev[ps[i]]
	if c.Invoke < e.Invoke || c.Complete > e.Complete {
		return nil
	}
	return c
}

// overlapsStep reports whether another of the steps ps (one writer's, in invoke order)
// overlaps step p's span.
func (x *index) overlapsStep(ps []int32, p int32) bool {
	e := &x.ev[p]
	for _, q := range ps {
		o := &x.ev[q]
		if q != p && o.Invoke <= e.Complete && e.Invoke <= o.Complete {
			return true
		}
	}
	return false
}

// misdirect is the ledger's Action of a read answered with another object (faults.Misdirect).
const misdirect = "misdirect"

// misdirectedWithin reports whether a read of e's key by e's writer, answered with another
// object's content, reached it within e's span.
func (x *index) misdirectedWithin(e *history.Event) bool {
	path := x.pathOf(e.Writer)
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		if l.Action == misdirect && l.Writer == path && l.Key == e.Key && l.Method == "GET" && l.Delivered &&
			l.Status == 200 && l.Time >= e.Invoke && l.Done <= e.Complete {
			return true
		}
	}
	return false
}
