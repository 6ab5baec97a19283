package fence

import (
	"errors"
	"testing"
)

// trace is one deterministic interleaving from the protocol's catalogue. run asserts the
// correct outcome when v is Correct and, for each variant in mutants, that the variant
// demonstrably goes wrong in the same interleaving.
type trace struct {
	name    string
	mutants []Variant
	run     func(t *testing.T, w *world, v Variant)
}

var traces = []trace{
	{"equal-term-readoption", []Variant{NoReadoptionGuard}, traceEqualTermReadoption},
	{"takeover-sweeps-lower-term", []Variant{NoSweep}, traceTakeoverSweeps},
	{"partial-sweep", []Variant{NoSurvivorCheck, NoReverify, ReuseHalfClaimed}, tracePartialSweep},
	{"double-takeover", []Variant{NoReverify}, traceDoubleTakeover},
	{"stale-grant", []Variant{NoTermFloor}, traceStaleGrant},
	{"conflict-on-advance", []Variant{ConflictIsFenced}, traceConflictOnAdvance},
	{"conflict-on-create", []Variant{ConflictIsSuccess}, traceConflictOnCreate},
	{"lost-request-after-sweep", []Variant{AmbiguousIsSuccess}, traceLostRequestAfterSweep},
	{"lost-response-on-advance", []Variant{AmbiguousIsFenced}, traceLostResponseOnAdvance},
	{"lost-request-twin-wrote", []Variant{AdoptWithoutIdentity}, traceLostRequestTwinWrote},
	{"equal-term-takeover-mid-claim", []Variant{WithdrawArbitrated}, traceTakeoverMidClaim},
	{"relocation-happy-path", nil, traceRelocationHappyPath},
	{"aborted-handoff-before-target-wrote", []Variant{TargetClaimsBlindly}, traceAbortBeforeTargetWrote},
	{"aborted-handoff-after-target-wrote", []Variant{RevertWithFreshToken}, traceAbortAfterTargetWrote},
	{"lost-transfer-response", []Variant{NoAdoptionOnTransfer}, traceLostTransferResponse},
	{"lost-revert-response", []Variant{AmbiguousIsFenced}, traceLostRevertResponse},
	{"higher-term-mid-relocation", []Variant{RecreateOn404}, traceHigherTermMidRelocation},
	{"swept-key-404-vs-412", []Variant{NotFoundIsRetryable}, traceSweptKey404vs412},
	{"segment-gates", []Variant{NoSegmentGates, CollectionFailsOpen, PublishFailsClosed}, traceSegmentGates},
	{"content-hash-aba", []Variant{NoSeq}, traceContentHashABA},
	{"fenced-at-another-term", []Variant{FencedNotSticky}, traceFencedAtAnotherTerm},
	{"foreign-content", nil, traceForeignContent},
	{"lost-response-unresolved-then-refused", nil, traceLostResponseUnresolved},
}

func TestTraces(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tr := range traces {
				for _, v := range append([]Variant{Correct}, tr.mutants...) {
					t.Run(tr.name+"/"+string(v), func(t *testing.T) {
						t.Parallel()
						tr.run(t, newWorld(t, b), v)
					})
				}
			}
		})
	}
}

// TestEveryFenceVariantMisbehaves holds the registry to the traces: every variant read in
// this package must be shown going wrong by at least one trace.
func TestEveryFenceVariantMisbehaves(t *testing.T) {
	shownBy := map[Variant][]string{}
	for _, tr := range traces {
		for _, v := range tr.mutants {
			if _, ok := v.Info(); !ok {
				t.Errorf("trace %s names unregistered variant %s", tr.name, v)
			}
			shownBy[v] = append(shownBy[v], tr.name)
		}
	}
	// Store-setup variants cannot be read by this package; these tests show their effect on
	// the fence.
	shownBy[SDKRetries] = append(shownBy[SDKRetries], "TestSDKRetriesTurnALostResponseIntoAFence")
	shownBy[AcceptUnenforcedStore] = append(shownBy[AcceptUnenforcedStore], "TestProbe")
	for _, info := range Variants() {
		if info.Name == Correct || info.Reader == ReadByCaller {
			continue
		}
		if len(shownBy[info.Name]) == 0 {
			t.Errorf("variant read by the %s, %s is not shown misbehaving by any test", info.Reader, info.Name)
		} else {
			t.Logf("%-26s shown by %v", info.Name, shownBy[info.Name])
		}
	}
}

