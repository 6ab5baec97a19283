package checker

import (
	"slices"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
)

// handoff is a clean relocation of s (term 5) to x: s seals and acks, transfers the chain to
// x at 40-45ms and hands over; x adopts at 60-65ms and acks. The auditor claims term 6 at
// the end.
func handoff() *hb {
	h := &hb{}
	h.claim("s", 5, k5, 0, 10, 0, "s0", history.OK, "seal")
	h.op("s", 15, 10)
	h.sync("s", 5, k5, 20, 1, "s1", 10)
	tr := h.simple(history.Transfer, "s", 5, k5, 40, 45, history.OK, "x")
	h.edit(tr, func(e *history.Event) { e.Seq, e.Token = 2, "s2" })
	h.simple(history.Handoff, "s", 5, "", 46, 47, history.OK, "x")
	ad := h.simple(history.Adopt, "x", 5, k5, 60, 65, history.OK, "")
	h.edit(ad, func(e *history.Event) { e.Seq, e.Token = 3, "x3" })
	h.op("x", 66, 20)
	h.sync("x", 5, k5, 70, 4, "x4", 20)
	h.claim("auditor", 6, k6, 300, 305, 0, "u0", history.OK, "seal")
	h.add(history.Event{Kind: history.Audit, Writer: "auditor", Term: 6, Invoke: ms(306), Complete: ms(310),
		Ops: []int64{10, 20}})
	h.final = Final{Recovered: []int64{10, 20}, AuditTerm: 6}
	h.expect = Expect{Serving: "x"}
	return h
}

// aborted is s (term 5) transferring to x and losing the handoff's answer: s's revert is
// refused at 81-82ms and s stands down at 83ms. With adopted, x adopts the chain at 60-65ms,
// before the revert; otherwise x adopts only at 90-95ms, after s stood down.
func aborted(adopted bool) *hb {
	h := &hb{}
	h.claim("s", 5, k5, 0, 10, 0, "s0", history.OK, "seal")
	h.op("s", 15, 10)
	h.sync("s", 5, k5, 20, 1, "s1", 10)
	h.simple(history.Transfer, "s", 5, k5, 40, 45, history.OK, "x")
	h.simple(history.Handoff, "s", 5, "", 46, 80, history.Fail, "x")
	at := 90
	if adopted {
		at = 60
	}
	h.simple(history.Adopt, "x", 5, k5, at, at+5, history.OK, "")
	h.simple(history.Revert, "s", 5, k5, 81, 82, history.Fail, "")
	h.add(history.Event{Kind: history.StandDown, Writer: "s", Term: 5, Key: k5, Invoke: ms(83), Err: "revert refused"})
	h.final = Final{Recovered: []int64{10}}
	return h
}

// resumed is aborted(false) where s's revert succeeds and nothing stands down or adopts: s
// owns the chain again from 82ms, and has acknowledged nothing since.
func resumed() *hb {
	h := aborted(false)
	h.dropEvent(idOf(h, history.StandDown, "s"))
	h.dropEvent(idOf(h, history.Adopt, "x"))
	h.edit(idOf(h, history.Revert, "s"), func(e *history.Event) { e.Outcome = history.OK })
	h.expect.Serving = "s"
	return h
}

// gaveUp is s (term 5) transferring to x, whose hydration (a segment fetch at 50-55ms,
// failing when fetchFails) ends with x giving the handoff up at 56ms; s's revert at 81-82ms
// succeeds and s serves op 30.
func gaveUp(fetchFails bool) *hb {
	h := &hb{}
	h.claim("s", 5, k5, 0, 10, 0, "s0", history.OK, "seal")
	h.op("s", 15, 10)
	h.sync("s", 5, k5, 20, 1, "s1", 10)
	h.simple(history.Transfer, "s", 5, k5, 40, 45, history.OK, "x")
	h.simple(history.Handoff, "s", 5, "", 46, 80, history.Fail, "x")
	o := history.OK
	if fetchFails {
		o = history.Fail
	}
	h.simple(history.Hydrate, "x", 5, "run/idx/0/segments/data/x_0.seg", 50, 55, o, "relocation-target")
	h.add(history.Event{Kind: history.StandDown, Writer: "x", Term: 5, Key: k5, Invoke: ms(56), Detail: "relocation-target",
		Err: "handoff to x: hydration: failed"})
	h.simple(history.Revert, "s", 5, k5, 81, 82, history.OK, "")
	h.op("s", 85, 30)
	h.sync("s", 5, k5, 86, 3, "s3", 30)
	h.final = Final{Recovered: []int64{10, 30}}
	h.expect = Expect{Serving: "s"}
	return h
}

