package writers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A zero Config takes the documented defaults: syncs every 20 ops or 50ms, a 10ms first
// backoff, 2 files a refresh, 6 references a set, 2 retained sets, the correct protocol.
func TestZeroConfigTakesTheDocumentedDefaults(t *testing.T) {
	c, err := NewCluster(Config{Shard: Shard{Prefix: "run/", IndexUUID: "u"}, Recorder: history.NewRecorder()})
	if err != nil {
		t.Fatal(err)
	}
	got := c.Config()
	if got.SyncEvery != 20 || got.SyncInterval != 50*time.Millisecond || got.RetryBackoff != 10*time.Millisecond ||
		got.Segments != (SegmentPolicy{FilesPerRefresh: 2, MaxRefs: 6, Retain: 2}) || got.Variant != fence.Correct {
		t.Fatalf("defaults %+v", got)
	}
}

// A cluster refuses a protocol variant nobody knows, naming it, rather than running the
// correct protocol under a wrong label.
func TestClusterRefusesAnUnknownVariant(t *testing.T) {
	_, err := NewCluster(Config{Shard: Shard{Prefix: "run/", IndexUUID: "u"}, Recorder: history.NewRecorder(),
		Variant: "no-such-variant"})
	if err == nil || !strings.Contains(err.Error(), "no-such-variant") {
		t.Fatalf("unknown variant: %v; want refused, naming it", err)
	}
}

// Traffic with Clients left at 0 runs one client: ops flow and are acknowledged.
func TestTrafficWithNoClientCountRunsOne(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	r.promote(a, 1)
	tr, err := r.c.StartTraffic(ctx(t), TrafficConfig{Rate: 500})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Stop()
	wctx, cancel := context.WithTimeout(ctx(t), 10*time.Second)
	defer cancel()
	if err := r.c.Bus().WaitAcked(wctx, "a", 1); err != nil {
		t.Fatalf("traffic with the default client count: no op acknowledged (%+v): %v", tr.Stats(), err)
	}
	if st := tr.Stop(); st.Sent == 0 || st.Accepted == 0 {
		t.Fatalf("traffic stats %+v; want ops sent and accepted", st)
	}
}

// A .tlog body is read only when it has the tlog header, an origin line and an ops line;
// anything else is refused, not read as ops.
func TestMalformedTlogBodiesAreRefused(t *testing.T) {
	o := origin{Writer: "a", Alloc: "a-1", Node: "n", Term: 2, Gen: 3, Attempt: 1}
	good := string(encodeTlog(o, []int64{4, 5}))
	for _, body := range []string{
		"",
		tlogMagic + "\n",
		tlogMagic + "\n" + o.line() + "\n",
		strings.Replace(good, tlogMagic, segFileMagic, 1),
		strings.Replace(good, tlogMagic, metadataMagic, 1),
		strings.Replace(good, "ops=", "refs=", 1),
		good + "ops=6\n",
	} {
		if ops, err := decodeTlog([]byte(body)); err == nil {
			t.Errorf("body %q read as ops %v; want refused", body, ops)
		}
	}
}

// A cancelled subscription hears no later signal.
func TestCancelledSubscriptionHearsNothingMore(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	var heard []history.SignalKind
	cancel := r.c.Bus().Subscribe(func(s Signal) { heard = append(heard, s.Kind) })
	a.Pause() // subscribers run on the emitting goroutine: heard is complete on return
	cancel()
	a.Resume()
	if len(heard) != 1 || heard[0] != history.SigPaused {
		t.Fatalf("subscriber heard %v; want only the signal before it cancelled", heard)
	}
}

// A clean audit records its restore read as OK, with no error text.
func TestCleanAuditRecordsNoError(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 1, 5)
	r.requireDurable(r.audit())
	evs := r.events(history.Audit, AuditorID)
	if len(evs) != 1 || evs[0].Outcome != history.OK || evs[0].Err != "" {
		t.Fatalf("audit events %+v; want one OK without error", evs)
	}
}

