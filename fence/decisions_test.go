package fence

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/store"
)

// bareConfigErr fails unless err is a configuration error returned as itself: neither fenced,
// retryable nor an identity problem, and the instance is not fenced by it.
func bareConfigErr(t *testing.T, f *Fence, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrConfig) || IsFenced(err) || IsRetryable(err) || errors.Is(err, ErrIdentity) {
		t.Fatalf("%s: got %v, want a bare configuration error", what, err)
	}
	if f.Fenced() {
		t.Fatalf("%s: a configuration error fenced the instance", what)
	}
}

// TestRefusedRetryWhoseReadBackHitsAConfigErrorReturnsItBare: an owner's CAS lands but its
// answer is lost, and so is the read-back, so the outcome stays unknown. The retry at the same
// seq is refused by that very write, and the read-back that would tell so fails with a
// configuration error: the call returns the configuration error as itself, neither fenced
// nor retryable, and the owner is not fenced.
func TestRefusedRetryWhoseReadBackHitsAConfigErrorReturnsItBare(t *testing.T) {
	w := newWorld(t, backends()[0])
	a, as := w.owner("a", 5, true, Correct)
	as.on("put-if-match", w.key(5), lose)
	as.on("get", w.key(5), drop)
	wantErr(t, "landed CAS with a lost answer and a lost read-back", a.Advance(w.ctx), ErrRetryable, "read-back failed")
	as.on("get", w.key(5), fail).Err(accessDenied)
	bareConfigErr(t, a, "retry refused by the owner's own write, read-back refused by the configuration", a.Advance(w.ctx))
	if c := w.content(5); c.AllocationID != "a" || c.Seq != 1 {
		t.Fatalf("key holds %+v, want the owner's own write at seq 1", c)
	}
	mustOK(t, "the retry once the store answers again (its own write refuses it)", a.Advance(w.ctx))
	if a.Seq() != 1 || a.Fenced() {
		t.Fatalf("after the retry the owner holds seq %d (fenced: %v), want its own write at seq 1 adopted", a.Seq(), a.Fenced())
	}
}

// TestReadBackConfigErrorLeavesTheOutcomeUnknown: an owner's CAS lands but its answer is
// lost, and the read-back meets a configuration error (a 403). That error tells nothing about
// the write, so its outcome stays unknown: once the store answers again, the retry refused by
// the owner's own write adopts it, and the owner goes on; it is never fenced by itself.
func TestReadBackConfigErrorLeavesTheOutcomeUnknown(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, Correct)
			as.on("put-if-match", w.key(5), lose)
			as.on("get", w.key(5), fail).Err(accessDenied)
			bareConfigErr(t, a, "landed CAS with a lost answer, read-back refused by the configuration", a.Advance(w.ctx))
			mustOK(t, "the retry once the store answers again", a.Advance(w.ctx))
			mustOK(t, "the next advance", a.Advance(w.ctx))
			if c := w.content(5); c.AllocationID != "a" || c.Seq != 2 || a.Seq() != 2 || a.Fenced() {
				t.Fatalf("key holds %+v, owner at seq %d (fenced: %v); want the owner's writes at seq 1 then 2", c, a.Seq(), a.Fenced())
			}
		})
	}
}

// TestGarbledReadBackLeavesTheOutcomeUnknown: an owner's CAS lands but its answer is lost,
// and the read-back returns a body that is no version of the key (a garbled or misdirected
// answer): an identity error, which tells nothing about the write. Its outcome stays
// unknown, so the retry refused by the owner's own write reads the key again and adopts it;
// the owner is never fenced by itself. The same holds when the garbled read is the one after
// the refused retry.
func TestGarbledReadBackLeavesTheOutcomeUnknown(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			for _, late := range []bool{false, true} {
				w := newWorld(t, b)
				a, as := w.owner("a", 5, true, Correct)
				as.on("put-if-match", w.key(5), lose)
				if late {
					as.on("get", w.key(5), drop)
					wantErr(t, "landed CAS with a lost answer and a lost read-back", a.Advance(w.ctx), ErrRetryable, "")
				}
				as.on("get", w.key(5), garble)
				if err := a.Advance(w.ctx); !errors.Is(err, ErrIdentity) || IsFenced(err) || a.Fenced() {
					t.Fatalf("late=%v: a garbled read-back: got %v (fenced: %v), want an identity error, not fenced", late, err, a.Fenced())
				}
				mustOK(t, "the retry, refused by the owner's own write, reads it back", a.Advance(w.ctx))
				mustOK(t, "the next advance", a.Advance(w.ctx))
				if c := w.content(5); c.AllocationID != "a" || c.Seq != 2 || a.Seq() != 2 || a.Fenced() {
					t.Fatalf("late=%v: key holds %+v, owner at seq %d (fenced: %v); want the owner's writes at seq 1 then 2",
						late, c, a.Seq(), a.Fenced())
				}
			}
		})
	}
}