// TestStopJustification holds NoSpuriousFencing to the writer's own latest grant: only a
// supersession after it justifies a fence or a stand-down.
func TestStopJustification(t *testing.T) {
	cases := []struct {
		name     string
		build    func() (*hb, []int64) // nil counterexample: pass
		mentions []string
	}{
		{"clean handoff: nothing stops", func() (*hb, []int64) { return handoff(), nil }, nil},
		// The source's seal is an ok same-term claim by another writer; the rule that took any
		// such seal as a justification accepted this fence. It was over before the transfer
		// that granted x the chain, so it explains nothing.
		{"target fenced on its source's stale seal", func() (*hb, []int64) {
			h := handoff()
			ad := idOf(h, history.Adopt, "x")
			h.edit(ad, func(e *history.Event) { e.Outcome, e.Err = history.FencedOut, "not the recorded owner" })
			f := h.fenced("x", 5, 66, "not the recorded owner")
			h.dropEvent(idOf(h, history.Ack, "x"))
			h.dropEvent(idOf(h, history.CAS, "x"))
			return h, sortedIDs(idOf(h, history.Claim, "s"), idOf(h, history.Transfer, "s"), f)
		}, []string{"x (term 5) was fenced at 0.066s", "after the transfer of the chain to it by s at 0.040s",
			"s's seal at 0.010s was over before that grant"}},
		{"target fenced after its source reverted", func() (*hb, []int64) {
			h := handoff()
			h.simple(history.Revert, "s", 5, k5, 50, 55, history.OK, "")
			ad := idOf(h, history.Adopt, "x")
			h.edit(ad, func(e *history.Event) { e.Outcome, e.Err = history.FencedOut, "not the recorded owner" })
			h.fenced("x", 5, 66, "not the recorded owner")
			return h, nil
		}, nil},
		{"source stands down after the target adopted", func() (*hb, []int64) { return aborted(true), nil }, nil},
		{"source stands down although nothing took over", func() (*hb, []int64) {
			h := aborted(false)
			return h, sortedIDs(idOf(h, history.Transfer, "s"), idOf(h, history.StandDown, "s"))
		}, []string{"s (term 5) stood down at 0.083s", "after its own transfer of the chain to x at 0.040s"}},
		{"source stands down after a higher term swept the key", func() (*hb, []int64) {
			h := aborted(false)
			h.claim("c", 6, k6, 50, 55, 0, "c0", history.OK, "seal")
			return h, nil
		}, nil},
		// Found by guided exploration: the successor's claim swept s's key, then a retry of s's
		// transfer was cut by a connection reset (unknown outcome, no request in the ledger);
		// s's next attempt found the key gone and s was fenced. The unknown transfer is no
		// grant: the sweep before it explains the fence.
		{"fenced after a higher term, past a transfer whose outcome stayed unknown", func() (*hb, []int64) {
			h := &hb{}
			h.claim("s", 5, k5, 0, 10, 0, "s0", history.OK, "seal")
			h.claim("c", 6, k6, 50, 55, 0, "c0", history.OK, "seal")
			h.simple(history.Transfer, "s", 5, k5, 60, 61, history.Ambiguous, "x")
			h.fenced("s", 5, 90, "key gone: the term's key was swept")
			return h, nil
		}, nil},
		{"higher-term claim before the writer's own grant", func() (*hb, []int64) {
			h := &hb{}
			h.claim("c", 6, k6, 0, 5, 0, "c0", history.OK, "seal")
			c := h.claim("a", 5, k5, 10, 20, 0, "a0", history.OK, "seal")
			f := h.fenced("a", 5, 50, "conflict")
			return h, sortedIDs(h.ev[0].ID, c, f)
		}, []string{"a (term 5) was fenced", "after its own seal at 0.010s"}},
		// Found by exploration (overtaken-seal, mutated): c's claim of term 6 created its
		// object, its answer lost, and c crashed before its sweep; s, never swept, transferred
		// the chain to x, and x's adoption found term 6 and was fenced. The transfer looked for
		// no higher term, so the claim before it still explains the fence.
		{"target fenced by a higher term claimed before the transfer", func() (*hb, []int64) {
			h := handoff()
			h.claim("c", 6, k6, 20, 25, 0, "", history.Ambiguous, "seal")
			ad := idOf(h, history.Adopt, "x")
			h.edit(ad, func(e *history.Event) { e.Outcome, e.Err = history.FencedOut, "superseded by term 6" })
			h.fenced("x", 5, 66, "superseded by term 6")
			h.dropEvent(idOf(h, history.Ack, "x"))
			h.dropEvent(idOf(h, history.CAS, "x"))
			return h, nil
		}, nil},
		{"target gives the handoff up after its hydration failed", func() (*hb, []int64) { return gaveUp(true), nil }, nil},
		{"target gives the handoff up without cause", func() (*hb, []int64) {
			h := gaveUp(false)
			return h, sortedIDs(idOf(h, history.Claim, "s"), idOf(h, history.Transfer, "s"), idOf(h, history.StandDown, "x"))
		}, []string{"x (term 5) stood down at 0.056s", "after the transfer of the chain to it by s at 0.040s",
			"no store call of its own had failed: the target gave the handoff up without cause"}},
		// A store failure before the grant says nothing about the hydration after it.
		{"target gives up after a failure older than the transfer", func() (*hb, []int64) {
			h := gaveUp(false)
			h.add(history.Event{Kind: history.StoreGet, Writer: "x", Key: "k", Invoke: ms(30), Complete: ms(31),
				Outcome: history.Fail})
			return h, sortedIDs(idOf(h, history.Claim, "s"), idOf(h, history.Transfer, "s"), idOf(h, history.StandDown, "x"))
		}, []string{"without cause"}},
		{"target gives up before any grant, its store listing failing", func() (*hb, []int64) {
			h := gaveUp(false)
			h.dropEvent(idOf(h, history.Transfer, "s"))
			h.add(history.Event{Kind: history.StoreList, Writer: "x", Key: "run/idx/0/segments/metadata/", Invoke: ms(20),
				Complete: ms(21), Outcome: history.Ambiguous})
			return h, nil
		}, nil},
		// Giving a handoff up does not end the copy: a fence at a later grant is still judged.
		{"target that gave up is later fenced without cause", func() (*hb, []int64) {
			h := gaveUp(true)
			c := h.claim("x", 6, k6, 100, 110, 0, "x0", history.OK, "seal")
			f := h.fenced("x", 6, 120, "conflict")
			return h, sortedIDs(c, f)
		}, []string{"x (term 6) was fenced at 0.120s"}},
		{"claim refused with no grant of its own", func() (*hb, []int64) {
			h := &hb{}
			h.claim("c", 6, k6, 0, 5, 0, "c0", history.OK, "seal")
			h.claim("a", 4, k5, 10, 20, 0, "", history.FencedOut, "seal")
			h.fenced("a", 4, 21, "superseded by term 6")
			return h, nil
		}, nil},
	}
	runInvariantCases(t, NoSpuriousFencing, cases)
}

