package fence

import "testing"

func traceRelocationHappyPath(t *testing.T, w *world, v Variant) {
	s, _ := w.owner("s", 5, true, v)
	mustOK(t, "source acks", s.Advance(w.ctx))
	old := s.Token()
	mustOK(t, "transfer", s.Transfer(w.ctx, "t"))
	if !s.Transferred() || s.Token() == old {
		t.Fatalf("after transfer: transferred %v token %q (old %q)", s.Transferred(), s.Token(), old)
	}
	if v == TransferKeepsSource {
		// The key still records the source: the target the handoff reached is refused.
		tg, _ := w.fence("t", 5, true, v)
		wantErr(t, "target adoption after a clean handoff", tg.Advance(w.ctx), ErrFenced, "not the recorded owner")
		return
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
	if v == RevertStandsDown {
		if resumed || err != nil || !s.Fenced() {
			t.Fatalf("%s: revert got %v %v, want the source to stand down although nothing wrote", v, resumed, err)
		}
		// The chain still records the target: the late target takes it, the source is gone.
		tg, _ := w.fence("t", 5, true, v)
		mustOK(t, "late target", tg.Claim(w.ctx))
		return
	}
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