// 17-state trace: A seals and goes tokenless (hydrating); an equal-term twin B seals through
// the unguarded path, re-adopts and acks; A's translog instance then tries to take the chain.
func traceEqualTermReadoption(t *testing.T, w *world, v Variant) {
	w.owner("a", 1, false, v) // take 1 of A; the throwaway token is dropped
	aTL, _ := w.fence("a", 1, true, v)
	w.owner("b", 1, false, v) // the twin's seal arbitrates the key over
	bTL, _ := w.owner("b", 1, true, v)
	mustOK(t, "B acks", bTL.Advance(w.ctx))

	err := aTL.Claim(w.ctx)
	if v == Correct {
		wantErr(t, "A's take 2", err, ErrFenced, "not the recorded owner")
		mustOK(t, "B acks after A's attempt", bTL.Advance(w.ctx))
		if c := w.content(1); c.AllocationID != "b" {
			t.Fatalf("recorded owner %s, want b", c.AllocationID)
		}
		return
	}
	if err != nil {
		t.Fatalf("%s: A's take 2 got %v, want it to re-adopt the twin's chain", v, err)
	}
	if err := bTL.Advance(w.ctx); !IsFenced(err) {
		t.Fatalf("%s: B's ack after A stole the chain got %v, want fenced", v, err)
	}
}

// A primary at term 5 keeps acking while B takes over at term 6.
func traceTakeoverSweeps(t *testing.T, w *world, v Variant) {
	a, _ := w.owner("a", 5, true, v)
	mustOK(t, "A acks", a.Advance(w.ctx))
	w.owner("b", 6, false, v)
	err := a.Advance(w.ctx)
	if v == Correct {
		if w.exists(5) {
			t.Fatal("K(5) survived B's claim")
		}
		wantErr(t, "A after the takeover", err, ErrFenced, "key gone")
		return
	}
	if !w.exists(5) || err != nil {
		t.Fatalf("%s: K(5) exists %v, A's ack after the takeover got %v; want the old owner still acking", v, w.exists(5), err)
	}
}

// DeleteObjects reports a per-key failure for K(5): the lower key survives B's sweep.
func tracePartialSweep(t *testing.T, w *world, v Variant) {
	a, _ := w.owner("a", 5, true, v)
	b, bs := w.fence("b", 6, false, v)
	bs.on("delete-many", w.key(5), drop)

	err := b.Claim(w.ctx)
	switch v {
	case Correct, ReuseHalfClaimed:
		wantErr(t, "B's claim", err, ErrRetryable, "sweep left term(s) 5")
		if !w.exists(5) {
			t.Fatal("K(5) should have survived the failed batch delete")
		}
	default:
		mustOK(t, v.String()+": B's claim", err)
	}
	if v == Correct && b.Token() != "" {
		t.Fatal("a failed claim kept its token")
	}
	// The next sync: retries the claim (or, for the broken variants, CASes straight away).
	mustOK(t, "B's next sync", b.Advance(w.ctx))

	err = a.Advance(w.ctx)
	if v == Correct {
		wantErr(t, "A after B's retried claim", err, ErrFenced, "key gone")
		if w.exists(5) {
			t.Fatal("K(5) survived the retried claim")
		}
		return
	}
	if err != nil || !w.exists(5) {
		t.Fatalf("%s: A's ack after B owns got %v (K(5) exists %v); want two terms on the ack path", v, err, w.exists(5))
	}
}