// TestHandoffResolves judges expect.serving.
func TestHandoffResolves(t *testing.T) {
	cases := []struct {
		name     string
		build    func() (*hb, []int64)
		mentions []string
	}{
		{"nothing named", func() (*hb, []int64) {
			h := handoff()
			h.expect.Serving = ""
			return h, nil
		}, nil},
		{"target serves after a clean handoff, the auditor aside", func() (*hb, []int64) { return handoff(), nil }, nil},
		{"source named after a clean handoff", func() (*hb, []int64) {
			h := handoff()
			h.expect.Serving = "s"
			return h, sortedIDs(idOf(h, history.Claim, "s"), idOf(h, history.Transfer, "s"))
		}, []string{"s was expected to end serving", "transferred the chain to x at 0.045s"}},
		{"target never took the chain", func() (*hb, []int64) {
			h := handoff()
			ad := idOf(h, history.Adopt, "x")
			h.edit(ad, func(e *history.Event) { e.Outcome = history.FencedOut })
			return h, []int64{idOf(h, history.Claim, "s")}
		}, []string{"x was expected to end serving", "the last to take the chain was s"}},
		{"source stood down after an abort", func() (*hb, []int64) {
			h := aborted(false)
			h.expect.Serving = "s"
			return h, sortedIDs(idOf(h, history.Claim, "s"), idOf(h, history.Transfer, "s"))
		}, []string{"s was expected to end serving"}},
		{"source resumed after an abort", func() (*hb, []int64) {
			h := resumed()
			h.op("s", 85, 30)
			h.sync("s", 5, k5, 86, 3, "s3", 30)
			return h, nil
		}, nil},
		// The revert took the chain back, nothing stopped s and nothing took the chain from it,
		// but s never served again (its operations stayed blocked): holding is not serving.
		{"source resumed but never served", func() (*hb, []int64) {
			h := resumed()
			return h, []int64{idOf(h, history.Revert, "s")}
		}, []string{"s was expected to end serving", "reverted the fence (term 5) at 0.082s",
			"acknowledged no op afterwards although clients sent 1 op"}},
		{"no client op: holding the chain is enough", func() (*hb, []int64) {
			h := handoff()
			h.dropEvent(idOf(h, history.Op, "s"))
			h.dropEvent(idOf(h, history.Op, "x"))
			h.dropEvent(idOf(h, history.Ack, "x"))
			h.dropEvent(idOf(h, history.CAS, "x"))
			return h, nil
		}, nil},
		{"superseded by a higher term", func() (*hb, []int64) {
			h, id := base()
			h.expect.Serving = "a"
			return h, sortedIDs(id.aClaim, id.aFenced)
		}, []string{"a was expected to end serving", "was fenced at 0.146s"}},
		{"superseded without noticing", func() (*hb, []int64) {
			h, id := base()
			h.dropEvent(id.aFenced)
			h.expect.Serving = "a"
			return h, sortedIDs(id.aClaim, id.bClaim)
		}, []string{"b claimed (term 6) at 0.120s"}},
	}
	runInvariantCases(t, HandoffResolves, cases)
}

