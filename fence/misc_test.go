package fence

import (
	"context"
	"errors"
	"testing"

	"github.com/fencebench/fencebench/store"
)

// A configuration error is a harness problem: it must surface as itself, never as a fencing
// verdict or a retryable outcome.
func TestConfigErrorIsNotAnOutcome(t *testing.T) {
	w := newWorld(t, backends()[0])
	cfgErr := &store.Error{Op: "test", Kind: store.ErrConfig, Status: 404, Code: "NoSuchBucket"}
	bare := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrConfig) || IsFenced(err) || IsRetryable(err) || errors.Is(err, ErrIdentity) {
			t.Fatalf("%s: got %v, want a bare configuration error", what, err)
		}
	}

	a, as := w.owner("a", 5, true, Correct)
	as.on("put-if-match", "", fail).Err(cfgErr)
	bare("ack CAS", a.Advance(w.ctx))
	as.on("put-if-match", "", drop)
	as.on("get", "", fail).Err(cfgErr)
	bare("read-back", a.Advance(w.ctx))
	if a.Fenced() {
		t.Fatal("a configuration error fenced the instance")
	}
	mustOK(t, "ack once the configuration is fixed", a.Advance(w.ctx))

	s, ss := w.fence("s", 9, false, Correct)
	ss.on("list", "", fail).Err(cfgErr)
	bare("claim", s.Claim(w.ctx))
}

// Supersession is a positive test for a higher term: a missing own key is not supersession,
// and an instance that is behind its own object is not superseded either.
func TestGatesIgnoreOwnState(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			stale, _ := w.owner("a", 5, true, Correct)
			fresh, _ := w.owner("a", 5, true, Correct) // engine reset: a new instance re-adopts
			mustOK(t, "fresh instance acks", fresh.Advance(w.ctx))
			if ok, why := stale.PublishAllowed(w.ctx); !ok {
				t.Fatalf("instance behind its object: publish refused: %s", why)
			}
			if err := w.raw.Delete(w.ctx, w.key(5)); err != nil {
				t.Fatal(err)
			}
			if ok, why := fresh.PublishAllowed(w.ctx); !ok {
				t.Fatalf("missing own key: publish refused: %s", why)
			}
			if ok, why := fresh.CollectAllowed(w.ctx); !ok {
				t.Fatalf("missing own key: collection refused: %s", why)
			}
		})
	}
}

// Fenced is terminal: every later call answers with the same verdict and nothing is written.
func TestFencedIsTerminal(t *testing.T) {
	w := newWorld(t, backends()[0])
	a, as := w.owner("a", 5, true, Correct)
	w.owner("b", 6, false, Correct)
	first := a.Advance(w.ctx)
	wantErr(t, "fenced", first, ErrFenced, "")
	writes := 0
	for _, op := range []string{"put-if-absent", "put-if-match", "delete", "delete-many"} {
		as.on(op, "", pass).Times(-1).Do(func() { writes++ })
	}
	for _, err := range []error{a.Advance(w.ctx), a.Claim(w.ctx), a.AdvanceAt(w.ctx, 9), a.Transfer(w.ctx, "t")} {
		if !errors.Is(err, ErrFenced) || err.Error() != first.Error() {
			t.Fatalf("got %v, want the first verdict %v", err, first)
		}
	}
	if resumed, err := a.Revert(w.ctx); resumed || err != nil {
		t.Fatalf("revert of a fenced instance: %v %v", resumed, err)
	}
	if writes != 0 || a.Token() != "" {
		t.Fatalf("a fenced instance wrote %d times, token %q", writes, a.Token())
	}
	if !errors.Is(a.FencedErr(), ErrFenced) {
		t.Fatalf("FencedErr: %v", a.FencedErr())
	}
}

// lying accepts every conditional write: the "store" an in-process emulation would be.
type lying struct{ *store.Mem }

func (l lying) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	return l.Put(ctx, key, body)
}

func (l lying) PutIfMatch(ctx context.Context, key string, body []byte, _ string) (string, error) {
	return l.Put(ctx, key, body)
}

// Probe accepts enforcing stores and refuses a lying one; on the lying store (what the
// accept-unenforced-store variant runs on) a swept zombie keeps acking.
func TestProbe(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			s, p := b.open(t)
			mustOK(t, "probe", Probe(context.Background(), s, p))
			if es, err := s.List(context.Background(), p); err != nil || len(es) != 0 {
				t.Fatalf("probe left %v (%v)", es, err)
			}
		})
	}
	l := lying{store.NewMem()}
	if err := Probe(context.Background(), l, "p/"); !errors.Is(err, ErrUnenforced) {
		t.Fatalf("lying store: got %v, want ErrUnenforced", err)
	}
	w := &world{t: t, ctx: context.Background(), raw: l, prefix: "p/"}
	a, _ := w.owner("a", 5, true, Correct)
	w.owner("b", 6, false, Correct)
	if err := a.Advance(w.ctx); err != nil {
		t.Fatalf("on a lying store the zombie got %v; the protocol should be unable to fence it", err)
	}
}