// accessDenied is a 403: the store's configuration refused the request, which was never applied.
var accessDenied = &store.Error{Op: "test", Kind: store.ErrConfig, Status: 403, Code: "AccessDenied"}

// landUnanswered makes the next conditional write on term's key land with its answer lost,
// and the read-back after it lost too: the write's outcome stays unknown.
func (w *world) landUnanswered(fs *faulty, term int64) {
	fs.on("put-if-match", w.key(term), lose)
	fs.on("get", w.key(term), drop)
}

// TestConfigRefusedRetryKeepsTheOutcomeUnknown: an owner's CAS lands but its answer and its
// read-back are lost, so its outcome is unknown. The retry at the same seq is refused by the
// store's configuration (a 403, never applied), which says nothing about the earlier write:
// the retry after that, refused by the owner's own write, reads it back and adopts it.
func TestConfigRefusedRetryKeepsTheOutcomeUnknown(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, Correct)
			w.landUnanswered(as, 5)
			wantErr(t, "landed CAS with a lost answer and a lost read-back", a.Advance(w.ctx), ErrRetryable, "")
			as.on("put-if-match", w.key(5), fail).Err(accessDenied)
			bareConfigErr(t, a, "the retry refused by the configuration", a.Advance(w.ctx))
			mustOK(t, "the retry after it, refused by the owner's own write", a.Advance(w.ctx))
			if c := w.content(5); c.AllocationID != "a" || c.Seq != 1 || a.Seq() != 1 || a.Fenced() {
				t.Fatalf("key holds %+v, owner at seq %d (fenced: %v); want the owner's own write at seq 1 adopted", c, a.Seq(), a.Fenced())
			}
		})
	}
}

// TestConfigRefusedRetryKeepsATransferOrRevertUnknown: the same for a relocation source's
// transfer and its revert. Each lands with its answer and read-back lost; the retry is refused
// by the store's configuration (a 403); the retry after that, refused by the source's own
// landed write, reads it back and takes it: the transfer as done (the key names the target),
// the revert as resumed (the key names the source again).
func TestConfigRefusedRetryKeepsATransferOrRevertUnknown(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, Correct)
			w.landUnanswered(as, 5)
			wantErr(t, "landed transfer with a lost answer and a lost read-back", a.Transfer(w.ctx, "t"), ErrRetryable, "")
			as.on("put-if-match", w.key(5), fail).Err(accessDenied)
			bareConfigErr(t, a, "the transfer's retry refused by the configuration", a.Transfer(w.ctx, "t"))
			mustOK(t, "the transfer's retry after it, refused by the source's own write", a.Transfer(w.ctx, "t"))
			if c := w.content(5); c.AllocationID != "t" || c.Seq != 1 || a.Fenced() {
				t.Fatalf("key holds %+v (source fenced: %v); want the transfer to t at seq 1", c, a.Fenced())
			}

			w.landUnanswered(as, 5)
			resumed, err := a.Revert(w.ctx)
			wantErr(t, "landed revert with a lost answer and a lost read-back", err, ErrRetryable, "")
			as.on("put-if-match", w.key(5), fail).Err(accessDenied)
			resumed, err = a.Revert(w.ctx)
			bareConfigErr(t, a, "the revert's retry refused by the configuration", err)
			resumed, err = a.Revert(w.ctx)
			mustOK(t, "the revert's retry after it, refused by the source's own write", err)
			if c := w.content(5); !resumed || c.AllocationID != "a" || c.Seq != 2 || a.Seq() != 2 || a.Fenced() {
				t.Fatalf("revert resumed %v, key holds %+v, source at seq %d (fenced: %v); want the source's own revert at seq 2 taken",
					resumed, c, a.Seq(), a.Fenced())
			}
		})
	}
}

// TestClaimWhoseSweepListingFailsHoldsNothing: a claim creates its key, then the listing
// before the sweep fails. The claim is retryable (it could not sweep the lower terms), the
// instance holds no token, and a retry claims.
func TestClaimWhoseSweepListingFailsHoldsNothing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			w.owner("old", 4, true, Correct)
			a, as := w.fence("a", 5, true, Correct)
			as.on("list", "", fail).Skip(1).Err(injectedAmbiguous("list", w.prefix))
			wantErr(t, "claim whose sweep listing fails", a.Claim(w.ctx), ErrRetryable, "list before sweep failed")
			if a.Token() != "" {
				t.Fatalf("a claim that could not sweep holds token %q", a.Token())
			}
			if !w.exists(4) {
				t.Fatal("term 4 was swept although the sweep's listing failed")
			}
			mustOK(t, "the claim's retry", a.Claim(w.ctx))
			if w.exists(4) {
				t.Fatal("the retried claim left term 4")
			}
		})
	}
}