// TestHandoffThatDoesNotResolveFails: a copy that should serve but does not fails the run,
// even when too few ops were acknowledged for a pass to prove anything; and a broken variant
// can be expected to break HandoffResolves.
func TestHandoffThatDoesNotResolveFails(t *testing.T) {
	h := handoff()
	h.expect = Expect{Serving: "s", MinAcked: 1000}
	if r := Check(h.input()); r.Verdict != Fail {
		t.Fatalf("got %s, want fail: %s", r.Verdict, r.Narrative)
	}
	h.expect = Expect{Serving: "s", Verdict: Fail, Violated: []string{HandoffResolves}}
	if r := Check(h.input()); r.Verdict != Pass {
		t.Fatalf("got %s, want the kill to stand: %s", r.Verdict, r.Narrative)
	}
}

// invariantCase is a history and the counterexample one invariant must report on it (nil:
// the invariant holds), with what its narrative must mention.
type invariantCase = struct {
	name     string
	build    func() (*hb, []int64)
	mentions []string
}

// A copy that took the chain back once the clients had stopped had nothing left to
// acknowledge: whether it serves again is not shown, which is inconclusive (a starved machine
// can stretch an abort's revert past the end of the traffic). Before the end it is a failure,
// even when the clients, blocked by it, sent nothing more.
func TestHandoffResolvesAfterTheTraffic(t *testing.T) {
	h := resumed()
	h.expect.TrafficEnd = ms(80)
	ir := wantStatus(t, Check(h.input()), HandoffResolves, Inconclusive)
	wantMentions(t, ir.Explanation, "s took the chain (reverted the fence, term 5) at 0.082s, after the clients stopped at 0.080s")
	h = resumed()
	h.expect.TrafficEnd = ms(500)
	wantStatus(t, Check(h.input()), HandoffResolves, Fail)
}

