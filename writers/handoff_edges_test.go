package writers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A target that never received the handoff message (it was lost) is a standby copy again
// once the source has reverted: not left reserved, so a later promotion takes it.
func TestLostHandoffMessageReturnsTheTargetToStandby(t *testing.T) {
	r, a, tg, res := relocateWith(t, fence.Correct, nil, false,
		RelocateOptions{AnswerTimeout: 20 * time.Millisecond}, faults.Handoff{LoseMessage: true})
	if res != RelocationResumed || a.State() != StateActive {
		t.Fatalf("relocation with a lost message: %+v, source %s; want the source resumed", res, a.State())
	}
	if tg.State() != StateStandby {
		t.Fatalf("the target that never heard of the relocation is %s; want standby", tg.State())
	}
	if n := len(r.events(history.StandDown, "t")); n != 0 {
		t.Fatalf("the target recorded %d stand-downs; it never took part", n)
	}
	r.promote(tg, 4)
}

// A relocation abandoned while the source drains (the caller's context ends during the final
// sync) reports the drain's end, and the source serves again: it takes new ops and
// acknowledges them.
func TestAbandonedDrainLetsTheSourceServeAgain(t *testing.T) {
	r, a, tg, hs := drainHeld(t)
	rctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := a.Relocate(rctx, tg, RelocateOptions{})
		done <- err
	}()
	hs.waitHit(t) // the drain's sync is writing its metadata file
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "drain") {
		t.Fatalf("relocation abandoned during its drain: %v; want the drain's end", err)
	}
	close(hs.release)
	if a.State() != StateActive || tg.State() != StateStandby {
		t.Fatalf("source %s, target %s; want active and standby", a.State(), tg.State())
	}
	r.submit(a, 5)
	r.waitAcked(a, 12)
}

// drainHeld is a source a at term 3 with 5 ops acknowledged and 2 buffered until a drain,
// whose metadata upload the armed hold stops, and a standby copy t.
func drainHeld(t *testing.T) (*rig, *Writer, *Writer, *holdStore) {
	t.Helper()
	r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 5, time.Hour })
	hs := newHold(r.st, isMetadataPut)
	a, tg := r.ackingOn("a", hs, 3, 5), r.add("t", nil)
	r.submit(a, 2) // buffered until the drain
	hs.arm()
	return r, a, tg, hs
}

// holdCASStore blocks the first conditional write (after it is armed) until released.
type holdCASStore struct {
	store.Store
	armed   atomic.Bool
	hit     chan struct{}
	release chan struct{}
}

func (h *holdCASStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	if h.armed.CompareAndSwap(true, false) {
		close(h.hit)
		select {
		case <-h.release:
		case <-ctx.Done():
		}
	}
	return h.Store.PutIfMatch(ctx, key, body, etag)
}

// A target that crashed after it was reserved refuses the handoff as soon as the message
// reaches it: the source hears the refusal, naming the crash, without waiting out its answer
// timeout, and reverts to serve again. Every relocation to such a target ends so.
func TestCrashedTargetRefusesTheHandoffAtOnce(t *testing.T) {
	r := memRig(t, nil)
	hs := &holdCASStore{Store: r.st}
	a := r.add("a", hs)
	r.promote(a, 3)
	for i := range 8 {
		tg := r.add(fmt.Sprintf("t%d", i), nil)
		r.submit(a, 5)
		r.waitAcked(a, int64(5*(i+1)))
		hs.hit, hs.release = make(chan struct{}), make(chan struct{})
		hs.armed.Store(true)
		rctx, cancel := context.WithTimeout(ctx(t), 10*time.Second)
		type result struct {
			res RelocationResult
			err error
		}
		done := make(chan result, 1)
		go func() {
			res, err := a.Relocate(rctx, tg, RelocateOptions{AnswerTimeout: time.Hour})
			done <- result{res, err}
		}()
		select {
		case <-hs.hit: // the transfer, with the target reserved
		case <-rctx.Done():
			t.Fatal("the transfer never came")
		}
		tg.Crash()
		close(hs.release)
		got := <-done
		cancel()
		if got.err != nil || got.res != RelocationResumed {
			t.Fatalf("relocation %d to a crashed target: %+v, %v; want the source resumed", i, got.res, got.err)
		}
		ho := r.events(history.Handoff, "a")
		if len(ho) != i+1 || ho[i].Outcome != history.Fail || !strings.Contains(ho[i].Err, "refused") ||
			!strings.Contains(ho[i].Err, string(StateCrashed)) {
			t.Fatalf("relocation %d: handoff events %+v; want the last failed, refused by the crashed target", i, ho)
		}
	}
}

