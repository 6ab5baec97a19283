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
	if len(r.Liveness.Fenced) != 1 || r.Liveness.Fenced[0].Writer != "a" || r.Liveness.Fenced[0].Delay != ms(26) {
		t.Errorf("got liveness %+v, want a fenced 26ms after b's claim", r.Liveness.Fenced)
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
				// Ops 3 and 4 were acked at 40ms (+5), so a recovery from 60ms on must hold them;
				// op 6 is acked while the second recovery runs and may be absent.
				h.restore("r", 0, 60, 70, 1, 2, 3, 4)
				h.restore("r", 0, 152, 160, 1, 2, 3, 4)
				return h, nil
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
				h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
				h.op("a", 15, 1)
				h.sync("a", 5, k5, 20, 1, "a1", 1)
				f := h.fenced("a", 5, 50, "conflict 409")
				return h, []int64{f}
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
				return h, sortedIDs(idOf(h, history.Adopt, "x"), idOf(h, history.Fenced, "s"))
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

// TestAmbiguity resolves an ambiguous CAS from the ledger: applied, not applied, unknown.
// The next accepted write is at seq 3, so seq 2 must have landed for the chain to hold.
func TestAmbiguity(t *testing.T) {
	build := func(entry func(h *hb)) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 2, 8, "", "*", 200, "a0")
		h.op("a", 15, 1)
		h.sync("a", 5, k5, 20, 1, "a1", 1)
		h.put("a", k5, 21, 24, "a0", "", 200, "a1")
		h.cas("a", 5, k5, 30, 35, 2, "a1", history.Ambiguous)
		entry(h)
		h.claim("b", 5, k5, 50, 60, 3, "b3", history.OK, "seal")
		h.put("b", k5, 55, 58, "a2", "", 200, "b3")
		h.final.Recovered = []int64{1}
		return h
	}
	cases := []struct {
		name            string
		entry           func(h *hb)
		want            string
		applied, not, u int
		seq             Verdict
	}{
		{"ledger says applied", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31), Done: ms(33),
				Rule: "drop", Action: "drop-response", Forwarded: true, Status: 200, ETag: "a2"})
		}, ResolvedApplied, 1, 0, 0, Pass},
		{"ledger says refused", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31), Done: ms(33),
				Forwarded: true, Status: 412, Code: "PreconditionFailed"})
		}, ResolvedNotApplied, 0, 1, 0, Fail},
		{"ledger says 409 synthetic, not forwarded", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31), Done: ms(33),
				Rule: "c409", Action: "status", Delivered: true})
		}, ResolvedNotApplied, 0, 1, 0, Fail},
		{"no ledger entry", func(h *hb) {}, ResolvedUnknown, 0, 0, 1, Pass},
		{"forwarded without an answer", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31),
				Forwarded: true, Err: "timeout"})
		}, ResolvedUnknown, 0, 0, 1, Pass},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Check(build(c.entry).input())
			s := r.Resolved
			if s.Applied != c.applied || s.NotApplied != c.not || s.Unknown != c.u || len(s.Events) != 1 || s.Events[0].Outcome != c.want {
				t.Fatalf("got %+v, want %s", s, c.want)
			}
			wantStatus(t, r, SeqMonotonic, c.seq)
		})
	}
}

