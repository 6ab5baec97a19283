package checker

import (
	"testing"

	"github.com/fencebench/fencebench/history"
)

// TestRecoveryFetchFromTheNewestSet: a recovering copy r (no term) reads the primary's newest
// reference set S1 and fetches its files while the primary collects one of them. With no
// newer set published before the collection (the primary counted a publication that never
// landed as its own), the file was taken from under the store's current reference set: a
// HydrationIntegrity violation whatever the reader's term. With one newer set, S1 is still
// within the retention bound of two: a violation for a recovery. With two, S1 is past the
// bound (S23) and not judged. Without the bound, a recovery that met a newer set is not judged,
// as before; nor when the path's ledger does not say which set the reader read.
func TestRecoveryFetchFromTheNewestSet(t *testing.T) {
	const (
		s1 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775806"
		s2 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775805"
		s3 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775804"
		f1 = "run/idx/0/segments/data/5/a_0.seg"
	)
	build := func(newer, retain int, read bool) *hb {
		h := &hb{}
		h.expect.Retain = retain
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.simple(history.Publish, "a", 5, s1, 20, 21, history.OK, "")
		if read {
			h.ledger(history.LedgerEntry{Writer: "r", Method: "GET", Key: s1, Time: ms(29), Done: ms(30), Forwarded: true,
				Status: 200, Delivered: true})
		}
		for i, k := range []string{s2, s3}[:newer] {
			h.simple(history.Publish, "a", 5, k, 33+2*i, 34+2*i, history.OK, "")
		}
		h.simple(history.Collect, "a", 5, f1, 40, 41, history.OK, "")
		hy := h.simple(history.Hydrate, "r", 0, f1, 31, 60, history.Fail, "recovery")
		h.edit(hy, func(e *history.Event) { e.Status = 404 })
		return h
	}
	for _, c := range []struct {
		newer, retain int
		read          bool
		want          Verdict
	}{
		{0, 2, true, Fail}, {0, 0, true, Fail}, {1, 2, true, Fail}, {2, 2, true, Pass}, {1, 0, true, Pass}, {0, 2, false, Pass},
	} {
		r := wantStatus(t, Check(build(c.newer, c.retain, c.read).input()), HydrationIntegrity, c.want)
		if c.want == Fail && r.Violations != 1 {
			t.Errorf("%+v: violations %d, want 1: %s", c, r.Violations, r.Explanation)
		}
	}
}