// A relocation abandoned while its handoff message is held (the abort point before the target
// writes) or lost returns the reserved target to standby: the message never reaches it, and
// nothing else would release it.
func TestAbandonedHandoffReleasesTheTarget(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts RelocateOptions
		hf   []faults.Handoff
	}{
		{"held", RelocateOptions{Abort: history.AbortBeforeTargetWrites, AnswerTimeout: time.Hour}, nil},
		{"lost", RelocateOptions{AnswerTimeout: time.Hour}, []faults.Handoff{{LoseMessage: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := memRig(t, nil)
			a, tg := r.acking("a", 3, 5), r.add("t", nil)
			for _, h := range tc.hf {
				r.faultHandoffs(a, h)
			}
			rctx, cancel := context.WithCancel(ctx(t))
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := a.Relocate(rctx, tg, tc.opts)
				done <- err
			}()
			deadline := time.Now().Add(10 * time.Second)
			for tr := r.events(history.Transfer, "a"); len(tr) == 0 || tr[0].Outcome != history.OK; tr = r.events(history.Transfer, "a") {
				if time.Now().After(deadline) {
					t.Fatalf("no transfer that succeeded: %+v", tr)
				}
				time.Sleep(time.Millisecond)
			}
			cancel() // the handoff waits for an answer that cannot come
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("relocation abandoned during its handoff: %v; want the context's end", err)
			}
			if tg.State() != StateStandby {
				t.Fatalf("the target of the abandoned handoff is %s; want standby", tg.State())
			}
			r.promote(tg, 4)
		})
	}
}

// A prehydrated target that crashed while the source drained is not reserved anew: the
// relocation fails before the transfer (fence ownership never moves to a crashed copy), and
// the source serves again.
func TestPrehydratedTargetCrashedDuringTheDrain(t *testing.T) {
	r, a, tg, hs := drainHeld(t)
	done := make(chan error, 1)
	go func() {
		_, err := a.Relocate(ctx(t), tg, RelocateOptions{Prehydrate: true, AnswerTimeout: time.Hour})
		done <- err
	}()
	hs.waitHit(t) // the drain's sync, after the prehydration
	tg.Crash()
	close(hs.release)
	err := <-done
	if !errors.Is(err, ErrNotServing) || !strings.Contains(err.Error(), "the target") {
		t.Fatalf("relocation to a target that crashed during the drain: %v; want the target refused", err)
	}
	if tr := r.events(history.Transfer, "a"); len(tr) != 0 {
		t.Fatalf("the source transferred its fence to a crashed target: %+v", tr)
	}
	if a.State() != StateActive {
		t.Fatalf("source %s; want active", a.State())
	}
	r.submit(a, 5)
	r.waitAcked(a, 12)
}

// A relocation abandoned during its revert (the handoff message lost, the caller's context
// ending while the revert's conditional write waits) returns the target, which never heard
// of the relocation, to standby.
func TestAbandonedRevertReleasesTheTarget(t *testing.T) {
	r := memRig(t, nil)
	hs := &holdCASStore{Store: r.st, hit: make(chan struct{}), release: make(chan struct{})}
	a, tg := r.ackingOn("a", hs, 3, 5), r.add("t", nil)
	stop := r.c.Bus().Subscribe(func(s Signal) {
		if s.Writer == "a" && s.Kind == history.SigTransferred {
			hs.armed.Store(true) // the next conditional write is the revert's
		}
	})
	defer stop()
	r.faultHandoffs(a, faults.Handoff{LoseMessage: true})
	rctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := a.Relocate(rctx, tg, RelocateOptions{AnswerTimeout: 20 * time.Millisecond})
		done <- err
	}()
	<-hs.hit
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "revert") {
		t.Fatalf("relocation abandoned during its revert: %v; want the revert's end", err)
	}
	if tg.State() != StateStandby {
		t.Fatalf("the target that never heard of the relocation is %s; want standby", tg.State())
	}
	r.promote(tg, 4)
}