// Every conditional write classifies a configuration error the same way: the call returns
// it bare (neither fenced, retryable nor an identity problem), the instance is not fenced,
// and the same call succeeds once the configuration is fixed.
func TestConfigErrorAtEveryWrite(t *testing.T) {
	cfgErr := &store.Error{Op: "test", Kind: store.ErrConfig, Status: 403, Code: "AccessDenied"}
	bare := func(t *testing.T, f *Fence, what string, err error) {
		t.Helper()
		if !errors.Is(err, store.ErrConfig) || IsFenced(err) || IsRetryable(err) || errors.Is(err, ErrIdentity) {
			t.Fatalf("%s: got %v, want a bare configuration error", what, err)
		}
		if f.Fenced() {
			t.Fatalf("%s: a configuration error fenced the instance", what)
		}
	}
	w := newWorld(t, backends()[0])

	// The claim's create.
	a, as := w.fence("a", 5, true, Correct)
	as.on("put-if-absent", "", fail).Err(cfgErr)
	bare(t, a, "claim create", a.Claim(w.ctx))
	mustOK(t, "claim once fixed", a.Claim(w.ctx))

	// The equal-term arbitration's CAS: a new instance of a re-adopts its key.
	again, ags := w.fence("a", 5, true, Correct)
	ags.on("put-if-match", "", fail).Err(cfgErr)
	bare(t, again, "re-adoption CAS", again.Claim(w.ctx))
	mustOK(t, "re-adoption once fixed", again.Claim(w.ctx))

	// The transfer's write and the revert's.
	ags.on("put-if-match", "", fail).Err(cfgErr)
	bare(t, again, "transfer", again.Transfer(w.ctx, "t"))
	if again.Transferred() {
		t.Fatal("a transfer that failed on a configuration error counts as transferred")
	}
	mustOK(t, "transfer once fixed", again.Transfer(w.ctx, "t"))
	ags.on("put-if-match", "", fail).Err(cfgErr)
	resumed, err := again.Revert(w.ctx)
	bare(t, again, "revert", err)
	if resumed {
		t.Fatal("a revert that failed on a configuration error resumed")
	}
	if resumed, err := again.Revert(w.ctx); !resumed || err != nil {
		t.Fatalf("revert once fixed: resumed %v, %v; want resumed", resumed, err)
	}
}

// A transfer to an allocation the fence body cannot record is refused before any write: an
// empty id, or one holding the body's separator.
func TestTransferRefusesBadTarget(t *testing.T) {
	w := newWorld(t, backends()[0])
	a, as := w.owner("a", 5, true, Correct)
	writes := 0
	as.on("put-if-match", "", pass).Times(-1).Do(func() { writes++ })
	for _, target := range []string{"", "t|x", "|"} {
		err := a.Transfer(w.ctx, target)
		if err == nil || IsFenced(err) || IsRetryable(err) || errors.Is(err, ErrTransferred) {
			t.Errorf("transfer to %q: got %v, want a refusal that is no protocol outcome", target, err)
		}
	}
	if writes != 0 || a.Transferred() {
		t.Fatalf("refused transfers wrote %d times, transferred %v", writes, a.Transferred())
	}
	mustOK(t, "transfer to a good target", a.Transfer(w.ctx, "t"))
}

// A protocol outcome wraps its sentinel and, when there is one, the store error behind it:
// both answer errors.Is and errors.As.
func TestErrorUnwrapsBoth(t *testing.T) {
	cause := &store.Error{Op: "put", Key: "k", Kind: store.ErrPreconditionFailed, Status: 412}
	e := error(&Error{Kind: ErrFenced, Op: "advance", Key: "k", Reason: "lost the CAS", Err: cause})
	var se *store.Error
	if !errors.Is(e, ErrFenced) || !errors.Is(e, store.ErrPreconditionFailed) || !errors.As(e, &se) || se.Status != 412 {
		t.Fatalf("%v: does not unwrap to both its kind and its store error", e)
	}
	bare := error(&Error{Kind: ErrRetryable, Op: "claim", Key: "k", Reason: "unknown"})
	if !errors.Is(bare, ErrRetryable) || errors.Is(bare, ErrFenced) || errors.As(bare, &se) {
		t.Fatalf("%v: want only its kind", bare)
	}
}

// A revert whose write outcome is unknown and whose read-back fails too is retryable: it
// neither resumes nor stands down, and the next revert settles it.
func TestRevertUnknownOutcomeIsRetryable(t *testing.T) {
	w := newWorld(t, backends()[0])
	a, as := w.owner("a", 5, true, Correct)
	mustOK(t, "transfer", a.Transfer(w.ctx, "t"))
	as.on("put-if-match", "", drop)
	as.on("get", "", fail).Err(injectedAmbiguous("get", w.key(5)))
	resumed, err := a.Revert(w.ctx)
	if resumed || !IsRetryable(err) || a.Fenced() {
		t.Fatalf("revert with an unknown outcome: resumed %v, %v, fenced %v; want retryable", resumed, err, a.Fenced())
	}
	if resumed, err := a.Revert(w.ctx); !resumed || err != nil {
		t.Fatalf("the next revert: resumed %v, %v; want resumed", resumed, err)
	}
}
