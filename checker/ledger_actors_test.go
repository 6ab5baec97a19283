package checker

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// system builds a system run's history: nodes declare their terms (owner claims) and
// fencing, their store calls are only in the ledger. a owns term 1 and acks op 1; b takes
// term 2 at 100ms; a then writes to the store every 50ms from 120ms to 570ms (ten writes,
// each refused with a 412), and declares itself fenced at fencedAt (ms, 0: never).
func system(fencedAt int) *hb {
	h := &hb{}
	h.claim("a", 1, "", 0, 5, 0, "", history.OK, "owner")
	h.op("a", 10, 1)
	h.ack("a", 1, "", 10, 20, 1, 1)
	h.put("a", "wal/1", 12, 18, "", "*", 200, "e1")
	h.claim("b", 2, "", 100, 100, 0, "", history.OK, "owner")
	for i := range 10 {
		at := 120 + 50*i
		h.put("a", "lease", at, at+2, "e0", "", 412, "")
	}
	if fencedAt > 0 {
		h.fenced("a", 1, fencedAt, "lost the lease")
	}
	h.add(history.Event{Kind: history.Audit, Writer: "reader", Term: 3, Invoke: ms(800), Complete: ms(810), Ops: []int64{1}})
	h.final = Final{Recovered: []int64{1}, AuditTerm: 3}
	h.expect = Expect{MaxTimeToFence: ms(200), LedgerActors: []string{"a", "b"}}
	return h
}

// A system's node that keeps writing after it was superseded is judged by TimeToFence from
// its write requests in the ledger: fenced late or never, it fails; fenced at its first
// refused write, it passes; and without LedgerActors (a history that records its writers'
// own store calls) the ledger is not read as anyone's actions.
func TestTimeToFenceOfASystemNodeFromTheLedger(t *testing.T) {
	cases := []struct {
		name     string
		fencedAt int
		actors   bool
		want     Verdict
		says     string
	}{
		{"fenced at its first refused write", 125, true, Pass, "fenced within"},
		{"fenced only after ten refused writes", 575, true, Fail, "fenced only at"},
		{"never fenced, still writing", 0, true, Fail, "never fenced"},
		{"never fenced, its ledger not read", 0, false, Pass, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := system(c.fencedAt)
			if !c.actors {
				h.expect.LedgerActors = nil
			}
			r := Check(h.input())
			var ttf *InvariantResult
			for i := range r.Invariants {
				if r.Invariants[i].Name == TimeToFence {
					ttf = &r.Invariants[i]
				}
			}
			if ttf == nil {
				t.Fatalf("TimeToFence not judged: %s", r.Narrative)
			}
			if all := fmt.Sprintf("%+v", *ttf); ttf.Status != c.want || !strings.Contains(all, c.says) {
				t.Fatalf("TimeToFence %s: %s; want %s saying %q", ttf.Status, all, c.want, c.says)
			}
		})
	}
}
