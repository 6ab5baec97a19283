package checker

import (
	"testing"

	"github.com/fencebench/fencebench/history"
)

// stalledTwin is an equal-term contest in which the loser's claim completes last: c creates
// fence__6 (seq 0) at 105ms and passes its verifying read, then stalls in its final listing
// until 200ms; meanwhile its twin b takes the object over by arbitration (seq 1), re-adopts
// it (seq 2) and acknowledges, before and after c's claim returns. c's re-adoption then finds
// b the recorded owner and c is fenced. The fence key's chain orders c's claim first.
func stalledTwin(edit func(h *hb, cSeal int64)) *hb {
	h := &hb{}
	cSeal := h.claim("c", 6, k6, 100, 200, 0, "c0", history.OK, "seal")
	h.claim("b", 6, k6, 110, 120, 1, "b1", history.OK, "seal")
	h.op("b", 125, 1)
	h.claim("b", 6, k6, 130, 140, 2, "b2", history.OK, "readopt")
	h.ack("b", 6, k6, 130, 141, 2, 1)
	h.op("b", 145, 2)
	h.sync("b", 6, k6, 150, 3, "b3", 2)
	h.op("b", 205, 3)
	h.sync("b", 6, k6, 210, 4, "b4", 3)
	h.claim("c", 6, k6, 240, 250, 0, "", history.FencedOut, "readopt")
	h.fenced("c", 6, 251, "not the recorded owner: owned by b")
	h.final = Final{Recovered: []int64{1, 2, 3}, FenceKeys: []Object{{Key: k6, ETag: "b4"}}}
	if edit != nil {
		edit(h, cSeal)
	}
	return h
}

// MutualExclusion orders same-term acquisitions by the fence key's chain when it can: a
// claim that completes late but wrote before its twin's acquisitions does not make the twin's
// later acks a second owner's. Where the chain cannot order them, completion order stands.
func TestMutualExclusionOrdersEqualTermAcquisitionsByTheChain(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(h *hb, cSeal int64)
		want Verdict
	}{
		{"stalled twin's claim wrote first", nil, Pass},
		{"its seq is above the re-adoption's", func(h *hb, c int64) {
			h.edit(c, func(e *history.Event) { e.Seq, e.Token = 5, "c5" })
		}, Fail},
		{"its seq equals the re-adoption's", func(h *hb, c int64) {
			h.edit(c, func(e *history.Event) { e.Seq, e.Token = 2, "c2" })
		}, Fail},
		{"another accepted write claims its seq", func(h *hb, _ int64) {
			h.cas("x", 6, k6, 102, 104, 0, "x0", history.OK)
		}, Fail},
		{"it wrote another key", func(h *hb, c int64) {
			h.edit(c, func(e *history.Event) { e.Key = k6 + "0" })
		}, Fail},
		{"it names no token", func(h *hb, c int64) {
			h.edit(c, func(e *history.Event) { e.Token = "" })
		}, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ir := wantStatus(t, Check(stalledTwin(tc.edit).input()), MutualExclusion, tc.want)
			if tc.want == Fail {
				wantMentions(t, ir.Narrative, "c (term 6) claimed at 0.200s", "b (term 6)", "op 3")
			}
		})
	}
}
