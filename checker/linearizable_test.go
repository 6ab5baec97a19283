package checker

import (
	"slices"
	"testing"

	"github.com/fencebench/fencebench/history"
)

func TestStoreLinearizable(t *testing.T) {
	cases := []struct {
		name   string
		ledger func(h *hb) []int64 // returns the expected counterexample ledger IDs (nil: pass)
	}{
		{"two sequential creates both succeed", func(h *hb) []int64 {
			a := h.put("a", k5, 0, 5, "", "*", 200, "e1")
			b := h.put("b", k5, 10, 15, "", "*", 200, "e2")
			return []int64{a, b}
		}},
		{"two concurrent creates both succeed", func(h *hb) []int64 {
			h.put("a", k5, 0, 5, "", "*", 200, "e0")
			h.put("a", k5, 6, 9, "e0", "", 200, "e1")
			a := h.put("a", k5, 20, 40, "", "*", 200, "e2")
			b := h.put("b", k5, 25, 35, "", "*", 200, "e3")
			h.ledger(history.LedgerEntry{Writer: "a", Method: "DELETE", Key: k5, Time: ms(10), Done: ms(12),
				Forwarded: true, Status: 204, Delivered: true})
			return []int64{a, b}
		}},
		{"stale If-Match accepted", func(h *hb) []int64 {
			h.put("a", k5, 0, 5, "", "*", 200, "e0")
			a := h.put("a", k5, 10, 15, "e0", "", 200, "e1")
			b := h.put("b", k5, 20, 25, "e0", "", 200, "e2")
			return []int64{a, b}
		}},
		{"create with a lost answer, then a 412", func(h *hb) []int64 {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfNoneMatch: "*", Time: ms(0),
				Forwarded: true, Status: 0, Err: "reset"})
			h.put("b", k5, 10, 15, "", "*", 412, "")
			return nil
		}},
		{"synthetic answer never reached the store", func(h *hb) []int64 {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfNoneMatch: "*", Time: ms(0), Done: ms(1),
				Rule: "conflict-409", Action: "status", Forwarded: false, Delivered: true})
			h.put("b", k5, 10, 15, "", "*", 200, "e1")
			return nil
		}},
		{"applied, answer dropped, then a retry gets 412", func(h *hb) []int64 {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfNoneMatch: "*", Time: ms(0), Done: ms(2),
				Rule: "drop", Action: "drop-response", Forwarded: true, Status: 200, ETag: "e0"})
			h.put("a", k5, 10, 15, "", "*", 412, "")
			h.ledger(history.LedgerEntry{Writer: "a", Method: "GET", Key: k5, Time: ms(20), Done: ms(21),
				Forwarded: true, Status: 200, ETag: "e0", Delivered: true})
			return nil
		}},
		{"stripped conditions are judged as the unconditional writes the store saw", func(h *hb) []int64 {
			h.put("a", k5, 0, 5, "", "*", 200, "e0")
			h.ledger(history.LedgerEntry{Writer: "b", Method: "PUT", Key: k5, IfNoneMatch: "*", Time: ms(10), Done: ms(12),
				Rule: "lie", Action: "strip-conditions", Forwarded: true, Status: 200, ETag: "e1", Delivered: true})
			return nil
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := &hb{}
			want := c.ledger(h)
			r := Check(h.input())
			if want == nil {
				wantStatus(t, r, StoreLinearizable, Pass)
				return
			}
			ir := wantStatus(t, r, StoreLinearizable, Fail)
			if !slices.Equal(ir.LedgerEntries, want) {
				t.Errorf("ledger counterexample: got %v, want %v (%s)", ir.LedgerEntries, want, ir.Narrative)
			}
			wantMentions(t, ir.Narrative, k5, "cannot be explained")
		})
	}
	t.Run("two creates narrative", func(t *testing.T) {
		h := &hb{}
		h.put("a", k5, 0, 5, "", "*", 200, "e1")
		h.put("b", k5, 10, 15, "", "*", 200, "e2")
		ir := wantStatus(t, Check(h.input()), StoreLinearizable, Fail)
		wantMentions(t, ir.Narrative, "two conditional creates of one key both succeeded", "a: PUT If-None-Match:*")
	})
	t.Run("writer bypassing the proxy makes it inconclusive", func(t *testing.T) {
		h, _ := base()
		h.claim("z", 9, "p/fence__1", 50, 60, 0, "z0", history.OK, "seal")
		ir := wantStatus(t, Check(h.input()), StoreLinearizable, Inconclusive)
		wantMentions(t, ir.Explanation, "z")
	})
}
