package writers

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// A sync attempt whose fence step goes unanswered (a 500, not applied) is tried again: the
// writer keeps its sync loop, the batch is acknowledged by the next attempt, and later ops
// sync too.
func TestASyncRetriesAnUnansweredFenceStep(t *testing.T) {
	r := memRig(t, nil)
	st := newFailStore(r.st, "put-if-match", func(key string) bool { return strings.Contains(key, "/fence__") }, 0, unanswered)
	a := r.add("a", st)
	r.promote(a, 3)
	st.n.Store(1)
	r.submit(a, 5)
	r.waitAcked(a, 5)
	syncs := r.events(history.Sync, "a")
	if len(syncs) < 2 || syncs[0].Outcome == history.OK || syncs[len(syncs)-1].Outcome != history.OK {
		t.Fatalf("sync events %+v; want an unanswered attempt, then one that acknowledged", syncs)
	}
	r.submit(a, 5)
	r.waitAcked(a, 10)
	r.requireDurable(r.audit())
}
