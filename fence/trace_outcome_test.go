package fence

import (
	"errors"
	"fmt"
	"testing"

	"github.com/fencebench/fencebench/store"
)

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

// A writer fenced at term 5 is asked to act at term 7: fenced is terminal at any term, so it
// claims nothing and the owner of term 6 is untouched. (No variant breaks this: the copies
// the bench drives never ask a fenced instance to act again, as a fenced shard fails and
// comes back only as a new incarnation with a new instance.)
func traceFencedAtAnotherTerm(t *testing.T, w *world, v Variant) {
	a, _ := w.owner("a", 5, true, v)
	b, _ := w.owner("b", 6, false, v)
	wantErr(t, "A after the takeover", a.Advance(w.ctx), ErrFenced, "")
	wantErr(t, "fenced A at term 7", a.AdvanceAt(w.ctx, 7), ErrFenced, "key gone")
	wantErr(t, "fenced A again", a.Claim(w.ctx), ErrFenced, "")
	if w.exists(7) {
		t.Fatal("a fenced instance created K(7)")
	}
	mustOK(t, "B acks", b.Advance(w.ctx))
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

// TestRefusedByOwnLostWriteWhileReadsFail: a CAS lands but its answer is lost and the
// read-back fails, so the outcome is unknown. The retry at the same seq is refused by that
// very write, and the read that would tell fails again: the outcome is still unknown
// (retryable), never fenced. Once a read succeeds the instance finds its own write and adopts
// it. Exploration found this on MinIO: a flapping partition cut the answer and the reads, and
// a healthy owner fenced itself.
func TestRefusedByOwnLostWriteWhileReadsFail(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			f, fs := w.owner("a1", 5, false, Correct)
			key := w.key(5)
			fs.on("put-if-match", key, lose)
			fs.on("get", key, drop)
			wantErr(t, "the answer is lost and the read-back fails", f.Advance(w.ctx), ErrRetryable, "")
			fs.on("get", key, drop)
			wantErr(t, "refused by its own write while the read fails", f.Advance(w.ctx), ErrRetryable, "")
			mustOK(t, "the next attempt reads its own write", f.Advance(w.ctx))
			if f.Seq() != 1 {
				t.Fatalf("seq %d after adopting its own write, want 1", f.Seq())
			}
			mustOK(t, "it carries on", f.Advance(w.ctx))
		})
	}
}

// TestTransferRefusedByItsOwnLostWrite: the relocation source's transfer lands but its answer
// is lost and the read-back fails; the retry is refused by that very transfer while the read
// fails again: still unknown, never fenced. The next retry reads its own transfer and counts
// it as done. Exploration found the fenced source on the simulated stack.
func TestTransferRefusedByItsOwnLostWrite(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			f, fs := w.owner("a1", 5, false, Correct)
			mustOK(t, "a sync", f.Advance(w.ctx))
			key := w.key(5)
			fs.on("put-if-match", key, lose)
			fs.on("get", key, drop)
			wantErr(t, "the transfer's answer is lost and the read-back fails", f.Transfer(w.ctx, "t1"), ErrRetryable, "")
			fs.on("get", key, drop)
			wantErr(t, "refused by its own transfer while the read fails", f.Transfer(w.ctx, "t1"), ErrRetryable, "")
			mustOK(t, "the next attempt reads its own transfer", f.Transfer(w.ctx, "t1"))
			if c := w.content(5); c.AllocationID != "t1" || c.Seq != 2 {
				t.Fatalf("key holds %+v, want the transfer to t1 at seq 2", c)
			}
		})
	}
}

// TestRefusedTransferWithNothingInDoubtFences: a transfer refused when no earlier attempt of
// it is in doubt was refused by another writer's move, so the source is fenced at once: it
// does not read the key back to look for its own write, and a failing read cannot turn the
// refusal into a retry.
func TestRefusedTransferWithNothingInDoubtFences(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			f, fs := w.owner("a1", 5, false, Correct)
			mustOK(t, "a sync", f.Advance(w.ctx))
			key := w.key(5)
			obj, err := w.raw.Get(w.ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := w.raw.PutIfMatch(w.ctx, key, f.body("b1", 7), obj.ETag); err != nil {
				t.Fatal(err)
			}
			fs.on("get", key, drop)
			wantErr(t, "the transfer after another writer moved the key", f.Transfer(w.ctx, "t1"), ErrFenced, "lost the CAS")
		})
	}
}

// TestLostArbitrationFencesWithTheLastRefusal: an equal-term claimant whose every arbitration
// write is refused gives up after maxSameTermAttempts, fenced, and its error carries the
// store's last refusal, which is what tells a reader of the report why.
func TestLostArbitrationFencesWithTheLastRefusal(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			w.owner("a1", 5, false, Correct)
			key := w.key(5)
			g, fs := w.fence("b1", 5, false, Correct)
			refusal := &store.Error{Op: "put-if-match", Key: key, Kind: store.ErrPreconditionFailed, Status: 412, Code: "PreconditionFailed"}
			fs.on("put-if-match", key, fail).Err(refusal).Times(-1)
			err := g.Claim(w.ctx)
			wantErr(t, "an arbitration refused every time", err, ErrFenced, fmt.Sprintf("lost equal-term arbitration %d times", maxSameTermAttempts))
			if !errors.Is(err, store.ErrPreconditionFailed) {
				t.Fatalf("%v: want it to carry the store's refusal", err)
			}
			if c := w.content(5); c.AllocationID != "a1" {
				t.Fatalf("key holds %+v, want a1's claim untouched", c)
			}
		})
	}
}
