package checker

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// A promotion is a seal and a restore read: one recorded ok without an ok claim of its term,
// or without an ok restore read at it, within its span fails OwnerNeverReadUnsealed.
func TestAPromotionThatSucceedsWithoutItsSealOrItsReadFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		add     func(h *hb)
		want    Verdict
		missing string
	}{
		{"sealed, then read", func(h *hb) {
			h.claim("c", 5, k5, 11, 14, 0, "c0", history.OK, "seal")
			h.restore("c", 5, 15, 18)
		}, Pass, ""},
		{"no seal (and so no read after one)", func(h *hb) {}, Fail, "claim (its seal)"},
		{"the seal failed", func(h *hb) {
			h.claim("c", 5, k5, 11, 14, 0, "", history.Ambiguous, "seal")
		}, Fail, "claim (its seal)"},
		{"the seal at another term", func(h *hb) {
			h.claim("c", 4, k5, 11, 14, 0, "c0", history.OK, "seal")
		}, Fail, "claim (its seal)"},
		{"another writer's seal", func(h *hb) {
			h.claim("d", 5, k5, 11, 14, 0, "d0", history.OK, "seal")
		}, Fail, "claim (its seal)"},
		{"the seal outside the promotion", func(h *hb) {
			h.claim("c", 5, k5, 2, 4, 0, "c0", history.OK, "seal")
			h.restore("c", 5, 15, 18)
		}, Fail, "claim (its seal)"},
		{"no restore read", func(h *hb) { h.claim("c", 5, k5, 11, 14, 0, "c0", history.OK, "seal") }, Fail, "restore read"},
		{"the restore read failed", func(h *hb) {
			h.claim("c", 5, k5, 11, 14, 0, "c0", history.OK, "seal")
			h.simple(history.RestoreRead, "c", 5, "", 15, 18, history.Fail, "")
		}, Fail, "restore read"},
		{"a system's node (its reads are not recorded)", func(h *hb) {
			h.expect.LedgerActors = []string{"c"}
		}, Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.add(history.Event{Kind: history.Promote, Writer: "c", Term: 5, Key: k5, Invoke: ms(10), Complete: ms(30), Outcome: history.OK})
			tc.add(h)
			ir := invariantOf(t, h, OwnerNeverReadUnsealed)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Explanation, "without "+tc.missing) {
				t.Errorf("explanation %q does not name the missing %s", ir.Explanation, tc.missing)
			}
		})
	}
	// A promotion that failed holds nothing and is not judged here.
	h := &hb{}
	h.add(history.Event{Kind: history.Promote, Writer: "c", Term: 5, Key: k5, Invoke: ms(10), Complete: ms(30),
		Outcome: history.Fail, Err: "refused"})
	if ir := invariantOf(t, h, OwnerNeverReadUnsealed); ir.Status == Fail {
		t.Fatalf("a failed promotion without a seal failed: %s", ir.Narrative)
	}
}
