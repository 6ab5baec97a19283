package writers

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A handoff message delayed past the answer timeout is not lost: the source gives up and
// resumes, and the target, which heard of the relocation, still activates when the message
// arrives; its adoption is then refused, and the resumed source keeps serving.
func TestMessageLaterThanTheAnswerTimeoutActivatesTheTargetLate(t *testing.T) {
	r := memRig(t, nil)
	a := r.acking("a", 3, 10)
	tg := r.add("t", nil)
	r.faultHandoffs(a, faults.Handoff{Delay: 300 * time.Millisecond})
	res, err := a.Relocate(ctx(t), tg, RelocateOptions{AnswerTimeout: 20 * time.Millisecond})
	if err != nil || res != RelocationResumed {
		t.Fatalf("relocation whose message outlives the answer timeout: %+v, %v; want the source resumed", res, err)
	}
	if hs := r.events(history.Handoff, "a"); len(hs) != 1 || hs[0].Outcome != history.Fail || !strings.Contains(hs[0].Err, "no handoff answer") {
		t.Fatalf("handoff events %+v; want one, failed for want of an answer", hs)
	}
	// The message is on its way: the target stays reserved for it, not a standby copy again.
	if st := tg.State(); st != StateTarget && st != StateActive {
		t.Fatalf("the target awaiting the late message is %s; want reserved (or already active)", st)
	}
	r.submit(a, 5)
	r.waitAcked(a, 15)
	// The late message reaches the target, which activates and is refused at its adoption.
	r.wait(tg, history.SigHydrated, 1)
	waitFor(t, tg.BelievesPrimary)
	r.submit(tg, 1)
	r.wait(tg, history.SigFenced, 1)
	if ad := r.events(history.Adopt, "t"); len(ad) != 1 || ad[0].Outcome != history.FencedOut {
		t.Fatalf("adopt events %+v; want one refused adoption", ad)
	}
	if n := len(r.events(history.StandDown, "t")); n != 0 {
		t.Fatalf("the late target recorded %d stand-downs; it gave nothing up", n)
	}
	r.submit(a, 5)
	r.waitAcked(a, 20)
	if a.State() != StateActive {
		t.Fatalf("source is %s, want active", a.State())
	}
	r.requireDurable(r.audit())
}

// A revert whose conditional write meets an unknown outcome (a 500, the write not applied)
// is tried again: the retained token still matches, so the source resumes and serves.
func TestRevertRetriesAnUnansweredWrite(t *testing.T) {
	r, a, tg, res, err := relocateWithFailedRevert(t, unanswered)
	if err != nil || res != RelocationResumed {
		t.Fatalf("relocation whose revert meets an unanswered write: %+v, %v; want the source resumed", res, err)
	}
	rv := r.events(history.Revert, "a")
	if len(rv) < 2 || rv[0].Outcome == history.OK || rv[len(rv)-1].Outcome != history.OK {
		t.Fatalf("revert events %+v; want an unanswered attempt, then one that resumed", rv)
	}
	if a.State() != StateActive || tg.State() != StateStandby {
		t.Fatalf("source %s, target %s; want active and standby", a.State(), tg.State())
	}
	r.submit(a, 5)
	r.waitAcked(a, 15)
	r.requireDurable(r.audit())
}

// A revert whose conditional write the store refuses outright (a 403: a credential rotated,
// a policy not yet propagated) is tried again too: the refusal says nothing about the write,
// the retained token is the source's only way back, and giving up would leave the source
// blocked for good (ServesAfterHeal). Once the store accepts the request the source resumes.
func TestRevertRetriesARefusedWrite(t *testing.T) {
	r, a, _, res, err := relocateWithFailedRevert(t, forbidden)
	if err != nil || res != RelocationResumed {
		t.Fatalf("relocation whose revert is refused with a 403 once: %+v, %v; want the source resumed", res, err)
	}
	rv := r.events(history.Revert, "a")
	if len(rv) < 2 || rv[0].Outcome == history.OK || !strings.Contains(rv[0].Err, "403") && !strings.Contains(rv[0].Err, "AccessDenied") ||
		rv[len(rv)-1].Outcome != history.OK {
		t.Fatalf("revert events %+v; want the refused attempt, then one that resumed", rv)
	}
	if a.State() != StateActive {
		t.Fatalf("source %s, want active", a.State())
	}
}

// relocateWithFailedRevert relocates a (active at term 3, 10 ops acknowledged) to t with the
// handoff message lost, so the source reverts, and fails the source's first conditional write
// after its transfer, its revert's, with fail.
func relocateWithFailedRevert(t *testing.T, fail error) (*rig, *Writer, *Writer, RelocationResult, error) {
	t.Helper()
	r := memRig(t, nil)
	st := newFailStore(r.st, "put-if-match", func(key string) bool { return strings.Contains(key, "/fence__") }, 0, fail)
	a, tg := r.add("a", st), r.add("t", nil)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	cancel := r.c.Bus().Subscribe(func(s Signal) {
		if s.Writer == "a" && s.Kind == history.SigTransferred {
			st.n.Store(1)
		}
	})
	defer cancel()
	r.faultHandoffs(a, faults.Handoff{LoseMessage: true})
	res, err := a.Relocate(ctx(t), tg, RelocateOptions{AnswerTimeout: 20 * time.Millisecond})
	return r, a, tg, res, err
}

// garbleStore, once armed, applies the next conditional write on a fence key and loses its
// answer (a 500), then garbles the next read of a fence key (the body cut in half, as a
// misdirected or damaged answer).
type garbleStore struct {
	store.Store
	armed, garble atomic.Bool
}

