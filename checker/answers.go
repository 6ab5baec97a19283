package checker

import (
	"fmt"
	"sort"

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
// fences (a revert stands down), and is never an unknown outcome or a success.
const accessDenied = "AccessDenied"

// misreadAnswer returns the first fence step (a claim, CAS, adoption, transfer or revert)
// that took the definite answer its last conditional write got for another (-1 if none),
// how many did, and what the answer was.
func (x *index) misreadAnswer() (first int32, n int, answer string) {
	type wk struct{ writer, key string }
	conds := map[wk][]int32{}
	for _, p := range x.order {
		if e := &x.ev[p]; e.Kind == history.StorePutIfAbsent || e.Kind == history.StorePutIfMatch {
			conds[wk{e.Writer, e.Key}] = append(conds[wk{e.Writer, e.Key}], p)
		}
	}
	first = -1
	for _, p := range x.order {
		e := &x.ev[p]
		if !fenceSteps[e.Kind] {
			continue
		}
		ws := conds[wk{e.Writer, e.Key}]
		// The last write invoked within the step's span (writes are in invoke order).
		i := sort.Search(len(ws), func(i int) bool { return x.ev[ws[i]].Invoke > e.Complete }) - 1
		if i < 0 {
			continue
		}
		c := &x.ev[ws[i]]
		if c.Invoke < e.Invoke || c.Complete > e.Complete {
			continue
		}
		var a string
		switch {
		case c.Code == accessDenied && e.Outcome != history.Fail:
			a = fmt.Sprintf("%d %s", c.Status, c.Code)
		case c.Kind == history.StorePutIfMatch && c.Status == 404 && (c.Code == "" || c.Code == "NoSuchKey") &&
			(e.Outcome == history.OK || e.Outcome == history.Ambiguous):
			a = "404 to If-Match"
		default:
			continue
		}
		if first < 0 {
			first, answer = p, a
		}
		n++
	}
	return first, n, answer
}
