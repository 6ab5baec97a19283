package checker

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// spuriousBase is a writer c whose claim at term 5 failed (from 100 to 120 ms) while every
// store call it made inside was answered as asked: a list, a create, a sweep.
func spuriousBase() (*hb, int64) {
	h := &hb{}
	h.simple(history.StoreList, "c", 0, "", 101, 102, history.OK, "0 entries")
	h.simple(history.StorePutIfAbsent, "c", 0, k5, 103, 105, history.OK, "")
	h.simple(history.StoreDeleteMany, "c", 0, "", 106, 108, history.OK, "")
	claim := h.claim("c", 5, k5, 100, 120, 0, "", history.Fail, "seal")
	h.edit(claim, func(e *history.Event) { e.Err = "claim: sweep of lower terms: retry" })
	return h, claim
}

func noSpuriousFailure(t *testing.T, h *hb) InvariantResult {
	t.Helper()
	return invariantOf(t, h, NoSpuriousFailure)
}

func TestAFailureWithNoCauseFails(t *testing.T) {
	h, claim := spuriousBase()
	ir := noSpuriousFailure(t, h)
	if ir.Status != Fail || ir.Violations != 1 {
		t.Fatalf("status %s, %d violations, want fail with 1: %s", ir.Status, ir.Violations, ir.Explanation)
	}
	if len(ir.Counterexample) != 1 || ir.Counterexample[0] != claim {
		t.Errorf("counterexample %v, want the claim #%d", ir.Counterexample, claim)
	}
	if !strings.Contains(ir.Narrative, "c's claim at term 5 failed") {
		t.Errorf("narrative %q does not name the step", ir.Narrative)
	}
}

// Each case adds one thing to a failed claim that had no cause: the things that can cause a
// failure explain it (pass), the ones that cannot leave it spurious (fail).
func TestWhatExplainsAFailure(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause func(h *hb)
		want  Verdict
	}{
		{"an own store call failed", func(h *hb) {
			h.simple(history.StoreGet, "c", 0, k5, 110, 112, history.Fail, "")
		}, Pass},
		{"an own store call's outcome is unknown", func(h *hb) {
			h.simple(history.StoreList, "c", 0, "", 110, 119, history.Ambiguous, "")
		}, Pass},
		{"another writer wrote while it ran", func(h *hb) {
			h.simple(history.StorePutIfAbsent, "d", 0, k6, 90, 101, history.OK, "")
		}, Pass},
		{"a fault was open on the writer", func(h *hb) {
			h.add(history.Event{Kind: history.FaultStart, Writer: "c", Invoke: ms(50), Detail: "reset:c"})
			h.add(history.Event{Kind: history.FaultEnd, Writer: "c", Invoke: ms(104), Detail: "reset:c"})
		}, Pass},
		{"a fault was open on the incarnation it replaced", func(h *hb) {
			h.add(history.Event{Kind: history.Restart, Writer: "c", Invoke: ms(10), Detail: "b"})
			h.add(history.Event{Kind: history.FaultStart, Writer: "b", Invoke: ms(115), Detail: "reset:c"})
		}, Pass},
		{"a fault was open on the store", func(h *hb) {
			h.add(history.Event{Kind: history.FaultStart, Invoke: ms(111), Detail: "store-restart"})
		}, Pass},
		{"the writer crashed", func(h *hb) {
			h.add(history.Event{Kind: history.Crash, Writer: "c", Invoke: ms(119)})
		}, Pass},
		{"another writer claimed a higher term before", func(h *hb) {
			h.claim("d", 6, k6, 10, 20, 0, "d0", history.OK, "seal")
		}, Pass},
		{"another writer only read", func(h *hb) {
			h.simple(history.StoreGet, "d", 0, k5, 101, 119, history.OK, "")
		}, Fail},
		{"another writer wrote before it began", func(h *hb) {
			h.simple(history.StorePutIfAbsent, "d", 0, k6, 50, 60, history.OK, "")
		}, Fail},
		{"an own store call failed after it ended", func(h *hb) {
			h.simple(history.StoreGet, "c", 0, k5, 130, 131, history.Fail, "")
		}, Fail},
		{"a fault closed on the writer before it began", func(h *hb) {
			h.add(history.Event{Kind: history.FaultStart, Writer: "c", Invoke: ms(50), Detail: "reset:c"})
			h.add(history.Event{Kind: history.FaultEnd, Writer: "c", Invoke: ms(90), Detail: "reset:c"})
		}, Fail},
		{"a fault on another writer", func(h *hb) {
			h.add(history.Event{Kind: history.FaultStart, Writer: "d", Invoke: ms(50), Detail: "reset:d"})
		}, Fail},
		{"another writer claimed a lower term", func(h *hb) {
			h.claim("d", 4, k5, 10, 20, 0, "d0", history.OK, "seal")
		}, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, _ := spuriousBase()
			tc.cause(h)
			if ir := noSpuriousFailure(t, h); ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
		})
	}
}

