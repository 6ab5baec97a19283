package checker

import (
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

func TestBasePasses(t *testing.T) {
	h, _ := base()
	before := slices.Clone(h.ev)
	r := Check(h.input())
	if !slices.EqualFunc(before, h.ev, func(a, b history.Event) bool { return a.ID == b.ID }) {
		t.Fatal("Check reordered its input")
	}
	if r.Verdict != Pass || r.Raw != Pass {
		t.Fatalf("got verdict %s (raw %s), want pass\n%s", r.Verdict, r.Raw, r.Narrative)
	}
	if len(r.Invariants) != len(Invariants) {
		t.Fatalf("got %d invariants, want %d", len(r.Invariants), len(Invariants))
	}
	for i, ir := range r.Invariants {
		if ir.Name != Invariants[i] || ir.Guarantee == "" || ir.Explanation == "" {
			t.Errorf("invariant %d: got %+v", i, ir)
		}
	}
	if r.Acked != 5 {
		t.Errorf("got %d acked ops, want 5", r.Acked)
	}
	// b claims at 120ms; a acts again (its next CAS) at 140ms and is fenced at 146ms: the delay
	// runs from a's action, when it could first learn its fate.
	if f := r.Liveness.Fenced; len(f) != 1 || f[0].Writer != "a" || f[0].SupersededAt != ms(120) || f[0].ActedAt != ms(140) ||
		f[0].Delay != ms(6) {
		t.Errorf("got liveness %+v, want a superseded at 120ms, acting at 140ms, fenced 6ms later", r.Liveness.Fenced)
	}
	if len(r.Attestation) != 1 || !r.Attestation[0].Fired {
		t.Errorf("got attestation %+v, want partition-a fired", r.Attestation)
	}
}

// TestInvariants gives every invariant at least one passing and one failing history; a
// failing one names its counterexample events and what the narrative must mention.
func TestInvariants(t *testing.T) {
	type tc struct {
		name      string
		invariant string
		build     func() (*hb, []int64) // history, expected counterexample (nil: pass expected)
		ledgerIDs []int64
		mentions  []string
	}
	cases := []tc{
		{name: "loss/pass", invariant: NoAckedWriteLoss, build: func() (*hb, []int64) { h, _ := base(); return h, nil }},
		{name: "loss/fail", invariant: NoAckedWriteLoss, mentions: []string{"op 3", "a (term 5)", "b (term 6) claimed at 0.120s",
			"restore point at 0.125s", "CAS on " + k5 + " at 0.040s"},
			build: func() (*hb, []int64) {
				h, id := base()
				h.final.Recovered = []int64{1, 2, 6}
				return h, sortedIDs(id.aCas2, id.aAck2, id.bClaim, id.bRestore)
			}},
		{name: "loss/no recovery is inconclusive", invariant: NoAckedWriteLoss, build: func() (*hb, []int64) {
			h, _ := base()
			h.final.Recovered = nil
			h.ev = slices.DeleteFunc(h.ev, func(e history.Event) bool { return e.Kind == history.Audit })
			return h, []int64{}
		}},
		{name: "mutex/ack whose CAS started before the takeover completed", invariant: MutualExclusion,
			build: func() (*hb, []int64) {
				h, id := base()
				h.edit(id.aCas3, func(e *history.Event) { e.Invoke, e.Complete, e.Outcome = ms(110), ms(115), history.OK })
				h.dropEvent(id.aFenced)
				h.ack("a", 5, k5, 110, 116, 3, 5)
				return h, nil
			}},
		{name: "recovery/sees every earlier ack", invariant: RecoverySeesAcked,
			build: func() (*hb, []int64) {
				h, _ := base()
				// Ops 3 and 4 were acked at 40ms (+5), so a recovery finishing from then on must
				// hold them; op 6 is acked (at 156ms) only after the second recovery finished.
				h.restore("r", 0, 60, 70, 1, 2, 3, 4)
				h.restore("r", 0, 150, 155, 1, 2, 3, 4)
				return h, nil
			}},
		{name: "recovery/misses an ack made while it ran", invariant: RecoverySeesAcked,
			mentions: []string{"op 6", "r's recovery, which ran from 0.130s to 0.160s"},
			build: func() (*hb, []int64) {
				// Op 6 was acknowledged at 156ms, after the recovery started and before it
				// finished: it must have reached the copy, by the snapshot or by replication.
				h, id := base()
				rd := h.restore("r", 0, 130, 160, 1, 2, 3, 4)
				return h, sortedIDs(id.bAck1, rd)
			}},
		{name: "recovery/misses an earlier ack", invariant: RecoverySeesAcked,
			build: func() (*hb, []int64) {
				h, id := base()
				rd := h.restore("r", 0, 60, 70, 1, 2, 3)
				return h, sortedIDs(id.aAck2, rd)
			}},
		{name: "mutex/target's first ack rides on its adopt", invariant: MutualExclusion,
			build: func() (*hb, []int64) {
				h := &hb{}
				h.claim("s", 5, k5, 0, 10, 0, "s0", history.OK, "seal")
				tr := h.simple(history.Transfer, "s", 5, k5, 40, 45, history.OK, "x")
				h.edit(tr, func(e *history.Event) { e.Seq, e.Token = 1, "s1" })
				h.simple(history.Handoff, "s", 5, "", 46, 47, history.OK, "x")
				h.op("x", 55, 20)
				ad := h.simple(history.Adopt, "x", 5, k5, 60, 65, history.OK, "")
				h.edit(ad, func(e *history.Event) { e.Seq, e.Token = 2, "x2" })
				h.ack("x", 5, k5, 60, 66, 2, 20)
				h.final = Final{Recovered: []int64{20}}
				return h, nil
			}},
		{name: "mutex/zombie ack after a higher-term claim", invariant: MutualExclusion,
			mentions: []string{"b (term 6) claimed at 0.120s", "a (term 5)", "op 5"},
			build: func() (*hb, []int64) {
				h, id := base()
				h.edit(id.aCas3, func(e *history.Event) { e.Outcome = history.OK })
				h.dropEvent(id.aFenced)
				ack := h.ack("a", 5, k5, 140, 147, 3, 5)
				return h, sortedIDs(id.bClaim, id.aCas3, ack)
			}},
		{name: "mutex/equal-term twin acks after the other's later seal", invariant: MutualExclusion,
			mentions: []string{"c (term 6)", "the same term"},
			build: func() (*hb, []int64) {
				h, id := base()
				cc := h.claim("c", 6, k6, 160, 170, 2, "c2", history.OK, "seal")
				h.op("b", 171, 7)
				c, a := h.sync("b", 6, k6, 180, 3, "b3", 7)
				_ = id
				return h, sortedIDs(cc, c, a)
			}},
		{name: "attribution/pass", invariant: AckAttribution, build: func() (*hb, []int64) { h, _ := base(); return h, nil }},
		{name: "attribution/acked twice", invariant: AckAttribution, mentions: []string{"op 4", "twice", "by a", "by b"},
			build: func() (*hb, []int64) {
				h, id := base()
				h.op("b", 149, 4)
				a := h.ack("b", 6, k6, 150, 157, 1, 4)
				return h, sortedIDs(id.aAck2, a)
			}},
		{name: "attribution/never submitted to the acker", invariant: AckAttribution, mentions: []string{"op 6", "a"},
			build: func() (*hb, []int64) {
				h, id := base()
				h.edit(id.bAck1, func(e *history.Event) { e.Ops = []int64{9} })
				a := h.ack("a", 5, k5, 40, 47, 2, 6)
				return h, []int64{a}
			}},
		{name: "terminal/pass", invariant: FencedTerminal, build: func() (*hb, []int64) { h, _ := base(); return h, nil }},
		{name: "terminal/ack after fenced", invariant: FencedTerminal, mentions: []string{"a was fenced at 0.146s", "op 5"},
			build: func() (*hb, []int64) {
				h, id := base()
				a := h.ack("a", 5, k5, 140, 150, 3, 5)
				return h, sortedIDs(id.aFenced, a)
			}},
		{name: "terminal/a crash starts a new incarnation", invariant: FencedTerminal, build: func() (*hb, []int64) {
			h, _ := base()
			h.simple(history.Crash, "a", 5, "", 148, 148, history.OK, "")
			h.ack("a", 5, k5, 149, 150, 3, 5)
			return h, nil
		}},
		{name: "terminal/ack after a stand-down at its term", invariant: FencedTerminal,
			mentions: []string{"s stood down at 0.083s (term 5", "still acknowledged op 30 at 0.096s"},
			build: func() (*hb, []int64) {
				h := aborted(true)
				h.op("s", 85, 30)
				_, a := h.sync("s", 5, k5, 90, 3, "s3", 30)
				return h, sortedIDs(idOf(h, history.StandDown, "s"), a)
			}},
		{name: "terminal/a target that gave up re-adopts its term", invariant: FencedTerminal,
			mentions: []string{"x stood down at 0.056s", "adopted the fence at term 5"},
			build: func() (*hb, []int64) {
				h := gaveUp(true)
				ad := h.simple(history.Adopt, "x", 5, k5, 90, 95, history.OK, "")
				return h, sortedIDs(idOf(h, history.StandDown, "x"), ad)
			}},
		{name: "terminal/a target that gave up serves at a later term", invariant: FencedTerminal,
			build: func() (*hb, []int64) {
				h := gaveUp(true)
				h.claim("x", 6, k6, 100, 110, 0, "x0", history.OK, "seal")
				h.op("x", 111, 40)
				h.sync("x", 6, k6, 112, 1, "x1", 40)
				return h, nil
			}},
		{name: "seq/pass", invariant: SeqMonotonic, build: func() (*hb, []int64) { h, _ := base(); return h, nil }},
		{name: "seq/gap", invariant: SeqMonotonic, mentions: []string{k5, "seq 1", "seq 3"},
			build: func() (*hb, []int64) {
				h, id := base()
				h.edit(id.aCas2, func(e *history.Event) { e.Seq = 3 })
				return h, sortedIDs(id.aCas1, id.aCas2)
			}},
		{name: "seq/fork", invariant: SeqMonotonic, mentions: []string{"two accepted writes at seq 1"},
			build: func() (*hb, []int64) {
				h, id := base()
				c := h.cas("c", 6, k6, 160, 165, 1, "c1", history.OK)
				return h, sortedIDs(id.bCas1, c)
			}},
		{name: "seq/token repeats", invariant: SeqMonotonic, mentions: []string{"token a1 twice"},
			build: func() (*hb, []int64) {
				h, id := base()
				h.edit(id.aCas2, func(e *history.Event) { e.Token = "a1" })
				return h, sortedIDs(id.aCas1, id.aCas2)
			}},
		{name: "spurious/pass", invariant: NoSpuriousFencing, build: func() (*hb, []int64) { h, _ := base(); return h, nil }},
		{name: "spurious/fenced with nobody above", invariant: NoSpuriousFencing,
			mentions: []string{"a (term 5) was fenced at 0.050s", "conflict 409"},
			build: func() (*hb, []int64) {
				h := &hb{}
				c := h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
				h.op("a", 15, 1)
				h.sync("a", 5, k5, 20, 1, "a1", 1)
				f := h.fenced("a", 5, 50, "conflict 409")
				return h, []int64{c, f}
			}},
		{name: "spurious/publish refused with nobody above", invariant: NoSpuriousFencing,
			mentions: []string{"a (term 5) had a segment publication refused at 0.040s", "silenced a healthy shard"},
			build: func() (*hb, []int64) {
				h := &hb{}
				h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
				h.op("a", 15, 1)
				h.sync("a", 5, k5, 20, 1, "a1", 1)
				p := h.simple(history.Publish, "a", 5, "", 40, 40, history.Fail, "fence unreadable; publish fails closed")
				return h, []int64{p}
			}},
		{name: "spurious/publish refused after a higher claim", invariant: NoSpuriousFencing,
			build: func() (*hb, []int64) {
				h := &hb{}
				h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
				h.op("a", 15, 1)
				h.sync("a", 5, k5, 20, 1, "a1", 1)
				h.claim("b", 6, k6, 30, 45, 0, "b0", history.Fail, "seal")
				h.simple(history.Publish, "a", 5, "", 40, 40, history.Fail, "superseded by term 6")
				return h, nil
			}},
		{name: "spurious/relocation target adopts after the transfer", invariant: NoSpuriousFencing,
			build: func() (*hb, []int64) {
				h := relocation(false)
				return h, nil
			}},
		{name: "spurious/target adopts blindly after a revert", invariant: NoSpuriousFencing,
			mentions: []string{"s (term 5)", "x adopted term 5"},
			build: func() (*hb, []int64) {
				h := relocation(true)
				return h, sortedIDs(idOf(h, history.Revert, "s"), idOf(h, history.Adopt, "x"), idOf(h, history.Fenced, "s"))
			}},
		{name: "target/pass", invariant: TargetAcksAreDurable, build: func() (*hb, []int64) { return relocation(false), nil }},
		{name: "target/ack lost after adopt", invariant: TargetAcksAreDurable, mentions: []string{"op 20", "target x"},
			build: func() (*hb, []int64) {
				h := relocation(false)
				h.final.Recovered = []int64{10}
				return h, sortedIDs(idOf(h, history.Adopt, "x"), idOf(h, history.Ack, "x"))
			}},
		{name: "hydration/pass", invariant: HydrationIntegrity, build: func() (*hb, []int64) {
			h, _ := base()
			h.simple(history.Hydrate, "b", 6, "seg/f1", 131, 132, history.OK, "")
			return h, nil
		}},
		{name: "hydration/listed file collected", invariant: HydrationIntegrity,
			mentions: []string{"b (term 6)", "seg/f1", "a (term 5) collected it at 0.129s"},
			build: func() (*hb, []int64) {
				h, _ := base()
				c := h.simple(history.Collect, "a", 5, "seg/f1", 128, 129, history.OK, "")
				hy := h.simple(history.Hydrate, "b", 6, "seg/f1", 131, 132, history.Fail, "")
				h.edit(hy, func(e *history.Event) { e.Status = 404 })
				return h, sortedIDs(c, hy)
			}},
		{name: "hydration/superseded hydrator may lose files", invariant: HydrationIntegrity,
			build: func() (*hb, []int64) {
				h, _ := base()
				hy := h.simple(history.Hydrate, "a", 5, "seg/f1", 131, 132, history.Fail, "")
				h.edit(hy, func(e *history.Event) { e.Status = 404 })
				return h, nil
			}},
		{name: "unsealed/pass", invariant: OwnerNeverReadUnsealed, build: func() (*hb, []int64) {
			h := relocation(false)
			h.simple(history.Hydrate, "x", 5, "seg/f1", 55, 56, history.OK, "relocation-target")
			return h, nil
		}},
		{name: "unsealed/restore read before the claim", invariant: OwnerNeverReadUnsealed,
			mentions: []string{"b read its restore point at term 6 at 0.090s", "0.120s"},
			build: func() (*hb, []int64) {
				h, id := base()
				h.edit(id.bRestore, func(e *history.Event) { e.Invoke, e.Complete = ms(90), ms(95) })
				return h, sortedIDs(id.bRestore, id.bClaim)
			}},
		{name: "unsealed/hydrate without any claim", invariant: OwnerNeverReadUnsealed, mentions: []string{"without ever claiming term 7"},
			build: func() (*hb, []int64) {
				h, _ := base()
				hy := h.simple(history.Hydrate, "c", 7, "seg/f1", 200, 201, history.OK, "")
				return h, []int64{hy}
			}},
		{name: "store/pass", invariant: StoreLinearizable, build: func() (*hb, []int64) { h, _ := base(); return h, nil }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, want := c.build()
			r := Check(h.input())
			if want == nil {
				wantStatus(t, r, c.invariant, Pass)
				return
			}
			if len(want) == 0 {
				wantStatus(t, r, c.invariant, Inconclusive)
				return
			}
			ir := wantStatus(t, r, c.invariant, Fail)
			if !slices.Equal(ir.Counterexample, want) {
				t.Errorf("counterexample: got %v, want %v\nnarrative: %s", ir.Counterexample, want, ir.Narrative)
			}
			wantMentions(t, ir.Narrative, c.mentions...)
			if !strings.Contains(r.Narrative, ir.Narrative) {
				t.Errorf("the result narrative does not carry the invariant's: %q", r.Narrative)
			}
			if r.Raw != Fail || r.Verdict != Fail {
				t.Errorf("got verdict %s (raw %s), want fail", r.Verdict, r.Raw)
			}
		})
	}
}

