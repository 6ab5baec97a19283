package checker

import (
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
)

// serving is a writer a promoted at 0-10ms that takes ops every 20ms to 1000ms and acknowledges
// each 15ms later; b is promoted at term 6 at 1200ms (after the last judged op), so a is
// fenced at 1300ms.
func serving() *hb {
	h := &hb{}
	h.simple(history.Promote, "a", 5, "", 0, 10, history.OK, "")
	h.claim("a", 5, k5, 0, 5, 0, "a0", history.OK, "seal")
	seq := int64(1)
	for t := 20; t <= 1000; t += 20 {
		op := int64(t / 20)
		h.op("a", t, op)
		h.sync("a", 5, k5, t+10, seq, "a"+string(rune('0'+seq%10)), op)
		seq++
	}
	h.op("a", 2500, 999) // the clients' last op: ops to 1500ms are judged
	h.simple(history.Promote, "b", 6, "", 1200, 1250, history.OK, "")
	h.claim("b", 6, k6, 1200, 1210, 0, "b0", history.OK, "seal")
	h.fenced("a", 5, 1300, "key gone")
	h.expect = Expect{MaxTimeToAck: 100 * time.Millisecond}
	return h
}

func timeToAckOf(t *testing.T, h *hb) InvariantResult {
	t.Helper()
	return invariantOf(t, h, TimeToAck)
}

func TestTimeToAck(t *testing.T) {
	t.Run("acknowledged in time", func(t *testing.T) {
		ir := timeToAckOf(t, serving())
		if ir.Status != Pass || !strings.Contains(ir.Explanation, "50 ops") {
			t.Fatalf("%s: %s", ir.Status, ir.Explanation)
		}
	})
	t.Run("an op never acknowledged", func(t *testing.T) {
		h := serving()
		h.dropEvent(idOf(h, history.Ack, "a")) // op 1's ack
		ir := timeToAckOf(t, h)
		if ir.Status != Fail || ir.Violations != 1 || !strings.Contains(ir.Narrative, "took op [1] at 0.020s") {
			t.Fatalf("%s (%d): %s / %s", ir.Status, ir.Violations, ir.Explanation, ir.Narrative)
		}
	})
	t.Run("a serving writer refusing ops", func(t *testing.T) {
		h := serving()
		h.add(history.Event{Kind: history.Op, Writer: "a", Invoke: ms(500), Ops: []int64{500}, Outcome: history.Fail,
			Err: "writer a is active"})
		ir := timeToAckOf(t, h)
		if ir.Status != Fail || !strings.Contains(ir.Narrative, `refused ("writer a is active") op [500]`) {
			t.Fatalf("%s: %s / %s", ir.Status, ir.Explanation, ir.Narrative)
		}
	})
	t.Run("slow past the bound", func(t *testing.T) {
		h := serving()
		h.expect.MaxTimeToAck = 10 * time.Millisecond
		if ir := timeToAckOf(t, h); ir.Status != Fail || ir.Violations != 50 {
			t.Fatalf("%s (%d): %s", ir.Status, ir.Violations, ir.Explanation)
		}
	})
	// What the protocol may rightly lose is not judged.
	for name, edit := range map[string]func(h *hb){
		"an op near the rival's promotion":  func(h *hb) { h.op("a", 1150, 777) },
		"an op after the writer was fenced": func(h *hb) { h.op("a", 1310, 777) },
		"an op in a fault's window": func(h *hb) {
			h.op("a", 600, 777)
			h.add(history.Event{Kind: history.FaultStart, Writer: "a", Invoke: ms(650), Detail: "latency-a"})
			h.add(history.Event{Kind: history.FaultEnd, Writer: "a", Invoke: ms(660), Detail: "latency-a"})
		},
		"an op to a writer not serving": func(h *hb) {
			h.add(history.Event{Kind: history.Op, Writer: "c", Invoke: ms(600), Ops: []int64{777}, Outcome: history.Fail,
				Err: "writer c is standby"})
		},
		"an op the clients gave too near the end": func(h *hb) { h.op("b", 2450, 777) },
	} {
		t.Run(name, func(t *testing.T) {
			h := serving()
			edit(h)
			if ir := timeToAckOf(t, h); ir.Status != Pass {
				t.Fatalf("%s: %s / %s", ir.Status, ir.Explanation, ir.Narrative)
			}
		})
	}
	t.Run("not judged without a bound", func(t *testing.T) {
		h := serving()
		h.expect.MaxTimeToAck = 0
		for _, ir := range Check(h.input()).Invariants {
			if ir.Name == TimeToAck {
				t.Fatalf("judged without a bound: %+v", ir)
			}
		}
	})
}