// A writer whose store calls the history does not record (a system's node, judged from its
// own reports) is not judged: nothing would show the cause of its failures.
func TestAFailureOfAWriterWithoutStoreCallsIsNotJudged(t *testing.T) {
	h := &hb{}
	h.claim("c", 5, k5, 100, 120, 0, "", history.Fail, "seal")
	if ir := noSpuriousFailure(t, h); ir.Status != Pass {
		t.Fatalf("status %s, want pass: %s", ir.Status, ir.Explanation)
	}
}

// givenUpBase is a writer c whose promotion at term 5 (from 100 to 200 ms) ended with an
// unknown outcome after one seal attempt whose create had an unknown outcome: it gave up on a
// failure a promotion retries.
func givenUpBase() (*hb, int64) {
	h := &hb{}
	h.simple(history.StoreList, "c", 0, "", 101, 102, history.OK, "0 entries")
	h.simple(history.StorePutIfAbsent, "c", 0, k5, 103, 105, history.Ambiguous, "")
	h.claim("c", 5, k5, 100, 106, 0, "", history.Ambiguous, "seal")
	p := h.add(history.Event{Kind: history.Promote, Writer: "c", Term: 5, Key: k5, Invoke: ms(100), Complete: ms(200),
		Outcome: history.Ambiguous, Err: "fence claim: create: outcome unknown: retry"})
	return h, p
}

// A promotion retries what is retryable until it succeeds, is fenced or its writer stops:
// one that ended with an unknown outcome is explained only by the writer's end or by its
// hydration's attempts running out, not by the failure it gave up on.
func TestWhatEndsAPromotion(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause func(h *hb, p int64)
		want  Verdict
	}{
		{"nothing: it gave up on an unknown outcome", func(*hb, int64) {}, Fail},
		{"a fault was open on the writer", func(h *hb, _ int64) {
			h.add(history.Event{Kind: history.FaultStart, Writer: "c", Invoke: ms(50), Detail: "reset:c"})
		}, Fail},
		{"its context ended", func(h *hb, p int64) {
			h.edit(p, func(e *history.Event) { e.Err += "; the promotion was stopped: context canceled" })
		}, Pass},
		{"the writer crashed", func(h *hb, _ int64) {
			h.add(history.Event{Kind: history.Crash, Writer: "c", Invoke: ms(150)})
		}, Pass},
		{"the writer crashed after it ended", func(h *hb, _ int64) {
			h.add(history.Event{Kind: history.Crash, Writer: "c", Invoke: ms(250)})
		}, Fail},
		{"its hydration failed five times", func(h *hb, _ int64) {
			for i := range 4 {
				h.simple(history.StoreGet, "c", 0, "segments/s", 110+10*i, 111+10*i, history.Fail, "")
				h.simple(history.Hydrate, "c", 5, "segments/s", 110+10*i, 112+10*i, history.Fail, "")
			}
		}, Pass},
		{"its hydration failed four times", func(h *hb, _ int64) {
			for i := range 3 {
				h.simple(history.StoreGet, "c", 0, "segments/s", 110+10*i, 111+10*i, history.Fail, "")
				h.simple(history.Hydrate, "c", 5, "segments/s", 110+10*i, 112+10*i, history.Fail, "")
			}
		}, Fail},
		{"it failed outright with a cause", func(h *hb, p int64) {
			h.edit(p, func(e *history.Event) { e.Outcome = history.Fail })
		}, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, p := givenUpBase()
			tc.cause(h, p)
			ir := noSpuriousFailure(t, h)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "c's promotion at term 5 ended with an unknown outcome") {
				t.Errorf("narrative %q does not name the promotion", ir.Narrative)
			}
		})
	}
}

