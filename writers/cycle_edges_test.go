package writers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

func isSegmentMetadataList(op, key string) bool {
	return op == "list" && strings.Contains(key, "/segments/metadata/")
}

// A recovery with no named source follows the primary at the highest term, even one that
// has not synced yet (it holds no chain token), and not an older primary that still holds
// its chain and has not noticed it was superseded: one attempt, from the newer primary.
func TestRecoveryFollowsTheHighestTermOverAnOlderChainHolder(t *testing.T) {
	r := memRig(t, nil)
	b, a, c := r.add("b", nil), r.add("a", nil), r.add("c", nil)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	r.promote(b, 4) // b has not synced; a, with nothing buffered, has not noticed b
	if a.State() != StateActive || a.Fence().Token() == "" || b.Fence().Token() != "" {
		t.Fatalf("a %s (token %q), b token %q; the test needs a active with its chain and b without",
			a.State(), a.Fence().Token(), b.Fence().Token())
	}
	rctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	done := recoverAsync(rctx, c, nil)
	failed := make(chan error, 1)
	go func() { failed <- r.c.Bus().Wait(rctx, "c", history.SigRecoveryFailed, 1) }()
	select {
	case got := <-done:
		if got.err != nil {
			t.Fatalf("recovery: %v", got.err)
		}
		if got.rc.Source != "b" || got.rc.Attempts != 1 {
			t.Fatalf("recovery from %s in %d attempts; want one, from b at term 4", got.rc.Source, got.rc.Attempts)
		}
	case err := <-failed:
		cancel()
		<-done
		t.Fatalf("a recovery attempt failed (%v): %+v", err, r.events(history.RestoreRead, "c"))
	}
}

// A recovery does not finish from a primary whose term was sealed over after it started
// (here by the auditor's seal at the next term, which takes no grant): the attempt fails
// once the copy's engine opened, saying a promotion superseded its primary.
func TestRecoveryFailsWhenItsSourceTermIsSealedOver(t *testing.T) {
	r := memRig(t, nil)
	hs := newHold(r.st, isSegmentMetadataList)
	a, c := r.add("a", nil), r.add("c", hs)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	hs.arm()
	rctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	done := recoverAsync(rctx, c, a)
	hs.waitHit(t) // c registered with a and is hydrating
	if _, err := r.c.Audit(ctx(t), r.st, 0); err != nil {
		t.Fatalf("audit: %v", err)
	}
	if r.c.MaxTerm() != 4 {
		t.Fatalf("max term %d after the audit; want its seal at 4", r.c.MaxTerm())
	}
	failed := make(chan error, 1)
	go func() { failed <- r.c.Bus().Wait(rctx, "c", history.SigRecoveryFailed, 1) }()
	close(hs.release)
	select {
	case got := <-done:
		t.Fatalf("recovery from a superseded primary ended: %+v, %v; want its attempt failed", got.rc, got.err)
	case err := <-failed:
		if err != nil {
			t.Fatalf("waiting for the failed attempt: %v", err)
		}
	}
	var fails []history.Event
	for _, e := range r.events(history.RestoreRead, "c") {
		if e.Outcome == history.Fail {
			fails = append(fails, e)
		}
	}
	if len(fails) == 0 || !strings.Contains(fails[0].Err, "promoted after the recovery started") {
		t.Fatalf("c's failed restore reads %+v; want the first saying its primary was superseded", fails)
	}
	if n := r.c.Bus().Count("c", history.SigRecovered); n != 0 {
		t.Fatalf("c recovered %d times from a superseded primary", n)
	}
	cancel()
	<-done
}

// recoveryResult is what a Recover started by recoverAsync returned.
type recoveryResult struct {
	rc  Recovery
	err error
}

// recoverAsync starts w's recovery from src (nil: any) and delivers its result.
func recoverAsync(ctx context.Context, w, src *Writer) <-chan recoveryResult {
	done := make(chan recoveryResult, 1)
	go func() {
		rc, err := w.Recover(ctx, src)
		done <- recoveryResult{rc, err}
	}()
	return done
}

// A copy is recovering from the moment its recovery starts until it ends: it takes no grant
// meanwhile (a promotion is refused as not serving), and it is a standby again afterwards.
func TestARecoveringCopyTakesNoGrant(t *testing.T) {
	r := memRig(t, nil)
	hs := newHold(r.st, isSegmentMetadataList)
	a, c := r.add("a", nil), r.add("c", hs)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	hs.arm()
	done := recoverAsync(ctx(t), c, a)
	hs.waitHit(t)
	if st := c.State(); st != StateRecovering {
		t.Fatalf("c mid-recovery is %s, want %s", st, StateRecovering)
	}
	if err := c.Promote(ctx(t), 4); !errors.Is(err, ErrNotServing) {
		t.Fatalf("promoting c mid-recovery: %v, want ErrNotServing", err)
	}
	close(hs.release)
	if got := <-done; got.err != nil {
		t.Fatalf("recovery: %v", got.err)
	}
	if st := c.State(); st != StateStandby {
		t.Fatalf("c after its recovery is %s, want %s", st, StateStandby)
	}
}