func idOf(h *hb, k history.Kind, w string) int64 {
	for _, e := range h.ev {
		if e.Kind == k && e.Writer == w {
			return e.ID
		}
	}
	return -1
}

// relocation: source s owns term 5 and acks op 10, transfers to target x; with blind set,
// the handoff fails and s reverts before x adopts anyway (the target-claims-blindly variant)
// and s is then fenced. Otherwise x adopts, acks op 20, and s's late CAS is fenced.
func relocation(blind bool) *hb {
	h := &hb{}
	h.claim("s", 5, k5, 0, 10, 0, "s0", history.OK, "seal")
	h.op("s", 15, 10)
	h.sync("s", 5, k5, 20, 1, "s1", 10)
	tr := h.simple(history.Transfer, "s", 5, k5, 40, 45, history.OK, "x")
	h.edit(tr, func(e *history.Event) { e.Seq, e.Token = 2, "s2" })
	if blind {
		h.simple(history.Handoff, "s", 5, "", 46, 47, history.Fail, "x")
		rv := h.simple(history.Revert, "s", 5, k5, 48, 50, history.OK, "")
		h.edit(rv, func(e *history.Event) { e.Seq, e.Token = 3, "s3" })
		ad := h.simple(history.Adopt, "x", 5, k5, 60, 65, history.OK, "")
		h.edit(ad, func(e *history.Event) { e.Seq, e.Token = 4, "x4" })
		h.cas("s", 5, k5, 70, 72, 4, "s3", history.FencedOut)
		h.fenced("s", 5, 73, "precondition failed")
		h.final = Final{Recovered: []int64{10}}
		return h
	}
	h.simple(history.Handoff, "s", 5, "", 46, 47, history.OK, "x")
	ad := h.simple(history.Adopt, "x", 5, k5, 60, 65, history.OK, "")
	h.edit(ad, func(e *history.Event) { e.Seq, e.Token = 3, "x3" })
	h.op("x", 66, 20)
	h.sync("x", 5, k5, 70, 4, "x4", 20)
	h.cas("s", 5, k5, 80, 82, 3, "s2", history.FencedOut)
	h.fenced("s", 5, 83, "precondition failed")
	h.final = Final{Recovered: []int64{10, 20}}
	return h
}
