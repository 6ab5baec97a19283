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
	judgeEdits(t, stalledTwin, MutualExclusion, "c (term 6) claimed at 0.200s", []edited{
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
	})
}

// edited is one edit of a history and the verdict an invariant must then give.
type edited struct {
	name string
	edit func(h *hb, id int64)
	want Verdict
}

// judgeEdits checks invariant on build(edit) for each case; a failure must mention mention.
func judgeEdits(t *testing.T, build func(func(*hb, int64)) *hb, invariant, mention string, cases []edited) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ir := wantStatus(t, Check(build(tc.edit).input()), invariant, tc.want)
			if tc.want == Fail {
				wantMentions(t, ir.Narrative, mention)
			}
		})
	}
}

// overtakenTwin: b seals term 6 (creating fence__6, token b0); its twin c takes the object
// over by arbitration (If-Match b0, applied) and passes its verifying read, but its final
// listing finds term 8 and c gives its claim up. b's re-adoption then finds c the recorded
// owner and b is fenced: c's arbitration, not a completed claim, ended b's grant.
func overtakenTwin(edit func(h *hb, put int64)) *hb {
	h := &hb{}
	h.claim("b", 6, k6, 100, 110, 0, "b0", history.OK, "seal")
	h.put("b", k6, 102, 104, "", "*", 200, "b0")
	h.claim("c", 6, k6, 115, 300, 0, "", history.FencedOut, "seal")
	h.put("c", k6, 117, 118, "", "*", 412, "")
	put := h.put("c", k6, 120, 122, "b0", "", 200, "c1")
	h.claim("d", 8, k6+"8", 200, 210, 0, "d0", history.OK, "seal")
	h.claim("b", 6, k6, 150, 155, 0, "", history.FencedOut, "readopt")
	h.fenced("b", 6, 156, "not the recorded owner: owned by c")
	h.fenced("c", 6, 301, "superseded mid-claim by term 8")
	if edit != nil {
		edit(h, put)
	}
	return h
}

// A twin's arbitration that took a writer's object over justifies that writer's fence even
// when the twin's own claim ended fenced: the ledger shows the arbitration applied with
// If-Match naming the writer's token, sent while the claim ran.
func TestAnOvertakingTwinsArbitrationJustifiesTheFence(t *testing.T) {
	judgeEdits(t, overtakenTwin, NoSpuriousFencing, "b (term 6) was fenced at 0.156s", []edited{
		{"the arbitration replaced b's token", nil, Pass},
		{"it named another token", func(h *hb, put int64) {
			h.editLedger(put, func(l *history.LedgerEntry) { l.IfMatch = "x9" })
		}, Fail},
		{"it was refused", func(h *hb, put int64) {
			h.editLedger(put, func(l *history.LedgerEntry) { l.Status, l.ETag = 412, "" })
		}, Fail},
		{"it never reached the store", func(h *hb, put int64) {
			h.editLedger(put, func(l *history.LedgerEntry) { l.Forwarded = false })
		}, Fail},
		{"it was sent before the claim", func(h *hb, put int64) {
			h.editLedger(put, func(l *history.LedgerEntry) { l.Time, l.Done = ms(90), ms(91) })
		}, Fail},
		{"another writer sent it", func(h *hb, put int64) {
			h.editLedger(put, func(l *history.LedgerEntry) { l.Writer = "d" })
		}, Fail},
	})
}