// A store call whose record contradicts its own answer is a harness error, not a verdict on
// the protocol: the judges read those outcomes as the store's answers.
func TestAStoreCallRecordedAgainstItsAnswerIsAHarnessError(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(e *history.Event)
		want bool
	}{
		{"a refusal recorded as unknown", func(e *history.Event) {
			e.Outcome, e.Status, e.Code, e.Err = history.Ambiguous, 412, "PreconditionFailed", "precondition failed"
		}, true},
		{"a missing key recorded as unknown", func(e *history.Event) {
			e.Outcome, e.Status, e.Code, e.Err = history.Ambiguous, 404, "NoSuchKey", "not found"
		}, true},
		{"an ok call carrying an error", func(e *history.Event) { e.Err = "ambiguous outcome" }, true},
		{"an ok call carrying an error status", func(e *history.Event) { e.Status = 500 }, true},
		{"a refusal recorded as a failure", func(e *history.Event) {
			e.Outcome, e.Status, e.Code, e.Err = history.Fail, 412, "PreconditionFailed", "precondition failed"
		}, false},
		{"a conflict recorded as unknown", func(e *history.Event) {
			e.Outcome, e.Status, e.Code, e.Err = history.Ambiguous, 409, "ConditionalRequestConflict", "conflict"
		}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			id := h.simple(history.StorePutIfMatch, "c", 0, k5, 10, 12, history.OK, "")
			h.edit(id, tc.edit)
			res := Check(h.input())
			if got := res.Verdict == Error && strings.Contains(res.Error, "harness bug"); got != tc.want {
				t.Fatalf("harness error %v, want %v: %s %s", got, tc.want, res.Verdict, res.Error)
			}
		})
	}
}

// Fenced is an answer: a step that came back fenced is not tried again at its term by the
// same incarnation (FencedTerminal).
func TestAStepTriedAgainAfterItCameBackFencedFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		add  func(h *hb)
		want Verdict
	}{
		{"tried again", func(h *hb) { h.claim("c", 5, k5, 30, 40, 0, "", history.FencedOut, "seal") }, Fail},
		{"tried again after a crash", func(h *hb) {
			h.add(history.Event{Kind: history.Crash, Writer: "c", Invoke: ms(25)})
			h.claim("c", 5, k5, 30, 40, 0, "", history.FencedOut, "seal")
		}, Pass},
		{"a second try already in flight", func(h *hb) { h.claim("c", 5, k5, 15, 40, 0, "", history.FencedOut, "seal") }, Pass},
		{"a claim at another term", func(h *hb) { h.claim("c", 7, k6, 30, 40, 0, "", history.FencedOut, "seal") }, Pass},
		{"another kind of step", func(h *hb) { h.cas("c", 5, k5, 30, 40, 1, "t", history.FencedOut) }, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.claim("c", 5, k5, 10, 20, 0, "", history.FencedOut, "seal")
			tc.add(h)
			h.add(history.Event{Kind: history.Fenced, Writer: "c", Term: 5, Invoke: ms(45), Complete: ms(45), Outcome: history.FencedOut})
			ir := invariantOf(t, h, FencedTerminal)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "c's claim at term 5 came back fenced") {
				t.Errorf("narrative %q does not name the step", ir.Narrative)
			}
		})
	}
}

