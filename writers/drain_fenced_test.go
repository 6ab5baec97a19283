package writers

import (
	"context"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A source superseded while ops wait in its buffer learns it at its drain's sync: the
// relocation fails with the fencing verdict, the source takes exactly one fenced fence step
// and records one Fenced, never transfers, and the target is a standby again.
func TestSourceFencedAtItsDrainsSyncStopsThere(t *testing.T) {
	r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 100, time.Hour })
	a, b, tg := r.add("a", nil), r.add("b", nil), r.add("t", nil)
	r.promote(a, 1)
	r.submit(a, 3)
	r.promote(b, 2)
	_, err := a.Relocate(ctx(t), tg, RelocateOptions{})
	if !fence.IsFenced(err) {
		t.Fatalf("relocating a source superseded with ops buffered: %v; want fenced", err)
	}
	var steps []history.Event
	for _, k := range []history.Kind{history.Claim, history.CAS, history.Transfer} {
		steps = append(steps, r.events(k, "a")...)
	}
	fenced := 0
	for _, e := range steps {
		if e.Kind == history.Transfer {
			t.Fatalf("the source transferred after its drain was fenced: %+v", e)
		}
		if e.Outcome == history.FencedOut {
			fenced++
		}
	}
	if fenced != 1 || len(r.events(history.Fenced, "a")) != 1 || a.State() != StateFenced || tg.State() != StateStandby {
		t.Fatalf("fence steps %+v, fenced events %d, source %s, target %s; want one fenced step and one Fenced, the target standby",
			steps, len(r.events(history.Fenced, "a")), a.State(), tg.State())
	}
	if acked := r.acked("a"); len(acked) != 0 {
		t.Fatalf("the superseded source acknowledged %v", acked)
	}
}

// A batch delete is recorded under its first key, with every key in its detail; an empty
// batch under no key.
func TestRecordingStoreNamesABatchDeleteByItsFirstKey(t *testing.T) {
	rec := history.NewRecorder()
	rs := NewRecordingStore(store.NewMem(), rec, "w")
	c := context.Background()
	for _, keys := range [][]string{{"p/a", "p/b"}, nil} {
		if _, err := rs.DeleteMany(c, keys); err != nil {
			t.Fatalf("delete %v: %v", keys, err)
		}
	}
	evs := rec.Events()
	if len(evs) != 2 || evs[0].Key != "p/a" || evs[0].Detail != "p/a p/b" || evs[1].Key != "" || evs[1].Detail != "" {
		t.Fatalf("batch delete events %+v; want one under p/a naming both keys, one under no key", evs)
	}
}
