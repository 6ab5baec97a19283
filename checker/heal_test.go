package checker

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// After the heal, a copy left in the middle of a step that moves the chain, or an op given to
// an active copy that is never acknowledged (its copy neither fenced nor crashed), fails
// ServesAfterHeal; an op the copy acknowledged, or that died with its copy, does not.
func TestServesAfterHealJudgesTheWaitAfterTheHeal(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(h *hb)
		want Verdict
		says string
	}{
		{"the op given after the heal is acknowledged", func(h *hb) {
			h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
			h.op("b", 201, 7)
			h.sync("b", 6, k6, 205, 2, "b2", 7)
			h.put("b", k6, 206, 209, "b1", "", 200, "b2")
		}, Pass, "settled"},
		{"the op given after the heal is never acknowledged", func(h *hb) {
			h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
			h.op("b", 201, 7)
		}, Fail, "op 7, given to b at 0.201s, was never acknowledged"},
		{"an op acknowledged before the heal is not the probe's", func(h *hb) {
			h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
		}, Pass, "settled"},
		{"the copy crashed after it was given the op", func(h *hb) {
			h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
			h.op("b", 201, 7)
			h.simple(history.Crash, "b", 6, "", 203, 203, history.OK, "")
		}, Pass, "settled"},
		{"the copy was fenced after it was given the op", func(h *hb) {
			h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
			h.op("b", 201, 7)
			h.fenced("b", 6, 204, "superseded")
		}, Pass, "settled"},
		{"a refused op is not waited for", func(h *hb) {
			h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
			h.add(history.Event{Kind: history.Op, Writer: "b", Invoke: ms(201), Ops: []int64{7}, Outcome: history.Fail})
		}, Pass, "settled"},
		{"a copy still relocating at the end of the wait", func(h *hb) {
			h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
			h.add(history.Event{Kind: history.Stuck, Writer: "b", Invoke: ms(250), Detail: "relocating"})
		}, Fail, "b was still relocating at 0.250s"},
		{"no heal recorded", func(h *hb) {}, Inconclusive, "no heal"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := base()
			h.expect.ServesAfterHeal = true
			tc.add(h)
			ir := invariantOf(t, h, ServesAfterHeal)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if !strings.Contains(ir.Explanation, tc.says) {
				t.Errorf("explanation %q does not say %q", ir.Explanation, tc.says)
			}
			if tc.want == Fail && len(ir.Counterexample) < 2 {
				t.Errorf("counterexample %v names less than the heal and what failed", ir.Counterexample)
			}
		})
	}
}

// Without the expectation the invariant is not judged, and expecting it to fail without
// asking for it is a bad expectation.
func TestServesAfterHealIsJudgedOnlyWhenAsked(t *testing.T) {
	h, _ := base()
	h.add(history.Event{Kind: history.Heal, Invoke: ms(200)})
	h.op("b", 201, 7)
	res := Check(h.input())
	for _, ir := range res.Invariants {
		if ir.Name == ServesAfterHeal {
			t.Fatalf("judged without being asked: %+v", ir)
		}
	}
	if res.Verdict != Pass {
		t.Fatalf("verdict %s, want pass: %v", res.Verdict, res.Reasons)
	}
	h.expect.Verdict, h.expect.Violated = Fail, []history.Invariant{ServesAfterHeal}
	if res := Check(h.input()); res.Verdict != Error || !strings.Contains(res.Error, "serves_after_heal is not set") {
		t.Fatalf("verdict %s (%s), want an error naming serves_after_heal", res.Verdict, res.Error)
	}
	h.expect.ServesAfterHeal = true
	if res := Check(h.input()); res.Verdict != Pass {
		t.Fatalf("verdict %s, want pass (the unacknowledged op was expected to fail it): %v", res.Verdict, res.Reasons)
	}
}