// An audit whose final listing the store refuses fails with the store's error: its result
// would miss the segment files it could not list.
func TestAuditFailsWhenItsFinalListingFails(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 1, 5)
	r.settle()
	segs := r.c.Config().Shard.SegmentDataPrefix()
	st := newFailStore(r.st, "list", func(prefix string) bool { return prefix == segs }, 1, forbidden)
	_, err := r.c.Audit(ctx(t), st, 0)
	if err == nil || !errors.Is(err, store.ErrConfig) {
		t.Fatalf("audit whose segment listing is refused: %v; want the store's error", err)
	}
}

// Crashing a writer that already crashed, or was closed, records nothing and signals nothing.
func TestCrashingAFinishedWriterRecordsNothing(t *testing.T) {
	r := memRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 1)
	a.Crash()
	a.Crash()
	b.Close()
	b.Crash()
	if cs := r.events(history.Crash, ""); len(cs) != 1 || cs[0].Writer != "a" {
		t.Fatalf("crash events %+v; want a's one", cs)
	}
	if n, m := r.c.Bus().Count("a", history.SigCrashed), r.c.Bus().Count("b", history.SigCrashed); n != 1 || m != 0 {
		t.Fatalf("crashed signals: a %d, b %d; want 1 and 0", n, m)
	}
	if b.State() != StateClosed {
		t.Fatalf("b is %s after a crash of the closed writer; want closed", b.State())
	}
}

// foreignCtx is a caller's context of a type the context package does not know (it hides
// the standard cancellation it wraps), as some frameworks' contexts are: a context derived
// from it is watched by a goroutine until it is cancelled.
type foreignCtx struct{ context.Context }

func (foreignCtx) Value(any) any { return nil }

// A writer's calls leave nothing behind watching the caller's context once they return,
// however long that context lives.
func TestWriterCallsReleaseTheCallersContext(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	r.promote(a, 1)
	ignore := goleak.IgnoreCurrent() // a's sync loop
	caller := foreignCtx{ctx(t)}
	for range 3 {
		if _, err := a.Refresh(caller); err != nil {
			t.Fatal(err)
		}
		if _, err := a.GC(caller); err != nil {
			t.Fatal(err)
		}
	}
	goleak.VerifyNone(t, ignore)
}

// A writer that learned it is fenced stops: no goroutine of it keeps running.
func TestFencedWriterStopsRunning(t *testing.T) {
	r := memRig(t, nil)
	ignore := goleak.IgnoreCurrent()
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 1)
	r.submit(a, 5)
	r.waitAcked(a, 5)
	r.promote(b, 2)
	b.Close()
	r.submit(a, 5)
	r.wait(a, history.SigFenced, 1)
	goleak.VerifyNone(t, ignore)
}

// A relocation source that never synced re-adopts its chain while draining; if that
// re-adoption finds it fenced, it is fenced: it records so and does not serve again.
func TestSourceFencedWhileDrainingIsFenced(t *testing.T) {
	r := memRig(t, nil)
	a, b, tg := r.add("a", nil), r.add("b", nil), r.add("t", nil)
	r.promote(a, 1)
	r.promote(b, 2)
	_, err := a.Relocate(ctx(t), tg, RelocateOptions{})
	if !fence.IsFenced(err) {
		t.Fatalf("relocating a superseded source: %v; want fenced", err)
	}
	if a.State() != StateFenced || len(r.events(history.Fenced, "a")) != 1 || tg.State() != StateStandby {
		t.Fatalf("source %s (fenced events %v), target %s; want fenced once, target standby",
			a.State(), r.events(history.Fenced, "a"), tg.State())
	}
	if err := a.Submit(r.c.NextOp()); !errors.Is(err, ErrNotServing) {
		t.Fatalf("submit to the fenced source: %v; want refused", err)
	}
}