// A transfer that succeeded records the version it wrote (its ETag, the token the source
// retains for a revert, and its seq), not the one it presented.
func TestTransferRecordsTheVersionItWrote(t *testing.T) {
	r := memRig(t, nil)
	a, tg := r.acking("a", 3, 5), r.add("t", nil)
	presented, before := a.f.Token(), a.f.Seq()
	if res, err := a.Relocate(ctx(t), tg, RelocateOptions{}); err != nil || res != RelocationHandedOff {
		t.Fatalf("relocate: %+v, %v", res, err)
	}
	tr := r.events(history.Transfer, "a")
	if len(tr) != 1 || tr[0].Outcome != history.OK {
		t.Fatalf("transfer events %+v; want one that succeeded", tr)
	}
	if ev := tr[0]; ev.Token == presented || ev.Token != a.f.Token() || ev.Seq != before+1 || ev.Seq != a.f.Seq() {
		t.Fatalf("transfer recorded token %q seq %d; presented %q at seq %d, retained %q at seq %d",
			ev.Token, ev.Seq, presented, before, a.f.Token(), a.f.Seq())
	}
}

// A transfer whose conditional write got no answer (a 500: the outcome unknown) is tried
// again with the same token, and the relocation goes on to hand off.
func TestTransferRetriesAnUnansweredWrite(t *testing.T) {
	r := memRig(t, nil)
	st := newFailStore(r.st, "put-if-match", func(key string) bool { return strings.Contains(key, "/fence__") }, 0, unanswered)
	a, tg := r.ackingOn("a", st, 3, 5), r.add("t", nil)
	stop := r.c.Bus().Subscribe(func(s Signal) {
		if s.Writer == "a" && s.Kind == history.SigDrained {
			st.n.Store(1) // the next conditional write on the fence is the transfer's
		}
	})
	defer stop()
	if res, err := a.Relocate(ctx(t), tg, RelocateOptions{}); err != nil || res != RelocationHandedOff {
		t.Fatalf("relocation whose transfer went unanswered once: %+v, %v; want it handed off", res, err)
	}
	tr := r.events(history.Transfer, "a")
	if len(tr) != 2 || tr[0].Outcome == history.OK || tr[0].Outcome == history.Fail || tr[1].Outcome != history.OK ||
		tr[1].Token == "" || tr[1].Token != a.f.Token() {
		t.Fatalf("transfer events %+v; want an unanswered attempt, then one that wrote the retained token %q", tr, a.f.Token())
	}
	r.waitAcked(tg, 0)
	if tg.State() != StateActive {
		t.Fatalf("target %s; want active", tg.State())
	}
}

// A source that resumed after a failed handoff publishes its next reference set in its
// revert's band (grantBase at the revert's seq), above anything a target that took the chain
// at the transfer's seq could have published at the same term.
func TestResumedSourcePublishesInItsRevertsBand(t *testing.T) {
	r := memRig(t, nil)
	a, tg := r.acking("a", 3, 5), r.add("t", nil)
	if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("refresh: %v %v", ok, err)
	}
	a.mu.Lock()
	before := a.segs.gen
	a.mu.Unlock()
	r.faultHandoffs(a, faults.Handoff{LoseMessage: true})
	if res, err := a.Relocate(ctx(t), tg, RelocateOptions{AnswerTimeout: 20 * time.Millisecond}); err != nil || res != RelocationResumed {
		t.Fatalf("relocation with a lost message: %+v, %v; want the source resumed", res, err)
	}
	seq := a.f.Seq()
	if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("refresh after the revert: %v %v", ok, err)
	}
	a.mu.Lock()
	after := a.segs.gen
	a.mu.Unlock()
	if want := grantBase(before, seq); after != want {
		t.Fatalf("the resumed source published at generation %d (before the relocation %d, revert seq %d); want %d",
			after, before, seq, want)
	}
}

// A relocation target's first sync adopts the chain (one Adopt event); every later sync is a
// CAS presenting the token the previous one got.
func TestTargetAdoptsOnceThenCASes(t *testing.T) {
	r := memRig(t, nil)
	a, tg := r.acking("a", 3, 5), r.add("t", nil)
	if res, err := a.Relocate(ctx(t), tg, RelocateOptions{}); err != nil || res != RelocationHandedOff {
		t.Fatalf("relocate: %+v, %v", res, err)
	}
	for i := 1; i <= 3; i++ {
		r.submit(tg, 5)
		r.waitAcked(tg, int64(5*i))
	}
	ad, cas := r.events(history.Adopt, "t"), r.events(history.CAS, "t")
	if len(ad) != 1 || ad[0].Outcome != history.OK || len(cas) < 2 {
		t.Fatalf("target's adoptions %+v, CASes %+v; want one adoption, then CASes", ad, cas)
	}
	for i, ev := range cas {
		if ev.Outcome != history.OK || ev.Token == "" || ev.Seq != ad[0].Seq+int64(i)+1 {
			t.Fatalf("target's CAS %d: %+v after the adoption at seq %d; want the next seq, a token presented", i, ev, ad[0].Seq)
		}
	}
}