// A fenced answer ends the writer: a promotion, claim, CAS, sync, adoption or transfer that
// came back fenced is followed by the writer's Fenced event, unless its incarnation crashed
// first (FencedTerminal).
func TestAFencedAnswerTheWriterDoesNotRecordFails(t *testing.T) {
	promote := func(h *hb) {
		h.add(history.Event{Kind: history.Promote, Writer: "c", Term: 5, Key: k5, Invoke: ms(10), Complete: ms(20),
			Outcome: history.FencedOut, Err: "fenced"})
	}
	for _, tc := range []struct {
		name string
		add  func(h *hb)
		want Verdict
	}{
		{"a promotion that came back fenced, then nothing", promote, Fail},
		{"then the writer's Fenced event", func(h *hb) {
			promote(h)
			h.add(history.Event{Kind: history.Fenced, Writer: "c", Term: 5, Invoke: ms(21), Complete: ms(21), Outcome: history.FencedOut})
		}, Pass},
		{"then a crash", func(h *hb) {
			promote(h)
			h.add(history.Event{Kind: history.Crash, Writer: "c", Term: 5, Invoke: ms(21), Complete: ms(21)})
		}, Pass},
		{"another writer's Fenced event", func(h *hb) {
			promote(h)
			h.add(history.Event{Kind: history.Fenced, Writer: "d", Term: 5, Invoke: ms(21), Complete: ms(21), Outcome: history.FencedOut})
		}, Fail},
		{"a Fenced event before the answer", func(h *hb) {
			h.add(history.Event{Kind: history.Fenced, Writer: "c", Term: 4, Invoke: ms(5), Complete: ms(5), Outcome: history.FencedOut})
			promote(h)
		}, Fail},
		{"a CAS that came back fenced", func(h *hb) { h.cas("c", 5, k5, 30, 40, 1, "t", history.FencedOut) }, Fail},
		{"a system's node, which says itself when it is fenced", func(h *hb) {
			promote(h)
			h.expect.LedgerActors = []string{"c"}
		}, Pass},
		{"a revert refused (it stands down instead)", func(h *hb) {
			h.add(history.Event{Kind: history.Revert, Writer: "c", Term: 5, Key: k5, Invoke: ms(10), Complete: ms(20),
				Outcome: history.FencedOut, Err: "fenced"})
		}, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			tc.add(h)
			ir := invariantOf(t, h, FencedTerminal)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "never recorded that it was fenced") {
				t.Errorf("narrative %q does not say what is missing", ir.Narrative)
			}
		})
	}
}

// A fence step is held to the definite answer its last conditional write got: a 403
// AccessDenied fails it (never ambiguous, ok or fenced), a 404 to If-Match fences it (or,
// for a revert, fails it: the source stands down), never an unknown outcome or a success.
// Any other answer, an answer to an earlier write of the step, or another key's write, leave
// the step to the rest of the invariant.
func TestAFenceStepIsHeldToItsWritesDefiniteAnswer(t *testing.T) {
	for _, tc := range []struct {
		name    string
		kind    history.Kind
		status  int
		code    string
		outcome history.Outcome
		key     string
		later   bool // another write of the step, answered as asked, follows the one above
		want    Verdict
	}{
		{"a 403 taken for an unknown outcome", history.CAS, 403, "AccessDenied", history.Ambiguous, k5, false, Fail},
		{"a 403 taken for success", history.Claim, 403, "AccessDenied", history.OK, k5, false, Fail},
		{"a 403 taken for fencing", history.Transfer, 403, "AccessDenied", history.FencedOut, k5, false, Fail},
		{"a 403 that fails the step", history.CAS, 403, "AccessDenied", history.Fail, k5, false, Pass},
		{"a 404 taken for an unknown outcome", history.CAS, 404, "NoSuchKey", history.Ambiguous, k5, false, Fail},
		{"a 404 taken for success", history.Adopt, 404, "", history.OK, k5, false, Fail},
		{"a 404 that fences", history.CAS, 404, "NoSuchKey", history.FencedOut, k5, false, Pass},
		{"a 404 that stands a revert down", history.Revert, 404, "NoSuchKey", history.Fail, k5, false, Pass},
		{"a 500 is an unknown outcome", history.CAS, 500, "InternalError", history.Ambiguous, k5, false, Pass},
		{"a 403 to an earlier write of the step", history.Claim, 403, "AccessDenied", history.OK, k5, true, Pass},
		{"a 403 on another key", history.CAS, 403, "AccessDenied", history.Ambiguous, k6, false, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.add(history.Event{Kind: history.StorePutIfMatch, Writer: "c", Key: tc.key, Invoke: ms(103), Complete: ms(105),
				Outcome: history.Fail, Status: tc.status, Code: tc.code})
			if tc.later {
				h.simple(history.StorePutIfMatch, "c", 0, k5, 106, 108, history.OK, "")
			}
			// A failed store call explains a failure, so only the answer's reading is judged.
			h.add(history.Event{Kind: tc.kind, Writer: "c", Term: 5, Key: k5, Invoke: ms(100), Complete: ms(120),
				Outcome: tc.outcome, Err: "x"})
			ir := noSpuriousFailure(t, h)
			if got := ir.Status; (got == Fail) != (tc.want == Fail) {
				t.Fatalf("status %s, want %s: %s", got, tc.want, ir.Explanation)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "c's "+string(tc.kind)+" at term 5") {
				t.Errorf("narrative %q does not name the step", ir.Narrative)
			}
		})
	}
}