// B (term 6) is mid-claim when C (term 7) runs its whole claim: between B's list and B's
// create.
func traceDoubleTakeover(t *testing.T, w *world, v Variant) {
	a, _ := w.owner("a", 5, true, v)
	c, _ := w.fence("c", 7, false, v)
	b, bs := w.fence("b", 6, false, v)
	bs.on("put-if-absent", w.key(6), pass).Do(func() {
		if err := c.Claim(w.ctx); err != nil {
			t.Errorf("C claims term 7: %v", err)
		}
	})
	err := b.Claim(w.ctx)
	if v == Correct {
		wantErr(t, "B's claim", err, ErrFenced, "superseded mid-claim by term 7")
		if w.exists(6) {
			t.Fatal("B did not withdraw the key it created")
		}
		mustOK(t, "C acks", c.Advance(w.ctx))
		wantErr(t, "A", a.Advance(w.ctx), ErrFenced, "")
		return
	}
	if err != nil {
		t.Fatalf("%s: B's claim got %v; want a stale grant to seal", v, err)
	}
	if errB, errC := b.Advance(w.ctx), c.Advance(w.ctx); errB != nil || errC != nil {
		t.Fatalf("%s: B ack %v, C ack %v; want both terms acking", v, errB, errC)
	}
}

// A writer appointed at term 4 while K(6) exists.
func traceStaleGrant(t *testing.T, w *world, v Variant) {
	c, _ := w.owner("c", 6, false, v)
	s, _ := w.fence("s", 4, false, v)
	err := s.Claim(w.ctx)
	if v == Correct {
		wantErr(t, "stale claim", err, ErrFenced, "superseded by term 6")
		if w.exists(4) {
			t.Fatal("a stale grant created K(4)")
		}
		mustOK(t, "C acks", c.Advance(w.ctx))
		return
	}
	if err != nil || !w.exists(4) {
		t.Fatalf("%s: stale claim got %v, K(4) exists %v; want the stale grant to write its own key", v, err, w.exists(4))
	}
	mustOK(t, v.String()+": stale writer acks", s.Advance(w.ctx))
}

// 409 ConditionalRequestConflict (not applied) on a healthy writer's ack CAS.
func traceConflictOnAdvance(t *testing.T, w *world, v Variant) {
	a, as := w.owner("a", 5, true, v)
	as.on("put-if-match", w.key(5), fail).Err(injected409("put-if-match", w.key(5)))
	err := a.Advance(w.ctx)
	if v == Correct {
		wantErr(t, "ack CAS answered 409", err, ErrRetryable, "")
		mustOK(t, "the next sync", a.Advance(w.ctx))
		if a.Seq() != 1 {
			t.Fatalf("seq %d want 1", a.Seq())
		}
		return
	}
	if !IsFenced(err) {
		t.Fatalf("%s: got %v, want a spurious fence", v, err)
	}
}

// A relocation target activates before any transfer, and its create gets 409 (not applied).
func traceConflictOnCreate(t *testing.T, w *world, v Variant) {
	a, _ := w.owner("a", 5, true, v)
	tg, ts := w.fence("t", 5, true, v)
	ts.on("put-if-absent", w.key(5), fail).Err(injected409("put-if-absent", w.key(5)))
	err := tg.Claim(w.ctx)
	if v == Correct {
		wantErr(t, "target's create answered 409", err, ErrRetryable, "")
		wantErr(t, "target's retry", tg.Claim(w.ctx), ErrFenced, "not the recorded owner")
		mustOK(t, "source acks", a.Advance(w.ctx))
		return
	}
	if err != nil || tg.Token() != a.Token() {
		t.Fatalf("%s: claim got %v, tokens %q/%q; want the target to hold the source's token", v, err, tg.Token(), a.Token())
	}
	mustOK(t, v.String()+": target acks", tg.Advance(w.ctx))
	if err := a.Advance(w.ctx); !IsFenced(err) {
		t.Fatalf("%s: source got %v, want it fenced by a target that was never granted the chain", v, err)
	}
}

// A was swept by term 6; its next CAS request is lost before reaching the store.
func traceLostRequestAfterSweep(t *testing.T, w *world, v Variant) {
	a, as := w.owner("a", 5, true, v)
	w.owner("c", 6, false, v)
	as.on("put-if-match", w.key(5), drop)
	err := a.Advance(w.ctx)
	if v == Correct {
		wantErr(t, "lost CAS request", err, ErrRetryable, "")
		wantErr(t, "the next sync", a.Advance(w.ctx), ErrFenced, "key gone")
		return
	}
	if err != nil {
		t.Fatalf("%s: got %v, want the swept writer to ack", v, err)
	}
}