func (g *garbleStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	if strings.Contains(key, "/fence__") && g.armed.CompareAndSwap(true, false) {
		if _, err := g.Store.PutIfMatch(ctx, key, body, etag); err != nil {
			return "", err
		}
		g.garble.Store(true)
		return "", unanswered
	}
	return g.Store.PutIfMatch(ctx, key, body, etag)
}

func (g *garbleStore) Get(ctx context.Context, key string) (store.Object, error) {
	o, err := g.Store.Get(ctx, key)
	if err == nil && strings.Contains(key, "/fence__") && g.garble.CompareAndSwap(true, false) {
		o.Body = o.Body[:len(o.Body)/2]
	}
	return o, err
}

// garbledAfter is a source a (term 3, 10 ops acknowledged) and a standby copy t, a's path
// a garbleStore armed when a signals sig: a's next conditional write on the fence lands
// unanswered, and its read-back comes back garbled.
func garbledAfter(t *testing.T, sig history.SignalKind) (*rig, *Writer, *Writer) {
	t.Helper()
	r := memRig(t, nil)
	st := &garbleStore{Store: r.st}
	a, tg := r.ackingOn("a", st, 3, 10), r.add("t", nil)
	t.Cleanup(r.c.Bus().Subscribe(func(s Signal) {
		if s.Writer == "a" && s.Kind == sig {
			st.armed.Store(true)
		}
	}))
	return r, a, tg
}

// A revert that landed but whose answer was lost, and whose read-back came back garbled
// (the outcome still unknown), is tried again: the retry, refused by that very revert, is
// recognised by identity and the source resumes. Giving up there would leave the source
// blocked for good, neither serving nor stood down.
func TestRevertRetriesAfterAGarbledReadBack(t *testing.T) {
	r, a, tg := garbledAfter(t, history.SigTransferred) // the revert's write
	r.faultHandoffs(a, faults.Handoff{LoseMessage: true})
	res, err := a.Relocate(ctx(t), tg, RelocateOptions{AnswerTimeout: 20 * time.Millisecond})
	if err != nil || res != RelocationResumed {
		t.Fatalf("relocation whose revert landed unanswered and read back garbled: %+v, %v (source %s); want it resumed",
			res, err, a.State())
	}
	r.submit(a, 5)
	r.waitAcked(a, 15)
}

// The same for a transfer: one that landed unanswered and read back garbled is tried again,
// recognised by identity when its own write refuses the retry, and the handoff goes on. Given
// up, the source would serve again on a chain it had handed to a target that never adopts.
func TestTransferRetriesAfterAGarbledReadBack(t *testing.T) {
	r, a, tg := garbledAfter(t, history.SigDrained) // the transfer's write
	res, err := a.Relocate(ctx(t), tg, RelocateOptions{})
	if err != nil || res != RelocationHandedOff {
		t.Fatalf("relocation whose transfer landed unanswered and read back garbled: %+v, %v (source %s); want it handed off",
			res, err, a.State())
	}
	r.submit(tg, 5)
	r.waitAcked(tg, 5)
	if len(r.events(history.Fenced, "")) != 0 {
		t.Fatalf("a copy was fenced: %+v", r.events(history.Fenced, ""))
	}
}

// deniedStore lands the first conditional write on the fence after it is armed without an
// answer, fails the read-back that follows, and refuses the next conditional write for the
// store's configuration (a 403) without applying it.
type deniedStore struct {
	store.Store
	armed, readBack, deny atomic.Bool
}

func (d *deniedStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	if strings.Contains(key, "/fence__") {
		if d.armed.CompareAndSwap(true, false) {
			if _, err := d.Store.PutIfMatch(ctx, key, body, etag); err != nil {
				return "", err
			}
			d.readBack.Store(true)
			d.deny.Store(true)
			return "", unanswered
		}
		if d.deny.CompareAndSwap(true, false) {
			return "", forbidden
		}
	}
	return d.Store.PutIfMatch(ctx, key, body, etag)
}

func (d *deniedStore) Get(ctx context.Context, key string) (store.Object, error) {
	if strings.Contains(key, "/fence__") && d.readBack.CompareAndSwap(true, false) {
		return store.Object{}, unanswered
	}
	return d.Store.Get(ctx, key)
}

// A transfer that landed unanswered, whose read-back failed and whose retry met a 403, is
// tried again: the next retry, refused by that very transfer, is recognised by identity and
// the handoff goes on. Given up on the 403, the source would serve again on a chain its own
// write had handed to the target, and fence itself at its next sync with nobody superseding
// it.
func TestTransferRetriesADenialAfterAnUnknownAttempt(t *testing.T) {
	r := memRig(t, nil)
	st := &deniedStore{Store: r.st}
	a, tg := r.ackingOn("a", st, 3, 10), r.add("t", nil)
	t.Cleanup(r.c.Bus().Subscribe(func(s Signal) {
		if s.Writer == "a" && s.Kind == history.SigDrained {
			st.armed.Store(true)
		}
	}))
	res, err := a.Relocate(ctx(t), tg, RelocateOptions{})
	if err != nil || res != RelocationHandedOff {
		t.Fatalf("relocation whose transfer landed unanswered, read back nothing and met a 403: %+v, %v (source %s); want it handed off",
			res, err, a.State())
	}
	r.submit(tg, 5)
	r.waitAcked(tg, 5)
	if fenced := r.events(history.Fenced, ""); len(fenced) != 0 {
		t.Fatalf("a copy was fenced: %+v", fenced)
	}
}