func TestExpectations(t *testing.T) {
	lossy := func() *hb {
		h, _ := base()
		h.final.Recovered = []int64{1, 2, 6}
		return h
	}
	cases := []struct {
		name     string
		build    func() *hb
		expect   func(e *Expect)
		want     Verdict
		mentions []string
	}{
		{"variant killed", lossy, func(e *Expect) { e.Verdict, e.Violated, e.Fenced = Fail, []string{NoAckedWriteLoss}, nil },
			Pass, []string{"variant killed"}},
		{"variant survived", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Violated = []string{NoAckedWriteLoss} },
			Fail, []string{"variant survived: expected NoAckedWriteLoss to fail, it passed"}},
		{"another invariant broke too", func() *hb {
			h := lossy()
			h.op("b", 160, 4)
			h.ack("b", 6, k6, 161, 162, 1, 4)
			return h
		}, func(e *Expect) { e.Violated = []string{NoAckedWriteLoss} },
			Pass, []string{"variant killed: NoAckedWriteLoss", "AckAttribution also failed"}},
		{"only a different invariant broke", func() *hb {
			h, _ := base()
			h.op("b", 160, 4)
			h.ack("b", 6, k6, 161, 162, 1, 4)
			h.final.Recovered = append(h.final.Recovered, 4)
			return h
		}, func(e *Expect) { e.Violated = []string{NoAckedWriteLoss} },
			Fail, []string{"variant survived: expected NoAckedWriteLoss to fail", "AckAttribution also failed"}},
		{"variant killed before a later fault fired", lossy,
			func(e *Expect) {
				e.Violated = []string{NoAckedWriteLoss}
				e.Faults = append(e.Faults, Fault{"never-reached", "l7"})
			},
			Pass, []string{"variant killed: NoAckedWriteLoss", `declared fault "never-reached" (l7) never fired`}},
		{"variant survived because the fault never fired", func() *hb { h, _ := base(); return h },
			func(e *Expect) {
				e.Violated = []string{NoAckedWriteLoss}
				e.Faults = append(e.Faults, Fault{"drop-cas", "l7"})
			},
			Inconclusive, []string{`declared fault "drop-cas" (l7) never fired`}},
		{"expected fail with no list", lossy, func(e *Expect) { e.Verdict = Fail },
			Pass, []string{"a failure was expected: NoAckedWriteLoss failed"}},
		{"correct run with a loss", lossy, func(e *Expect) {}, Fail, []string{"NoAckedWriteLoss failed"}},
		{"writer expected fenced was not", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Fenced = []string{"a", "b"} }, Fail, []string{"expected b to end fenced"}},
		{"declared fault never fired", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Faults = append(e.Faults, Fault{"drop-cas", "l7"}) },
			Inconclusive, []string{`"drop-cas" (l7) never fired`}},
		{"l7 fault fired", func() *hb {
			h, _ := base()
			h.ledger(history.LedgerEntry{Writer: "a", Method: "GET", Key: "x", Time: ms(1), Rule: "drop-cas", Forwarded: true, Status: 200})
			return h
		}, func(e *Expect) { e.Faults = append(e.Faults, Fault{"drop-cas", "l7"}) }, Pass, nil},
		{"below the ack floor", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.MinAcked = 100 }, Inconclusive, []string{"only 5 ops acknowledged, below the floor of 100"}},
		{"a safety failure is not masked by gating", lossy,
			func(e *Expect) { e.MinAcked = 100 }, Fail, []string{"NoAckedWriteLoss failed", "below the floor"}},
		{"nothing exercised", func() *hb { return &hb{} }, func(e *Expect) {},
			Inconclusive, []string{"the run exercised nothing"}},
		{"unknown invariant in the expectation", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Violated = []string{"NoSuchThing"} }, Error, []string{"unknown invariant"}},
		{"time to fence over the bound", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.MaxTimeToFence = ms(10) }, Fail, []string{"TimeToFence failed"}},
		{"time to fence within the bound", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.MaxTimeToFence = ms(100) }, Pass, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.build()
			c.expect(&h.expect)
			r := Check(h.input())
			if r.Verdict != c.want {
				t.Fatalf("got %s, want %s: %s", r.Verdict, c.want, r.Narrative)
			}
			wantMentions(t, strings.Join(r.Reasons, "\n"), c.mentions...)
		})
	}
	t.Run("raw statuses survive the adjustment", func(t *testing.T) {
		h := lossy()
		h.expect.Violated = []string{NoAckedWriteLoss}
		h.expect.Fenced = nil
		r := Check(h.input())
		if r.Verdict != Pass || r.Raw != Fail || mustInvariant(t, r, NoAckedWriteLoss).Status != Fail {
			t.Fatalf("got verdict %s raw %s", r.Verdict, r.Raw)
		}
		if len(r.Lost) != 2 || r.Lost[0].Op != 3 || r.Lost[0].Writer != "a" {
			t.Fatalf("got lost %+v, want ops 3 and 4 by a", r.Lost)
		}
	})
}

func TestHarnessErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(h *hb)
		want string
	}{
		{"duplicate event id", func(h *hb) { h.ev = append(h.ev, h.ev[3]) }, "duplicate event ID"},
		{"completes before invoked", func(h *hb) { h.ev[2].Complete = h.ev[2].Invoke - 1 }, "completes at"},
		{"duplicate ledger id", func(h *hb) { h.led = append(h.led, h.led[0]) }, "duplicate ledger entry ID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := base()
			c.mod(h)
			r := Check(h.input())
			if r.Verdict != Error || !strings.Contains(r.Error, c.want) || len(r.Invariants) != 0 {
				t.Fatalf("got %s %q with %d invariants, want error mentioning %q", r.Verdict, r.Error, len(r.Invariants), c.want)
			}
			if r.Verdict.Exit() != 255 {
				t.Fatalf("got exit %d, want 255", r.Verdict.Exit())
			}
		})
	}
}

func TestLiveness(t *testing.T) {
	t.Run("zombie never fenced", func(t *testing.T) {
		h, id := base()
		h.dropEvent(id.aFenced)
		h.edit(id.aCas3, func(e *history.Event) { e.Outcome = history.Ambiguous })
		for i := 0; i < 4; i++ {
			h.simple(history.Sync, "a", 5, "", 200+10*i, 205+10*i, history.Ambiguous, "")
		}
		h.expect = Expect{MaxTimeToFence: ms(50)}
		r := Check(h.input())
		if len(r.Liveness.Zombies) != 1 || r.Liveness.Zombies[0].Writer != "a" {
			t.Fatalf("got zombies %+v, want a", r.Liveness.Zombies)
		}
		if len(r.Liveness.Stuck) != 1 || r.Liveness.Stuck[0].Syncs != 4 {
			t.Fatalf("got stuck %+v, want a with 4 syncs", r.Liveness.Stuck)
		}
		ir := wantStatus(t, r, TimeToFence, Fail)
		wantMentions(t, ir.Narrative, "a (term 5)", "never fenced")
	})
}
