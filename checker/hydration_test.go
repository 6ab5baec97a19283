package checker

import (
	"testing"

	"github.com/fencebench/fencebench/history"
)

// TestRecoveryFetchFromTheNewestSet: a recovering copy r (no term) reads the primary's newest
// reference set S1 and fetches its files; the primary collects one of them although it
// published nothing newer than S1 (it counted a publication that never landed as its own):
// the file was taken from under the store's current reference set, a HydrationIntegrity
// violation whatever the reader's term. Had the primary published a newer set S2 before its
// collection, S1 may have left its retention window: a term-0 reader is then not judged, as
// before; so too when the path's ledger does not say which set the reader read.
func TestRecoveryFetchFromTheNewestSet(t *testing.T) {
	const (
		s1 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775806"
		s2 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775805"
		f1 = "run/idx/0/segments/data/5/a_0.seg"
	)
	build := func(newer, read bool) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.simple(history.Publish, "a", 5, s1, 20, 21, history.OK, "")
		if read {
			h.ledger(history.LedgerEntry{Writer: "r", Method: "GET", Key: s1, Time: ms(29), Done: ms(30), Forwarded: true,
				Status: 200, Delivered: true})
		}
		if newer {
			h.simple(history.Publish, "a", 5, s2, 35, 36, history.OK, "")
		}
		h.simple(history.Collect, "a", 5, f1, 40, 41, history.OK, "")
		hy := h.simple(history.Hydrate, "r", 0, f1, 31, 60, history.Fail, "recovery")
		h.edit(hy, func(e *history.Event) { e.Status = 404 })
		return h
	}
	r := wantStatus(t, Check(build(false, true).input()), HydrationIntegrity, Fail)
	if r.Violations != 1 {
		t.Errorf("violations %d, want 1: %s", r.Violations, r.Explanation)
	}
	wantStatus(t, Check(build(true, true).input()), HydrationIntegrity, Pass)
	wantStatus(t, Check(build(false, false).input()), HydrationIntegrity, Pass)
}