// TestAFenceStepIsHeldToItsLastRequestsAnswer: beyond its conditional writes, a fence step
// is held to the answer of its last request on its key, or listing or batch delete of the
// fence keys: a 403 neither succeeds nor leaves the outcome unknown, and an unknown outcome
// (no response, a 5xx, a 409) is retried, never failed.
func TestAFenceStepIsHeldToItsLastRequestsAnswer(t *testing.T) {
	const list = "run/idx/0/translog/metadata/fence__"
	for _, tc := range []struct {
		name     string
		step     history.Kind
		call     history.Kind
		key      string
		answer   history.Outcome
		status   int
		code     string
		outcome  history.Outcome
		overlaps bool // another fence step of the writer overlaps the step
		want     Verdict
	}{
		{"a read with no answer taken for a failure", history.Claim, history.StoreGet, k5, history.Ambiguous, 0, "", history.Fail, false, Fail},
		{"a 503 to the listing after a refused revert", history.Revert, history.StoreList, list, history.Ambiguous, 503, "SlowDown", history.Fail, false, Pass},
		{"a sweep with no answer taken for a failure", history.Claim, history.StoreDeleteMany, k6, history.Ambiguous, 0, "", history.Fail, false, Fail},
		{"a read with no answer, retried", history.CAS, history.StoreGet, k5, history.Ambiguous, 0, "", history.Ambiguous, false, Pass},
		{"a read-back with no answer taken for success", history.CAS, history.StoreGet, k5, history.Ambiguous, 503, "SlowDown", history.OK, false, Fail},
		{"a re-listing with no answer taken for success", history.Claim, history.StoreList, list, history.Ambiguous, 0, "", history.OK, false, Fail},
		{"a 403 to a read taken for success", history.Adopt, history.StoreGet, k5, history.Fail, 403, "AccessDenied", history.OK, false, Fail},
		{"a 403 to a listing taken for an unknown outcome", history.Claim, history.StoreList, list, history.Fail, 403, "AccessDenied", history.Ambiguous, false, Fail},
		{"a 403 to a read that fails the step", history.Revert, history.StoreGet, k5, history.Fail, 403, "AccessDenied", history.Fail, false, Pass},
		{"a 403 to the listing after a fenced decision", history.CAS, history.StoreList, list, history.Fail, 403, "AccessDenied", history.FencedOut, false, Pass},
		{"a read with no answer on another key", history.CAS, history.StoreGet, k6, history.Ambiguous, 0, "", history.Fail, false, Pass},
		{"a read with no answer while another step runs", history.Claim, history.StoreGet, k5, history.Ambiguous, 0, "", history.Fail, true, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.simple(history.StoreGet, "c", 0, k5, 101, 102, history.OK, "")
			h.add(history.Event{Kind: tc.call, Writer: "c", Key: tc.key, Invoke: ms(103), Complete: ms(105),
				Outcome: tc.answer, Status: tc.status, Code: tc.code, Err: "x"})
			if tc.overlaps {
				h.add(history.Event{Kind: history.CAS, Writer: "c", Term: 5, Key: k5, Invoke: ms(110), Complete: ms(130),
					Outcome: history.OK})
			}
			h.add(history.Event{Kind: tc.step, Writer: "c", Term: 5, Key: k5, Invoke: ms(100), Complete: ms(120),
				Outcome: tc.outcome, Err: "x"})
			ir := noSpuriousFailure(t, h)
			if got := ir.Status; (got == Fail) != (tc.want == Fail) {
				t.Fatalf("status %s, want %s: %s", got, tc.want, ir.Explanation)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "c's "+string(tc.step)+" at term 5") {
				t.Errorf("narrative %q does not name the step", ir.Narrative)
			}
		})
	}
}

