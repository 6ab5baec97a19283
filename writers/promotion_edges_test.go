package writers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A promotion at a term below one already granted is refused by the fence, and the copy is
// then fenced for good: it records the verdict, and no later grant revives it.
func TestPromotionBelowAGrantedTermLeavesTheCopyFenced(t *testing.T) {
	r := memRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 2)
	err := b.Promote(ctx(t), 1)
	if !fence.IsFenced(err) {
		t.Fatalf("promotion at term 1 under term 2: %v; want fenced", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "promote b at term 1: ") || strings.Contains(msg, "stopped") {
		t.Fatalf("the fenced promotion's error %q; want it named, and not called stopped", msg)
	}
	if b.State() != StateFenced {
		t.Fatalf("b is %s after a fenced promotion; want fenced", b.State())
	}
	if evs := r.events(history.Fenced, "b"); len(evs) != 1 || evs[0].Term != 1 || evs[0].Key != r.c.cfg.Shard.FenceKey(1) {
		t.Fatalf("b's fenced events %+v; want one at term 1 naming its fence key", evs)
	}
	if n := r.c.Bus().Count("b", history.SigFenced); n != 1 {
		t.Fatalf("b signalled fenced %d times; want once", n)
	}
	if err := b.Promote(ctx(t), 3); !errors.Is(err, ErrNotServing) {
		t.Fatalf("a later promotion of the fenced copy: %v; want refused", err)
	}
}

// A promotion whose restore point names a .tlog file that is gone does not serve from the
// broken lineage: it fails, naming the missing file, and the copy stays a standby.
func TestPromotionRefusesARestorePointWithAMissingTlog(t *testing.T) {
	r := memRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 1)
	r.submit(a, 5)
	r.waitAcked(a, 5)
	if err := r.c.Settle(ctx(t)); err != nil {
		t.Fatal(err)
	}
	es, err := r.st.List(ctx(t), r.c.cfg.Shard.Base()+"translog/data/")
	if err != nil || len(es) == 0 {
		t.Fatalf("listing a's .tlog files: %v, %d found", err, len(es))
	}
	gone := es[0].Key
	if err := r.st.Delete(ctx(t), gone); err != nil {
		t.Fatal(err)
	}
	err = b.Promote(ctx(t), 2)
	if err == nil || !strings.Contains(err.Error(), "missing") || !strings.Contains(err.Error(), gone) {
		t.Fatalf("promotion over a lineage missing %s: %v; want refused, naming it", gone, err)
	}
	if b.State() != StateStandby {
		t.Fatalf("b is %s; want a standby", b.State())
	}
}

// A promotion whose seal fails (the store refuses the fence listing) fails before it reads
// the restore point: the protocol reads the restore point only under a seal.
func TestPromotionThatCannotSealReadsNoRestorePoint(t *testing.T) {
	r := memRig(t, nil)
	fences := r.c.cfg.Shard.FencePrefix()
	b := r.add("b", newFailStore(r.st, "list", func(prefix string) bool { return prefix == fences }, 1000, forbidden))
	err := b.Promote(ctx(t), 1)
	if !errors.Is(err, store.ErrConfig) {
		t.Fatalf("promotion whose fence listing is refused: %v; want the store's error", err)
	}
	if reads := r.events(history.RestoreRead, "b"); len(reads) != 0 {
		t.Fatalf("restore reads %+v by a promotion that never sealed; want none", reads)
	}
	if b.State() != StateStandby {
		t.Fatalf("b is %s; want a standby", b.State())
	}
}

// An audit that picks its own term fails when the store refuses the fence listing that term
// is chosen from, instead of sealing at a term it never established.
func TestAuditFailsWhenItCannotListTheFences(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 1, 5)
	r.settle()
	fences := r.c.cfg.Shard.FencePrefix()
	st := newFailStore(r.st, "list", func(prefix string) bool { return prefix == fences }, 1, forbidden)
	res, err := r.c.Audit(ctx(t), st, 0)
	if !errors.Is(err, store.ErrConfig) {
		t.Fatalf("audit whose fence listing is refused: %v (term %d); want the store's error", err, res.Term)
	}
	if evs := r.events(history.Claim, AuditorID); len(evs) != 0 {
		t.Fatalf("auditor claims %+v; want none", evs)
	}
}

// An audit whose restore read cannot fetch a named .tlog file (the store refuses it) fails
// with the store's error rather than reporting a restore point without that file's ops.
func TestAuditFailsWhenATlogFetchIsRefused(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 1, 5)
	r.settle()
	st := newFailStore(r.st, "get", isTlog, 1, forbidden)
	res, err := r.c.Audit(ctx(t), st, 0)
	if !errors.Is(err, store.ErrConfig) {
		t.Fatalf("audit whose .tlog fetch is refused: %v (ops %v); want the store's error", err, res.Ops)
	}
}

// A restore read whose metadata listing goes unanswered (a 500) has read nothing: it is
// retried, and the promoted copy starts from the whole lineage, never from the empty restore
// point a failed listing would look like.
func TestARestoreReadRetriesAnUnansweredMetadataListing(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 1, 5)
	r.settle()
	meta := r.c.cfg.Shard.MetadataListPrefix()
	b := r.add("b", newFailStore(r.st, "list", func(prefix string) bool { return prefix == meta }, 1, unanswered))
	r.promote(b, 2)
	reads := r.events(history.RestoreRead, "b")
	if len(reads) != 2 || reads[0].Outcome == history.OK || reads[1].Outcome != history.OK || len(reads[1].Ops) != 5 {
		t.Fatalf("b's restore reads %+v; want the unanswered one, then one restoring a's 5 ops", reads)
	}
	r.requireDurable(r.audit())
}

// stallListStore answers a listing of the fence keys only once the caller's context ended,
// and then with a 500.
type stallListStore struct{ store.Store }

func (s stallListStore) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	if strings.HasSuffix(prefix, "/fence__") {
		<-ctx.Done()
		return nil, unanswered
	}
	return s.Store.List(ctx, prefix)
}

// A promotion whose context ends while a request of its claim is under way (the listing of
// the fence keys, answered with a 500 only then) returns that request's failure and says
// that it was stopped: the error names both and wraps the context's end.
func TestStoppedPromotionSaysSo(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", stallListStore{r.st})
	pctx, cancel := context.WithTimeout(ctx(t), 100*time.Millisecond)
	defer cancel()
	err := a.Promote(pctx, 3)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), "promote a at term 3: ") ||
		!strings.Contains(err.Error(), "the promotion was stopped") || !strings.Contains(err.Error(), "InternalError") {
		t.Fatalf("promotion stopped while its claim's listing failed: %v; want the listing's 500, then that it was stopped", err)
	}
	if a.State() != StateStandby {
		t.Fatalf("a is %s after a stopped promotion; want standby", a.State())
	}
}
