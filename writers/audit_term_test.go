package writers

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// metadata yet): its seal would otherwise find that higher term and fail.
func TestAuditTakesATermAboveAFenceItsClusterNeverGranted(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 1, 3)
	other := newRig(t, r.st, func(c *Config) { c.Shard = r.c.Config().Shard })
	z := other.add("z", nil)
	other.promote(z, 7)
	if err := r.c.Settle(ctx(t)); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Audit(ctx(t), r.st, 0)
	if err != nil || res.Term != 8 {
		t.Fatalf("audit: term %d, %v; want term 8, above the fence's 7", res.Term, err)
	}
}

// own metadata would otherwise sort below it and the restore read would not be its own.
func TestAuditTakesATermAboveTheNewestMetadata(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 3, 4)
	r.settle()
	sh := r.c.Config().Shard
	es, err := r.st.List(ctx(t), sh.MetadataListPrefix())
	if err != nil || len(es) == 0 {
		t.Fatalf("metadata listing: %v, %v", es, err)
	}
	o, err := r.st.Get(ctx(t), es[0].Key)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.st.Put(ctx(t), sh.MetadataKey(9, 1, "x-alloc1"), o.Body); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Audit(ctx(t), r.st, 0)
	if err != nil || res.Term != 10 {
		t.Fatalf("audit: term %d, %v; want term 10, above the metadata's 9", res.Term, err)
	}
}

// below it would be superseded by the writes it is meant to judge.
func TestAuditTakesATermAboveAGrantThatNeverSealed(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 3, 4)
	r.settle()
	fences := r.c.cfg.Shard.FencePrefix()
	b := r.add("b", newFailStore(r.st, "list", func(prefix string) bool { return prefix == fences }, 1000, forbidden))
	if err := b.Promote(ctx(t), 9); !errors.Is(err, store.ErrConfig) {
		t.Fatalf("b's promotion at 9 with its fence listing refused: %v; want the store's error", err)
	}
	res, err := r.c.Audit(ctx(t), r.st, 0)
	if err != nil || res.Term != 10 {
		t.Fatalf("audit: term %d, %v; want term 10, above the grant of 9", res.Term, err)
	}
}

// An audit whose restore point names a .tlog file the store no longer holds still reads the
// rest (the restore read succeeds), and its event notes the missing file by name; with every
// file in place it notes nothing.
func TestAuditNotesMissingTlogFiles(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 3, 12) // several syncs, several .tlog files
	r.settle()
	es, err := r.st.List(ctx(t), r.c.cfg.Shard.Prefix)
	if err != nil {
		t.Fatal(err)
	}
	var gone string
	for _, e := range es {
		if strings.HasSuffix(e.Key, ".tlog") {
			gone = e.Key
			break
		}
	}
	if gone == "" {
		t.Fatalf("no .tlog file among %d objects", len(es))
	}
	r.audit()
	if ev := r.events(history.Audit, AuditorID); len(ev) == 0 || ev[len(ev)-1].Outcome != history.OK || ev[len(ev)-1].Err != "" {
		t.Fatalf("audit events with every file in place %+v; want the last one ok, noting nothing", ev)
	}
	if err := r.st.Delete(ctx(t), gone); err != nil {
		t.Fatal(err)
	}
	res, err := r.c.Audit(ctx(t), r.st, 0)
	if err != nil {
		t.Fatalf("audit: %v", err)
	}
	ev := r.events(history.Audit, AuditorID)
	if len(ev) == 0 || ev[len(ev)-1].Outcome != history.OK ||
		!strings.Contains(ev[len(ev)-1].Err, "named .tlog file(s) missing") || !strings.Contains(ev[len(ev)-1].Err, gone) {
		t.Fatalf("audit events %+v (result %+v); want the last one ok, noting %s missing", ev, res, gone)
	}
}