// TestClaimWhoseSweepListingHitsAConfigErrorReturnsItBare: the listing before the sweep
// fails with a configuration error: the claim returns it as itself and holds no token.
func TestClaimWhoseSweepListingHitsAConfigErrorReturnsItBare(t *testing.T) {
	w := newWorld(t, backends()[0])
	a, as := w.fence("a", 5, true, Correct)
	as.on("list", "", fail).Skip(1).Err(accessDenied)
	bareConfigErr(t, a, "claim whose sweep listing is refused by the configuration", a.Claim(w.ctx))
	if a.Token() != "" {
		t.Fatalf("a claim that could not sweep holds token %q", a.Token())
	}
}

// TestRecreateOn404RewritesTheSealsBodySoItsOldTokenWorksAgain: under recreate-on-404, a
// copy whose equal-term key vanished between its create and its arbitration read re-creates
// the key with the seal's body. The key gets the seal's ETag back, so the copy's earlier
// instance, still holding that ETag, writes through it again.
func TestRecreateOn404RewritesTheSealsBodySoItsOldTokenWorksAgain(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			old, _ := w.owner("a", 5, true, RecreateOn404)
			sealed := old.Token()
			again, ags := w.fence("a", 5, true, RecreateOn404)
			ags.on("get", w.key(5), pass).Do(func() {
				if err := w.raw.Delete(w.ctx, w.key(5)); err != nil {
					t.Errorf("delete K(5): %v", err)
				}
			})
			mustOK(t, "the new instance re-creates the vanished key", again.Claim(w.ctx))
			if c := w.content(5); c.AllocationID != "a" || c.Seq != 0 {
				t.Fatalf("key holds %+v, want the seal's body (allocation a, seq 0)", c)
			}
			if again.Token() != sealed || again.Seq() != 0 {
				t.Fatalf("the re-creating instance holds %q seq %d, want the seal's ETag %q at seq 0", again.Token(), again.Seq(), sealed)
			}
			mustOK(t, "the earlier instance acks on the seal's old ETag", old.Advance(w.ctx))
		})
	}
}

// TestAmbiguousIsSuccessTakesAnUnansweredArbitrationAsApplied: under ambiguous-is-success, a
// claimant whose arbitration CAS goes unanswered (and never landed) takes it as applied and
// adopts the key's current version: the claim succeeds although the key still records the
// incumbent, and both now hold the same token.
func TestAmbiguousIsSuccessTakesAnUnansweredArbitrationAsApplied(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, _ := w.owner("a", 5, true, AmbiguousIsSuccess)
			s, ss := w.fence("s", 5, false, AmbiguousIsSuccess)
			ss.on("put-if-match", w.key(5), drop)
			mustOK(t, "claim whose arbitration CAS is unanswered", s.Claim(w.ctx))
			if c := w.content(5); c.AllocationID != "a" || c.Seq != 0 {
				t.Fatalf("key holds %+v, want the incumbent's version untouched", c)
			}
			if s.Token() != a.Token() || s.Seq() != 0 {
				t.Fatalf("claimant holds %q seq %d, want the incumbent's version %q at seq 0", s.Token(), s.Seq(), a.Token())
			}
		})
	}
}

// TestClaimBelowSeveralHigherTermsNamesTheHighest: a stale grant finds several higher terms
// present; it is fenced before creating its key, and the error names the highest of them.
func TestClaimBelowSeveralHigherTermsNamesTheHighest(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			for term := int64(6); term <= 20; term++ {
				body, err := Encode(Content{IndexUUID: testIndex, ShardID: testShard, Term: term, AllocationID: "g", NodeID: "node-g"})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := w.raw.PutIfAbsent(w.ctx, w.key(term), body); err != nil {
					t.Fatalf("create K(%d): %v", term, err)
				}
			}
			for i := range 5 {
				s, _ := w.fence(fmt.Sprintf("s%d", i), 5, true, Correct)
				wantErr(t, "stale claim", s.Claim(w.ctx), ErrFenced, "superseded by term 20")
			}
			if w.exists(5) {
				t.Fatal("a stale grant created its key")
			}
		})
	}
}

