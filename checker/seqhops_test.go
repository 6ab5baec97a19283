package checker

import (
	"testing"

	"github.com/fencebench/fencebench/history"
)

// TestSeqGapFilledByTheLedger: twins race for term 6; c's arbitration CAS is applied by the
// store (seq 1), but d's CAS follows before c's verifying read, so c's claim records fenced
// and only b's seq 0 and d's seq 2 are accepted writes in the events. The ledger shows the
// store applied c's write, so the chain has no gap; had the store refused c's write, seq 1
// was never accepted and the gap is a violation.
func TestSeqGapFilledByTheLedger(t *testing.T) {
	build := func(cStatus int, cETag string) *hb {
		h := &hb{}
		h.claim("b", 6, k6, 0, 10, 0, "b0", history.OK, "seal")
		h.put("b", k6, 1, 3, "", "*", 200, "b0")
		h.claim("c", 6, k6, 2, 20, 0, "", history.FencedOut, "seal")
		h.put("c", k6, 4, 6, "", "*", 412, "")
		h.put("c", k6, 7, 9, "b0", "", cStatus, cETag)
		h.claim("d", 6, k6, 3, 30, 2, "d2", history.OK, "seal")
		h.put("d", k6, 5, 7, "", "*", 412, "")
		h.put("d", k6, 10, 12, "c1", "", 200, "d2")
		h.fenced("c", 6, 21, "taken over mid-claim")
		return h
	}
	wantStatus(t, Check(build(200, "c1").input()), SeqMonotonic, Pass)
	ir := wantStatus(t, Check(build(412, "").input()), SeqMonotonic, Fail)
	wantMentions(t, ir.Narrative, "seq 1 was never accepted")
	// A ledger chain one hop short of the gap fills nothing.
	h := build(200, "c1")
	h.put("x", k6, 13, 14, "d2", "", 200, "x3")
	h.claim("e", 6, k6, 15, 40, 4, "e4", history.OK, "seal")
	wantStatus(t, Check(h.input()), SeqMonotonic, Fail)
}
