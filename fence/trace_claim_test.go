package fence

import (
	"strings"
	"testing"
)

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
		if w.exists(6) || !strings.Contains(err.Error(), "; withdrew the key") {
			t.Fatalf("B did not withdraw the key it created, or its verdict does not say so: %v", err)
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