// Draining a source that already synced everything writes nothing to the fence: every
// fence step of the source belongs to one of its syncs.
func TestDrainOfASyncedSourceWritesNoFence(t *testing.T) {
	r, _, _, res := relocateWith(t, fence.Correct, nil, false, RelocateOptions{})
	if res != RelocationHandedOff {
		t.Fatalf("relocation %+v; want handed off", res)
	}
	steps := len(r.events(history.CAS, "a"))
	for _, e := range r.events(history.Claim, "a") {
		if e.Detail == "readopt" {
			steps++
		}
	}
	if syncs := len(r.events(history.Sync, "a")); steps != syncs {
		t.Fatalf("source made %d fence steps in %d syncs; want one each", steps, syncs)
	}
}

// deleteRefusing refuses every delete with a 403; the rest is the inner store.
type deleteRefusing struct{ store.Store }

var deleteDenied = &store.Error{Op: "delete", Kind: store.ErrConfig, Status: 403, Code: "AccessDenied"}

func (deleteRefusing) Delete(context.Context, string) error { return deleteDenied }

func (deleteRefusing) DeleteMany(context.Context, []string) ([]store.KeyError, error) {
	return nil, deleteDenied
}

// A RecordingStore hands a failed delete's error back to its caller, as well as recording it.
func TestRecordingStorePassesDeleteErrorsOn(t *testing.T) {
	rec := history.NewRecorder()
	rs := NewRecordingStore(deleteRefusing{store.NewMem()}, rec, "w")
	c := context.Background()
	if err := rs.Delete(c, "p/k"); !errors.Is(err, store.ErrConfig) {
		t.Errorf("refused delete: %v; want the store's error", err)
	}
	if _, err := rs.DeleteMany(c, []string{"p/a", "p/b"}); !errors.Is(err, store.ErrConfig) {
		t.Errorf("refused batch delete: %v; want the store's error", err)
	}
	for _, e := range rec.Events() {
		if e.Outcome != history.Fail || e.Status != 403 {
			t.Errorf("event %+v; want a failure with status 403", e)
		}
	}
}

// A paused writer's call that its caller abandons never leaves: it reports an unknown
// outcome (as a cancelled call does), records nothing and changes nothing.
func TestAbandonedCallOfAPausedWriterReportsUnknown(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	if _, err := r.st.Put(ctx(t), "p/k", []byte("1")); err != nil {
		t.Fatal(err)
	}
	a.Pause()
	gone, cancel := context.WithCancel(ctx(t))
	cancel()
	s := a.Store()
	calls := map[string]func() error{
		"get":           func() error { _, err := s.Get(gone, "p/k"); return err },
		"put":           func() error { _, err := s.Put(gone, "p/k", []byte("2")); return err },
		"put-if-absent": func() error { _, err := s.PutIfAbsent(gone, "p/n", []byte("2")); return err },
		"put-if-match":  func() error { _, err := s.PutIfMatch(gone, "p/k", []byte("2"), "x"); return err },
		"delete":        func() error { return s.Delete(gone, "p/k") },
		"delete-many":   func() error { _, err := s.DeleteMany(gone, []string{"p/k"}); return err },
		"list":          func() error { _, err := s.List(gone, "p/"); return err },
	}
	for op, call := range calls {
		if err := call(); !errors.Is(err, store.ErrAmbiguous) {
			t.Errorf("%s abandoned at the pause: %v; want an unknown outcome", op, err)
		}
	}
	if obj, err := r.st.Get(ctx(t), "p/k"); err != nil || string(obj.Body) != "1" {
		t.Fatalf("p/k after the abandoned calls: %q, %v; want untouched", obj.Body, err)
	}
	for _, e := range r.rec.Events() {
		if e.Writer == "a" && e.Kind != history.Pause {
			t.Errorf("recorded %+v for a call that never left", e)
		}
	}
}

// Traffic needs a positive rate: a zero or negative one is refused, and no client starts.
func TestTrafficRefusesARateThatIsNotPositive(t *testing.T) {
	r := memRig(t, nil)
	for _, rate := range []float64{0, -1} {
		if tr, err := r.c.StartTraffic(ctx(t), TrafficConfig{Clients: 2, Rate: rate}); err == nil || tr != nil {
			t.Fatalf("rate %v: traffic %v, error %v; want it refused", rate, tr, err)
		}
	}
}