// TestEncodeRefusesEachNegativeNumber: a body with a negative shard id, term or seq is one
// Decode rejects, so Encode refuses each of them on its own.
func TestEncodeRefusesEachNegativeNumber(t *testing.T) {
	good := Content{IndexUUID: "i", ShardID: 3, Term: 5, AllocationID: "a", NodeID: "n", Seq: 2}
	if _, err := Encode(good); err != nil {
		t.Fatalf("Encode(%+v): %v", good, err)
	}
	for _, edit := range []func(*Content){
		func(c *Content) { c.ShardID = -1 },
		func(c *Content) { c.Term = -1 },
		func(c *Content) { c.Seq = -1 },
	} {
		c := good
		edit(&c)
		if b, err := Encode(c); err == nil {
			t.Errorf("Encode(%+v) accepted it as %q", c, b)
		}
	}
}

// TestUnrecognizedContentIsQuotedWholeUpTo120Bytes: the error for unparseable content quotes
// a body of up to 120 bytes whole, and cuts a longer one at 120 bytes, marked with "...".
func TestUnrecognizedContentIsQuotedWholeUpTo120Bytes(t *testing.T) {
	exact := strings.Repeat("x", 120)
	_, err := Decode([]byte(exact))
	if !errors.Is(err, ErrIdentity) || !strings.Contains(err.Error(), fmt.Sprintf("%q", exact)) {
		t.Fatalf("Decode of a 120-byte body: got %v, want it quoted whole", err)
	}
	long := exact + "Q"
	_, err = Decode([]byte(long))
	if !errors.Is(err, ErrIdentity) || !strings.Contains(err.Error(), fmt.Sprintf("%q", exact+"...")) || strings.Contains(err.Error(), "Q") {
		t.Fatalf("Decode of a 121-byte body: got %v, want its first 120 bytes and ...", err)
	}
}

// TestTermZeroIsAValidTerm: New refuses only negative terms; an instance at term 0 claims
// its key, and term 1 supersedes it.
func TestTermZeroIsAValidTerm(t *testing.T) {
	w := newWorld(t, backends()[0])
	z, err := New(Options{Store: w.raw, Prefix: w.prefix, IndexUUID: testIndex, ShardID: testShard,
		AllocationID: "z", NodeID: "node-z", Term: 0, Guarded: true})
	if err != nil {
		t.Fatalf("New at term 0: %v", err)
	}
	mustOK(t, "claim at term 0", z.Claim(w.ctx))
	if c := w.content(0); c.Term != 0 || c.AllocationID != "z" {
		t.Fatalf("K(0) holds %+v", c)
	}
	w.owner("a", 1, true, Correct)
	wantErr(t, "term 0 after term 1 claimed", z.Advance(w.ctx), ErrFenced, "superseded by term 1")
}

// TestAmbiguousIsSuccessTakesALostTransferAnswerAsDone: under ambiguous-is-success, a transfer
// that landed but whose answer was lost is taken as done: the source is transferred, retains
// the version the transfer wrote, may no longer advance, and a revert on that retained token
// resumes.
func TestAmbiguousIsSuccessTakesALostTransferAnswerAsDone(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, AmbiguousIsSuccess)
			as.on("put-if-match", w.key(5), lose)
			mustOK(t, "transfer whose answer is lost", a.Transfer(w.ctx, "t"))
			if !a.Transferred() {
				t.Fatal("the source does not count as transferred")
			}
			obj, err := w.raw.Get(w.ctx, w.key(5))
			if err != nil {
				t.Fatal(err)
			}
			if c := w.content(5); c.AllocationID != "t" || c.Seq != 1 {
				t.Fatalf("key holds %+v, want the transfer's write", c)
			}
			if a.Token() != obj.ETag || a.Seq() != 1 {
				t.Fatalf("source retains %q seq %d, want the transfer's version %q at seq 1", a.Token(), a.Seq(), obj.ETag)
			}
			wantErr(t, "advance after the transfer", a.Advance(w.ctx), ErrTransferred, "")
			if resumed, err := a.Revert(w.ctx); !resumed || err != nil {
				t.Fatalf("revert on the retained token: resumed %v, %v; want resumed", resumed, err)
			}
		})
	}
}

// TestRevertOnAnInstanceHoldingNoTokenWritesNothing: an instance that never claimed answers
// a revert with (false, nil) without writing, and is not stood down by it: it can still claim.
func TestRevertOnAnInstanceHoldingNoTokenWritesNothing(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			w.owner("a", 5, false, Correct)
			s, ss := w.fence("s", 5, false, Correct)
			writes := 0
			ss.on("put-if-match", "", pass).Times(-1).Do(func() { writes++ })
			resumed, err := s.Revert(w.ctx)
			if resumed || err != nil {
				t.Fatalf("revert holding no token: resumed %v, %v; want (false, nil)", resumed, err)
			}
			if writes != 0 || s.Fenced() {
				t.Fatalf("revert holding no token wrote %d times, fenced %v", writes, s.Fenced())
			}
			mustOK(t, "claim after the revert", s.Claim(w.ctx))
		})
	}
}