// The ack CAS lands but its response is lost.
func traceLostResponseOnAdvance(t *testing.T, w *world, v Variant) {
	a, as := w.owner("a", 5, true, v)
	as.on("put-if-match", w.key(5), lose)
	err := a.Advance(w.ctx)
	if v == Correct {
		mustOK(t, "lost CAS response", err)
		if a.Seq() != 1 || w.content(5).Seq != 1 {
			t.Fatalf("seq %d, stored seq %d; want 1", a.Seq(), w.content(5).Seq)
		}
		mustOK(t, "the next sync", a.Advance(w.ctx))
		return
	}
	if !IsFenced(err) {
		t.Fatalf("%s: got %v, want a spurious fence", v, err)
	}
}

// A's CAS request is lost, and an equal-term twin takes the key before A reads it back.
func traceLostRequestTwinWrote(t *testing.T, w *world, v Variant) {
	a, as := w.owner("a", 5, true, v)
	b, _ := w.fence("b", 5, false, v)
	as.on("put-if-match", w.key(5), drop).Do(func() {
		if err := b.Claim(w.ctx); err != nil {
			t.Errorf("twin claims: %v", err)
		}
	})
	err := a.Advance(w.ctx)
	if v == Correct {
		wantErr(t, "A's CAS with a twin's version at the key", err, ErrRetryable, "allocation b")
		wantErr(t, "A's next sync", a.Advance(w.ctx), ErrFenced, "lost the CAS")
		mustOK(t, "twin acks", b.Advance(w.ctx))
		return
	}
	if err != nil || a.Token() != b.Token() {
		t.Fatalf("%s: got %v, tokens %q/%q; want A to adopt the twin's version", v, err, a.Token(), b.Token())
	}
	mustOK(t, v.String()+": A acks on the twin's chain", a.Advance(w.ctx))
	if err := b.Advance(w.ctx); !IsFenced(err) {
		t.Fatalf("%s: twin got %v, want it fenced by A's stolen token", v, err)
	}
}

// B wins K(5) by arbitration; before B verifies, C (same term) arbitrates it over.
func traceTakeoverMidClaim(t *testing.T, w *world, v Variant) {
	w.owner("a", 5, false, v)
	c, _ := w.fence("c", 5, false, v)
	b, bs := w.fence("b", 5, false, v)
	bs.on("get", w.key(5), pass).Skip(1).Do(func() { // the verify read; the first is arbitration's
		if err := c.Claim(w.ctx); err != nil {
			t.Errorf("C claims: %v", err)
		}
	})
	wantErr(t, "B's claim", b.Claim(w.ctx), ErrFenced, "taken over mid-claim by allocation c")
	err := c.Advance(w.ctx)
	if v == Correct {
		mustOK(t, "C acks", err)
		return
	}
	if w.exists(5) || !IsFenced(err) {
		t.Fatalf("%s: K(5) exists %v, C got %v; want B to delete C's key and C spuriously fenced", v, w.exists(5), err)
	}
}

func traceRelocationHappyPath(t *testing.T, w *world, v Variant) {
	s, _ := w.owner("s", 5, true, v)
	mustOK(t, "source acks", s.Advance(w.ctx))
	old := s.Token()
	mustOK(t, "transfer", s.Transfer(w.ctx, "t"))
	if !s.Transferred() || s.Token() == old {
		t.Fatalf("after transfer: transferred %v token %q (old %q)", s.Transferred(), s.Token(), old)
	}
	if c := w.content(5); c.AllocationID != "t" || c.NodeID != "node-s" || c.Seq != 2 {
		t.Fatalf("transfer wrote %+v", c)
	}
	wantErr(t, "source acks after transfer", s.Advance(w.ctx), ErrTransferred, "")
	wantErr(t, "source claims after transfer", s.Claim(w.ctx), ErrTransferred, "")
	tg, _ := w.owner("t", 5, true, v)
	mustOK(t, "target acks", tg.Advance(w.ctx))
	if c := w.content(5); c.AllocationID != "t" || c.NodeID != "node-t" || c.Seq != 4 {
		t.Fatalf("target wrote %+v", c)
	}
	// The source's retained token is stale now: a revert stands down.
	if resumed, err := s.Revert(w.ctx); resumed || err != nil {
		t.Fatalf("revert after target acked: %v %v", resumed, err)
	}
}