// A step that would have moved the chain but whose event never came (a loaded machine kept the
// source from its first acknowledgement until the schedule ended, so the relocation never
// started) leaves expect.serving unshown: inconclusive, naming the step. A copy that holds the
// chain and serves passes whatever the schedule missed.
func TestHandoffResolvesWhenAStepNeverRan(t *testing.T) {
	h := handoff()
	ad := idOf(h, history.Adopt, "x")
	h.edit(ad, func(e *history.Event) { e.Outcome = history.FencedOut })
	h.expect.Unrun = []string{"steps[0] (relocate): s never reached its acked event"}
	ir := wantStatus(t, Check(h.input()), HandoffResolves, Inconclusive)
	wantMentions(t, ir.Explanation, "not shown: the schedule assumed a step that never ran (steps[0] (relocate): s never reached its acked event); as it stands, x never took the chain")
	h = handoff()
	h.expect.Unrun = []string{"steps[1] (crash): s never reached its acked event"}
	wantStatus(t, Check(h.input()), HandoffResolves, Pass)
}

// runInvariantCases checks invariant inv on each case.
func runInvariantCases(t *testing.T, inv string, cases []invariantCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, want := c.build()
			r := Check(h.input())
			if want == nil {
				wantStatus(t, r, inv, Pass)
				return
			}
			ir := wantStatus(t, r, inv, Fail)
			if !slices.Equal(ir.Counterexample, want) {
				t.Errorf("counterexample: got %v, want %v\nnarrative: %s", ir.Counterexample, want, ir.Narrative)
			}
			wantMentions(t, ir.Narrative, c.mentions...)
		})
	}
}

// A run that fell further behind its schedule than LagTolerance cannot show a liveness bound:
// a failed HandoffResolves or TimeToFence is inconclusive and says by how much the run lagged.
// A safety failure stays a failure at any lag, and a lag within the tolerance excuses nothing.
func TestLagExcusesLivenessOnly(t *testing.T) {
	h := resumed()
	h.expect.Lag = LagTolerance + ms(200)
	ir := wantStatus(t, Check(h.input()), HandoffResolves, Inconclusive)
	wantMentions(t, ir.Explanation, "not shown: the run fell 0.700s behind its schedule (over the 0.500s tolerated)",
		"s holds the chain but acknowledged nothing after it last took it")
	h = resumed()
	h.expect.Lag = LagTolerance
	wantStatus(t, Check(h.input()), HandoffResolves, Fail)

	h, id := base()
	h.dropEvent(id.aFenced)
	h.edit(id.aCas3, func(e *history.Event) { e.Outcome = history.Ambiguous })
	for i := 0; i < 4; i++ {
		h.simple(history.Sync, "a", 5, "", 200+10*i, 205+10*i, history.Ambiguous, "")
	}
	h.expect = Expect{MaxTimeToFence: ms(50), Lag: time.Second}
	wantStatus(t, Check(h.input()), TimeToFence, Inconclusive)

	h, id = base()
	h.edit(id.aCas3, func(e *history.Event) { e.Outcome = history.OK })
	h.expect.Lag = time.Hour
	if r := Check(h.input()); r.Verdict != Fail {
		t.Fatalf("a safety failure at any lag is a failure; got %s: %s", r.Verdict, r.Narrative)
	}
}
