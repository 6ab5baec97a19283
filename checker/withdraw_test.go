package checker

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// TestAClaimWithdrawsOnlyWhatItCreated: a claim deletes its term's key only when it created it
// and read it back as its own (NoSpuriousFencing), and one that did so and was then superseded
// mid-claim deletes it (NoSpuriousFailure).
func TestAClaimWithdrawsOnlyWhatItCreated(t *testing.T) {
	const list = "run/idx/0/translog/metadata/fence__"
	for _, tc := range []struct {
		name      string
		created   bool   // the claim's create answered 200 (else 412: it arbitrated)
		readBack  string // the token its read-back returned ("" no read-back)
		deletes   bool   // it deletes its key after its final listing
		outcome   history.Outcome
		fencing   Verdict // NoSpuriousFencing
		failure   Verdict // NoSpuriousFailure
		narrative string  // a phrase of the failing verdict's narrative
	}{
		{"a superseded claim withdraws what it created", true, "t1", true, history.FencedOut, Pass, Pass, ""},
		{"a superseded claim keeps what it created", true, "t1", false, history.FencedOut, Pass, Fail, "never deleted the key it created"},
		{"a superseded claim withdraws a key it won by arbitration", false, "t1", true, history.FencedOut, Fail, Pass, "had not created the key"},
		{"a claim withdraws a key a twin took over", true, "t2", true, history.FencedOut, Fail, Pass, "had not created the key"},
		{"a claim leaves a key a twin took over", true, "t2", false, history.FencedOut, Pass, Pass, ""},
		{"a superseded claim won by arbitration leaves the key", false, "t1", false, history.FencedOut, Pass, Pass, ""},
		{"a claim that succeeds keeps its key", true, "t1", false, history.OK, Pass, Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.sync("a", 4, k6, 10, 1, "a1", 1)
			if tc.created {
				h.add(history.Event{Kind: history.StorePutIfAbsent, Writer: "c", Key: k5, Invoke: ms(103), Complete: ms(104), Token: "t1"})
			} else {
				h.add(history.Event{Kind: history.StorePutIfAbsent, Writer: "c", Key: k5, Invoke: ms(101), Complete: ms(102),
					Outcome: history.Fail, Status: 412, Code: "PreconditionFailed", Err: "x"})
				h.add(history.Event{Kind: history.StorePutIfMatch, Writer: "c", Key: k5, Invoke: ms(103), Complete: ms(104), Token: "t1"})
			}
			h.simple(history.StoreDeleteMany, "c", 0, k6, 105, 106, history.OK, "")
			h.add(history.Event{Kind: history.StoreGet, Writer: "c", Key: k5, Invoke: ms(107), Complete: ms(108), Token: tc.readBack})
			h.simple(history.StoreList, "c", 0, list, 109, 110, history.OK, "1 entries")
			if tc.deletes {
				h.simple(history.StoreDelete, "c", 0, k5, 111, 112, history.OK, "")
			}
			// the higher term that superseded c mid-claim
			h.claim("d", 6, "run/idx/0/translog/metadata/fence__9223372036854775800", 104, 109, 0, "d1", history.OK, "seal")
			claim := h.claim("c", 5, k5, 100, 115, 0, "", tc.outcome, "seal")
			h.edit(claim, func(e *history.Event) { e.Err = "x" })
			for _, v := range []struct {
				inv  history.Invariant
				want Verdict
			}{{NoSpuriousFencing, tc.fencing}, {NoSpuriousFailure, tc.failure}} {
				ir := invariantOf(t, h, v.inv)
				if (ir.Status == Fail) != (v.want == Fail) {
					t.Fatalf("%s: status %s, want %s: %s", v.inv, ir.Status, v.want, ir.Explanation)
				}
				if v.want == Fail && !strings.Contains(ir.Narrative, tc.narrative) {
					t.Errorf("%s: narrative %q does not say %q", v.inv, ir.Narrative, tc.narrative)
				}
			}
		})
	}
}

// TestAFailedClaimThatSweptSupersedes: a higher-term claim that failed after it created its
// key and swept the lower terms (its read-back failed) justifies the lower term's fencing;
// one that failed before writing anything does not.
func TestAFailedClaimThatSweptSupersedes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		wrote bool
		want  Verdict
	}{
		{"a failed claim that swept", true, Pass},
		{"a failed claim that wrote nothing", false, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.claim("a", 5, k5, 0, 5, 0, "a0", history.OK, "seal")
			h.sync("a", 5, k5, 10, 1, "a1", 1)
			if tc.wrote {
				h.simple(history.StorePutIfAbsent, "c", 0, k6, 101, 102, history.OK, "")
				h.simple(history.StoreDeleteMany, "c", 0, k5, 103, 104, history.OK, "")
			} else {
				h.simple(history.StoreList, "c", 0, "run/idx/0/translog/metadata/fence__", 101, 104, history.Ambiguous, "")
			}
			h.claim("c", 6, k6, 100, 110, 0, "", history.Fail, "seal")
			h.fenced("a", 5, 150, "key gone")
			ir := invariantOf(t, h, NoSpuriousFencing)
			if (ir.Status == Fail) != (tc.want == Fail) {
				t.Fatalf("status %s, want %s: %s", ir.Status, tc.want, ir.Explanation)
			}
		})
	}
}

// TestAGateListingIsNotAFenceStepsAnswer: a segment gate's listing of the fence keys, left
// without an answer while a CAS runs, is the gate's (it fails open or closed), not the CAS's.
func TestAGateListingIsNotAFenceStepsAnswer(t *testing.T) {
	const list = "run/idx/0/translog/metadata/fence__"
	for _, tc := range []struct {
		name string
		gate history.Kind // the step that begins right after the listing ("" none)
		want Verdict
	}{
		{"a publication's gate", history.Publish, Pass},
		{"a collection's gate", history.Collect, Pass},
		{"the CAS's own listing", "", Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.add(history.Event{Kind: history.StorePutIfMatch, Writer: "c", Key: k5, Invoke: ms(101), Complete: ms(102), Token: "t2"})
			h.add(history.Event{Kind: history.StoreList, Writer: "c", Key: list, Invoke: ms(110), Complete: ms(111),
				Outcome: history.Ambiguous, Err: "no answer"})
			if tc.gate != "" {
				h.add(history.Event{Kind: tc.gate, Writer: "c", Term: 5, Invoke: ms(111) + 2, Complete: ms(112)})
			}
			h.cas("c", 5, k5, 100, 120, 1, "t2", history.OK)
			ir := invariantOf(t, h, NoSpuriousFailure)
			if (ir.Status == Fail) != (tc.want == Fail) {
				t.Fatalf("status %s, want %s: %s", ir.Status, tc.want, ir.Explanation)
			}
		})
	}
}