// The handoff response is lost after the transfer, so the source aborts and reverts before
// the target ever wrote; the target then activates late.
func traceAbortBeforeTargetWrote(t *testing.T, w *world, v Variant) {
	s, _ := w.owner("s", 5, true, v)
	mustOK(t, "transfer", s.Transfer(w.ctx, "t"))
	resumed, err := s.Revert(w.ctx)
	if !resumed || err != nil {
		t.Fatalf("revert before the target wrote: %v %v, want resume", resumed, err)
	}
	mustOK(t, "resumed source acks", s.Advance(w.ctx))
	tg, _ := w.fence("t", 5, true, v)
	err = tg.Claim(w.ctx)
	if v == Correct {
		wantErr(t, "late target", err, ErrFenced, "not the recorded owner")
		mustOK(t, "source acks after the late target", s.Advance(w.ctx))
		return
	}
	if err != nil {
		t.Fatalf("%s: late target got %v, want it to take the chain", v, err)
	}
	if err := s.Advance(w.ctx); !IsFenced(err) {
		t.Fatalf("%s: source got %v, want a spurious fence of the healthy source", v, err)
	}
}

// The target adopts and acks, then the source's handoff response is lost and it aborts.
func traceAbortAfterTargetWrote(t *testing.T, w *world, v Variant) {
	s, _ := w.owner("s", 5, true, v)
	mustOK(t, "transfer", s.Transfer(w.ctx, "t"))
	tg, _ := w.owner("t", 5, true, v)
	mustOK(t, "target acks", tg.Advance(w.ctx))
	resumed, err := s.Revert(w.ctx)
	if v == Correct {
		if resumed || err != nil {
			t.Fatalf("revert after the target acked: %v %v, want stand down", resumed, err)
		}
		if !s.Fenced() {
			t.Fatal("a source that stood down is not fenced")
		}
		mustOK(t, "target acks after the abort", tg.Advance(w.ctx))
		return
	}
	if !resumed || err != nil {
		t.Fatalf("%s: revert got %v %v, want the source to steal the chain back", v, resumed, err)
	}
	if err := tg.Advance(w.ctx); !IsFenced(err) {
		t.Fatalf("%s: target got %v, want it fenced after acking", v, err)
	}
}

// The transfer lands but its response is lost; the relocation is then aborted.
func traceLostTransferResponse(t *testing.T, w *world, v Variant) {
	s, ss := w.owner("s", 5, true, v)
	ss.on("put-if-match", w.key(5), lose)
	err := s.Transfer(w.ctx, "t")
	if v == Correct {
		mustOK(t, "transfer with a lost response", err)
		if !s.Transferred() || s.Seq() != 1 {
			t.Fatalf("transferred %v seq %d", s.Transferred(), s.Seq())
		}
	} else {
		wantErr(t, "transfer with a lost response", err, ErrRetryable, "")
	}
	if c := w.content(5); c.AllocationID != "t" {
		t.Fatalf("recorded owner %s, want t", c.AllocationID)
	}
	resumed, err := s.Revert(w.ctx)
	if v == Correct {
		if !resumed || err != nil {
			t.Fatalf("revert: %v %v, want resume", resumed, err)
		}
		mustOK(t, "resumed source acks", s.Advance(w.ctx))
		return
	}
	if resumed || err != nil || !s.Fenced() {
		t.Fatalf("%s: revert got %v %v, want the healthy source to stand down", v, resumed, err)
	}
}

// The revert lands but its response is lost.
func traceLostRevertResponse(t *testing.T, w *world, v Variant) {
	s, ss := w.owner("s", 5, true, v)
	mustOK(t, "transfer", s.Transfer(w.ctx, "t"))
	ss.on("put-if-match", w.key(5), lose)
	resumed, err := s.Revert(w.ctx)
	if v == Correct {
		if !resumed || err != nil {
			t.Fatalf("revert with a lost response: %v %v, want resume", resumed, err)
		}
		if c := w.content(5); c.AllocationID != "s" || s.Seq() != 2 {
			t.Fatalf("recorded %+v, seq %d", c, s.Seq())
		}
		mustOK(t, "resumed source acks", s.Advance(w.ctx))
		return
	}
	if resumed || err != nil {
		t.Fatalf("%s: revert got %v %v, want the source to stand down although its revert landed", v, resumed, err)
	}
}