// TestATargetGivesUpOnlyOnAFailure: a relocation target's stand-down is explained only by a
// store call of its own that failed since it last ended a step or started.
func TestATargetGivesUpOnlyOnAFailure(t *testing.T) {
	for _, tc := range []struct {
		name   string
		failed history.Kind // a call of the target that failed ("" none)
		at     int          // when it was invoked
		detail string       // the stand-down's Detail
		want   Verdict
	}{
		{"a fetch that failed", history.StoreGet, 110, "relocation-target", Pass},
		{"a listing with no answer", history.StoreList, 105, "relocation-target", Pass},
		{"nothing failed", "", 0, "relocation-target", Fail},
		{"a failure before its earlier stand-down", history.StoreGet, 20, "relocation-target", Fail},
		{"a source's stand-down", "", 0, "", Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.add(history.Event{Kind: history.StandDown, Writer: "t", Term: 4, Key: k5, Invoke: ms(40), Complete: ms(40),
				Err: "earlier"})
			h.simple(history.StoreList, "t", 5, "run/idx/0/segments/metadata/", 100, 102, history.OK, "")
			h.add(history.Event{Kind: history.Hydrate, Writer: "t", Term: 5, Key: "run/idx/0/segments/data/s1",
				Invoke: ms(103), Complete: ms(104), Outcome: history.OK})
			if tc.failed != "" {
				h.add(history.Event{Kind: tc.failed, Writer: "t", Term: 5, Key: "run/idx/0/segments/data/s2",
					Invoke: ms(tc.at), Complete: ms(tc.at + 2), Outcome: history.Ambiguous, Err: "x"})
			}
			h.add(history.Event{Kind: history.StandDown, Writer: "t", Term: 5, Key: k5, Invoke: ms(130), Complete: ms(130),
				Detail: tc.detail, Err: "handoff to t: hydration: x"})
			ir := noSpuriousFailure(t, h)
			if got := ir.Status; (got == Fail) != (tc.want == Fail) {
				t.Fatalf("status %s, want %s: %s", got, tc.want, ir.Explanation)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "t stood down as the relocation target at term 5") {
				t.Errorf("narrative %q does not name the target", ir.Narrative)
			}
		})
	}
}

// TestAMisdirectedReadFailsTheStep: a fence step whose read of its key was answered with
// another object's content (the ledger's misdirect action) fails, whatever else it did.
func TestAMisdirectedReadFailsTheStep(t *testing.T) {
	for _, tc := range []struct {
		name    string
		key     string
		status  int
		outcome history.Outcome
		want    Verdict
	}{
		{"taken for success", k5, 200, history.OK, Fail},
		{"taken for fencing", k5, 200, history.FencedOut, Fail},
		{"taken for an unknown outcome", k5, 200, history.Ambiguous, Fail},
		{"unrecognized: the step fails", k5, 200, history.Fail, Pass},
		{"a read of another key", k6, 200, history.OK, Pass},
		{"a misdirected read that found nothing", k5, 404, history.Ambiguous, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			// The rule's window is open on the writer: it explains a failure.
			h.add(history.Event{Kind: history.FaultStart, Writer: "c", Detail: "m", Invoke: ms(90), Complete: ms(90)})
			h.add(history.Event{Kind: history.FaultEnd, Writer: "c", Detail: "m", Invoke: ms(130), Complete: ms(130)})
			if tc.status == 200 {
				h.simple(history.StoreGet, "c", 0, tc.key, 103, 105, history.OK, "")
			} else {
				h.add(history.Event{Kind: history.StoreGet, Writer: "c", Key: tc.key, Invoke: ms(103), Complete: ms(105),
					Outcome: history.Fail, Status: tc.status, Code: "NoSuchKey", Err: "x"})
			}
			h.ledger(history.LedgerEntry{Writer: "c", Method: "GET", Key: tc.key, Time: ms(103), Done: ms(104),
				Rule: "m", Action: "misdirect", Forwarded: true, Copies: 1, Status: tc.status, Delivered: true,
				Err: "misdirected to " + k6})
			h.add(history.Event{Kind: history.CAS, Writer: "c", Term: 5, Key: k5, Invoke: ms(100), Complete: ms(120),
				Outcome: tc.outcome, Err: "x"})
			ir := noSpuriousFailure(t, h)
			if got := ir.Status; (got == Fail) != (tc.want == Fail) {
				t.Fatalf("status %s, want %s: %s", got, tc.want, ir.Explanation)
			}
			if tc.want == Fail && !strings.Contains(ir.Explanation, "misdirected read") {
				t.Errorf("explanation %q does not name the misdirected read", ir.Explanation)
			}
		})
	}
}
