package writers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A restore read whose metadata read fails is retried, never taken as an empty restore
// point: the new primary starts from every op its predecessor acknowledged. A metadata file
// that the listing named and the read then did not find (metadata is never deleted) is an
// unknown state too, read again.
func TestRestoreReadRetriesAFailedMetadataRead(t *testing.T) {
	t.Run("500", func(t *testing.T) { restoreReadRetries(t, nil) })
	t.Run("404", func(t *testing.T) {
		restoreReadRetries(t, &store.Error{Op: "get", Kind: store.ErrNotFound, Status: 404, Code: "NoSuchKey"})
	})
}

func restoreReadRetries(t *testing.T, err *store.Error) {
	r := memRig(t, nil)
	r.acking("a", 3, 10)
	if err == nil {
		err = unanswered
	}
	failing := newFailStore(r.st, "get", isMetadataFile, 2, err)
	b := r.add("b", failing)
	r.promote(b, 4)
	r.submit(b, 5)
	r.waitAcked(b, 5)
	r.requireDurable(r.audit())
	if left := failing.n.Load(); left >= 0 {
		t.Fatalf("the restore read met %d of its 2 injected failures", 2-left)
	}
}

// The auditor's restore read gives up at once on an error no retry can cure (a 403), and
// records the one attempt; an unknown outcome it reads again.
func TestAuditRestoreReadGivesUpOnAHarnessError(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 3, 4)
	failing := newFailStore(r.st, "get", isMetadataFile, 1000, forbidden)
	actx, cancel := context.WithTimeout(ctx(t), 10*time.Second)
	defer cancel()
	if _, err := r.c.Audit(actx, failing, 0); !errors.Is(err, store.ErrConfig) || actx.Err() != nil {
		t.Fatalf("audit through a store that refuses the read: %v (context %v); want the 403 at once", err, actx.Err())
	}
	if n := len(r.events(history.Audit, AuditorID)); n != 1 {
		t.Fatalf("%d audit attempts recorded, want 1", n)
	}
	failing.err = unanswered
	failing.n.Store(1)
	res, err := r.c.Audit(ctx(t), failing, 0)
	if err != nil || len(res.Ops) != 4 {
		t.Fatalf("audit past one unanswered read: %+v, %v; want the 4 ops", res, err)
	}
}