// A higher term sweeps K(5) between the target's conflicting create and its arbitration read.
func traceHigherTermMidRelocation(t *testing.T, w *world, v Variant) {
	s, _ := w.owner("s", 5, true, v)
	mustOK(t, "transfer", s.Transfer(w.ctx, "t"))
	c, _ := w.fence("c", 6, false, v)
	tg, ts := w.fence("t", 5, true, v)
	ts.on("get", w.key(5), pass).Do(func() {
		if err := c.Claim(w.ctx); err != nil {
			t.Errorf("C claims term 6: %v", err)
		}
	})
	err := tg.Claim(w.ctx)
	if resumed, rerr := s.Revert(w.ctx); resumed || rerr != nil {
		t.Fatalf("source revert after the sweep: %v %v, want stand down", resumed, rerr)
	}
	mustOK(t, "C acks", c.Advance(w.ctx))
	if v == Correct {
		wantErr(t, "target adoption", err, ErrFenced, "key gone")
		if w.exists(5) {
			t.Fatal("K(5) exists again")
		}
		return
	}
	if !w.exists(5) {
		t.Fatalf("%s: target got %v and K(5) is gone; want it resurrected below the owner's term", v, err)
	}
}

// A zombie's If-Match on its swept key: the store answers 404 (MinIO, AWS) or 412 (stores
// that answer a missing key that way). Both are a lost CAS.
func traceSweptKey404vs412(t *testing.T, w *world, v Variant) {
	a, _ := w.owner("a", 5, true, v)
	b, bs := w.owner("b", 6, true, v)
	w.owner("c", 7, false, v)
	bs.on("put-if-match", w.key(6), as412)
	wantErr(t, "zombie answered 412", b.Advance(w.ctx), ErrFenced, "lost the CAS")
	err := a.Advance(w.ctx)
	if v == Correct {
		wantErr(t, "zombie answered 404", err, ErrFenced, "key gone")
		return
	}
	for i := range 3 {
		if !IsRetryable(err) || a.Fenced() {
			t.Fatalf("%s: attempt %d got %v, want the zombie retrying forever", v, i, err)
		}
		err = a.Advance(w.ctx)
	}
}

func traceSegmentGates(t *testing.T, w *world, v Variant) {
	a, as := w.owner("a", 5, true, v)
	if ok, why := a.PublishAllowed(w.ctx); !ok {
		t.Fatalf("healthy publish refused: %s", why)
	}
	if ok, why := a.CollectAllowed(w.ctx); !ok {
		t.Fatalf("healthy collection refused: %s", why)
	}
	as.on("list", "", fail).Times(2).Err(injectedAmbiguous("list", w.prefix))
	pubErr, _ := a.PublishAllowed(w.ctx)
	colErr, _ := a.CollectAllowed(w.ctx)
	w.owner("c", 6, false, v)
	pubSup, _ := a.PublishAllowed(w.ctx)
	colSup, _ := a.CollectAllowed(w.ctx)
	got := [4]bool{pubErr, colErr, pubSup, colSup}
	want := map[Variant][4]bool{
		Correct:             {true, false, false, false},
		NoSegmentGates:      {true, true, true, true},
		CollectionFailsOpen: {true, true, false, false},
		PublishFailsClosed:  {false, false, false, false},
	}[v]
	if got != want {
		t.Fatalf("%s: publish/collect on read error, publish/collect when superseded: got %v want %v", v, got, want)
	}
}

// An engine reset leaves a lingering instance L behind its replacement N (same allocation
// and node); content-hash ETags make any repeated body a repeated token.
func traceContentHashABA(t *testing.T, w *world, v Variant) {
	w.owner("a", 5, false, v)
	l, _ := w.owner("a", 5, true, v)
	n, _ := w.owner("a", 5, true, v)
	before := n.Token()
	mustOK(t, "N acks", n.Advance(w.ctx))
	err := l.Advance(w.ctx)
	if v == Correct {
		if n.Token() == before {
			t.Fatal("an ack did not move the token")
		}
		wantErr(t, "lingering instance", err, ErrFenced, "lost the CAS")
		return
	}
	if n.Token() != before || err != nil {
		t.Fatalf("%s: token moved %v, lingering instance got %v; want a stale holder passing If-Match", v, n.Token() != before, err)
	}
}

// A writer fenced at term 5 is asked to act at term 7.
func traceFencedAtAnotherTerm(t *testing.T, w *world, v Variant) {
	a, _ := w.owner("a", 5, true, v)
	b, _ := w.owner("b", 6, false, v)
	wantErr(t, "A after the takeover", a.Advance(w.ctx), ErrFenced, "")
	err := a.AdvanceAt(w.ctx, 7)
	if v == Correct {
		wantErr(t, "fenced A at term 7", err, ErrFenced, "key gone")
		wantErr(t, "fenced A again", a.Claim(w.ctx), ErrFenced, "")
		if w.exists(7) {
			t.Fatal("a fenced instance created K(7)")
		}
		mustOK(t, "B acks", b.Advance(w.ctx))
		return
	}
	if err != nil || !w.exists(7) {
		t.Fatalf("%s: got %v, K(7) exists %v; want the fenced instance to claim term 7", v, err, w.exists(7))
	}
	if err := b.Advance(w.ctx); !IsFenced(err) {
		t.Fatalf("%s: B got %v, want it fenced by an ungranted term", v, err)
	}
}

// Another shard's content at our key is a loud identity error, never a fence verdict, on
// claim and on lost-response resolution.
func traceForeignContent(t *testing.T, w *world, v Variant) {
	foreign, _ := Encode(Content{IndexUUID: "other-index", ShardID: testShard, Term: 5, AllocationID: "x", NodeID: "nx"})
	if _, err := w.raw.PutIfAbsent(w.ctx, w.key(5), foreign); err != nil {
		t.Fatal(err)
	}
	a, _ := w.fence("a", 5, false, v)
	wantErr(t, "claim over foreign content", a.Claim(w.ctx), ErrIdentity, "two shards")
	if a.Fenced() {
		t.Fatal("identity mismatch fenced the instance")
	}

	b, bs := w.owner("b", 8, true, v)
	garbage := []byte("not a fence body")
	bs.on("put-if-match", w.key(8), drop).Do(func() {
		o, err := w.raw.Get(w.ctx, w.key(8))
		if err == nil {
			_, err = w.raw.PutIfMatch(w.ctx, w.key(8), garbage, o.ETag)
		}
		if err != nil {
			t.Errorf("plant garbage: %v", err)
		}
	})
	err := b.Advance(w.ctx)
	wantErr(t, "resolution over garbage", err, ErrIdentity, "unrecognized fence content")
	if b.Fenced() || errors.Is(err, ErrFenced) {
		t.Fatal("unparseable content fenced the instance")
	}
}

// A's CAS lands but its answer is lost, and so is the read-back that would have proved it:
// the outcome stays unknown (retryable). A's retry at the same seq is refused by that very
// write; the refusal must be checked by identity and adopted, not taken for a successor.
func traceLostResponseUnresolved(t *testing.T, w *world, v Variant) {
	a, as := w.owner("a", 5, true, v)
	as.on("put-if-match", w.key(5), lose)
	as.on("get", w.key(5), drop)
	wantErr(t, "lost CAS answer and lost read-back", a.Advance(w.ctx), ErrRetryable, "read-back failed")
	mustOK(t, "the retry refused by A's own landed write", a.Advance(w.ctx))
	if a.Seq() != 1 || w.content(5).Seq != 1 {
		t.Fatalf("seq %d, stored seq %d; want A to have adopted its own seq 1", a.Seq(), w.content(5).Seq)
	}
	mustOK(t, "the next sync", a.Advance(w.ctx))

	// Unknown again, but this time the write never landed and an equal-term twin took the key:
	// the refusal is the twin's write, and it fences.
	as.on("put-if-match", w.key(5), drop)
	as.on("get", w.key(5), drop)
	wantErr(t, "lost CAS request and lost read-back", a.Advance(w.ctx), ErrRetryable, "read-back failed")
	c, _ := w.fence("c", 5, false, v)
	mustOK(t, "twin claims", c.Claim(w.ctx))
	wantErr(t, "A's retry refused by the twin", a.Advance(w.ctx), ErrFenced, "lost the CAS")
}
