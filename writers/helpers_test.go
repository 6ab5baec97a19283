package writers

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// rig is one cluster on one store (a shared MinIO, or an in-memory store).
type rig struct {
	t   *testing.T
	c   *Cluster
	rec *history.Recorder
	st  store.Store
}

func newRig(t *testing.T, st store.Store, tweak func(*Config)) *rig {
	t.Helper()
	rec := history.NewRecorder()
	cfg := Config{Shard: Shard{Prefix: testenv.Prefix(t), IndexUUID: "idx", ID: 0}, Recorder: rec,
		SyncEvery: 5, SyncInterval: 20 * time.Millisecond}
	if tweak != nil {
		tweak(&cfg)
	}
	c, err := NewCluster(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &rig{t: t, c: c, rec: rec, st: st}
}

func minioRig(t *testing.T, tweak func(*Config)) *rig {
	t.Helper()
	return newRig(t, testenv.Store(t, store.ClientMinio, nil), tweak)
}

func memRig(t *testing.T, tweak func(*Config)) *rig {
	t.Helper()
	return newRig(t, store.NewMem(), tweak)
}

// The handoff link is the target of the fault model's handoff faults.
var _ faults.Handoffs = (*HandoffLink)(nil)

// faultHandoffs opens h on w's handoff link in a fault set recording into the rig, the way a
// run opens a relocation's handoff fault; it stays open.
func (r *rig) faultHandoffs(w *Writer, h faults.Handoff) {
	r.t.Helper()
	set := faults.NewSet(w.ID(), w.Handoffs(), func(e history.Event) { r.rec.Record(e) })
	if err := set.Open(faults.HandoffFault("handoff:"+w.ID(), h)); err != nil {
		r.t.Fatal(err)
	}
}

func (r *rig) add(id string, st store.Store) *Writer {
	r.t.Helper()
	if st == nil {
		st = r.st
	}
	w, err := r.c.AddWriter(WriterSpec{ID: id, Store: st})
	if err != nil {
		r.t.Fatal(err)
	}
	return w
}

func (r *rig) promote(w *Writer, term int64) {
	r.t.Helper()
	if err := w.Promote(ctx(r.t), term); err != nil {
		r.t.Fatal(err)
	}
}

// submit hands n fresh ops to w and returns them.
func (r *rig) submit(w *Writer, n int) []int64 {
	r.t.Helper()
	var ops []int64
	for range n {
		op := r.c.NextOp()
		if err := w.Submit(op); err != nil {
			r.t.Fatalf("submit %d to %s: %v", op, w.ID(), err)
		}
		ops = append(ops, op)
	}
	return ops
}

func (r *rig) waitAcked(w *Writer, n int64) {
	r.t.Helper()
	if err := r.c.Bus().WaitAcked(ctx(r.t), w.ID(), n); err != nil {
		r.t.Fatalf("waiting for %s to ack %d ops (acked %d): %v", w.ID(), n, w.Acked(), err)
	}
}

func (r *rig) wait(w *Writer, kind history.SignalKind, n int) {
	r.t.Helper()
	if err := r.c.Bus().Wait(ctx(r.t), w.ID(), kind, n); err != nil {
		r.t.Fatalf("waiting for %s %s #%d: %v", w.ID(), kind, n, err)
	}
}

// audit settles the cluster and runs the auditor on a fresh path.
func (r *rig) audit() AuditResult {
	r.t.Helper()
	sctx, cancel := context.WithTimeout(ctx(r.t), 10*time.Second)
	defer cancel()
	if err := r.c.Settle(sctx); err != nil {
		r.t.Logf("settle: %v", err)
	}
	a, err := r.c.Audit(ctx(r.t), r.st, 0)
	if err != nil {
		r.t.Fatal(err)
	}
	return a
}

// events returns the recorded events of kind (any writer when writer is "").
func (r *rig) events(kind history.Kind, writer string) []history.Event {
	var out []history.Event
	for _, e := range r.rec.Events() {
		if e.Kind == kind && (writer == "" || e.Writer == writer) {
			out = append(out, e)
		}
	}
	return out
}

// acked returns every op acknowledged by writer ("" = anyone).
func (r *rig) acked(writer string) []int64 {
	var ops []int64
	for _, e := range r.events(history.Ack, writer) {
		ops = append(ops, e.Ops...)
	}
	return sortedUnique(ops)
}

// lost returns the acknowledged ops missing from the audit.
func (r *rig) lost(a AuditResult) []int64 {
	var lost []int64
	for _, op := range r.acked("") {
		if _, ok := slices.BinarySearch(a.Ops, op); !ok {
			lost = append(lost, op)
		}
	}
	return lost
}

func (r *rig) requireDurable(a AuditResult) {
	r.t.Helper()
	if lost := r.lost(a); len(lost) > 0 {
		r.t.Fatalf("acknowledged ops missing from the audit (term %d, restore point %s): %v", a.Term, a.Key, lost)
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// holdStore blocks the first call its match accepts (after it is armed) until released.
type holdStore struct {
	store.Store
	match func(op, key string) bool

	mu      sync.Mutex
	armed   bool
	hit     chan struct{}
	release chan struct{}
}

func newHold(inner store.Store, match func(op, key string) bool) *holdStore {
	return &holdStore{Store: inner, match: match, hit: make(chan struct{}), release: make(chan struct{})}
}

func (h *holdStore) arm() {
	h.mu.Lock()
	h.armed = true
	h.mu.Unlock()
}

func (h *holdStore) maybeHold(ctx context.Context, op, key string) {
	h.mu.Lock()
	hold := h.armed && h.match(op, key)
	if hold {
		h.armed = false
	}
	h.mu.Unlock()
	if !hold {
		return
	}
	close(h.hit)
	select {
	case <-h.release:
	case <-ctx.Done():
	}
}

func (h *holdStore) Put(ctx context.Context, key string, body []byte) (string, error) {
	h.maybeHold(ctx, "put", key)
	return h.Store.Put(ctx, key, body)
}

func (h *holdStore) Get(ctx context.Context, key string) (store.Object, error) {
	h.maybeHold(ctx, "get", key)
	return h.Store.Get(ctx, key)
}

func (h *holdStore) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	h.maybeHold(ctx, "list", prefix)
	return h.Store.List(ctx, prefix)
}

func (h *holdStore) waitHit(t *testing.T) {
	t.Helper()
	select {
	case <-h.hit:
	case <-ctx(t).Done():
		t.Fatal("the held call never came")
	}
}

func isMetadataPut(op, key string) bool {
	return op == "put" && strings.Contains(key, "/translog/metadata/metadata__")
}

func isFenceList(op, key string) bool {
	return op == "list" && strings.HasSuffix(key, "/translog/metadata/fence__")
}

// failStore fails the next n calls of one kind ("get", "list" or "put-if-match") whose key (a
// listing's prefix) match accepts, with err; the other calls reach the inner store.
type failStore struct {
	store.Store
	op    string
	match func(key string) bool
	n     atomic.Int64
	err   error
}

func newFailStore(inner store.Store, op string, match func(key string) bool, n int64, err error) *failStore {
	f := &failStore{Store: inner, op: op, match: match, err: err}
	f.n.Store(n)
	return f
}

func (f *failStore) fails(op, key string) bool {
	return op == f.op && f.match(key) && f.n.Add(-1) >= 0
}

func (f *failStore) Get(ctx context.Context, key string) (store.Object, error) {
	if f.fails("get", key) {
		return store.Object{}, f.err
	}
	return f.Store.Get(ctx, key)
}

func (f *failStore) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	if f.fails("list", prefix) {
		return nil, f.err
	}
	return f.Store.List(ctx, prefix)
}

func (f *failStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	if f.fails("put-if-match", key) {
		return "", f.err
	}
	return f.Store.PutIfMatch(ctx, key, body, etag)
}

// unanswered is a 500: a call whose outcome the store did not tell.
var unanswered = &store.Error{Op: "get", Kind: store.ErrAmbiguous, Status: 500, Code: "InternalError"}

// forbidden is a 403: a configuration error no retry cures.
var forbidden = &store.Error{Op: "call", Kind: store.ErrConfig, Status: 403, Code: "AccessDenied"}

func isMetadataFile(key string) bool { return strings.Contains(key, "/translog/metadata/metadata__") }

// acking adds writer id, promotes it at term, and has it acknowledge n fresh ops.
func (r *rig) acking(id string, term int64, n int) *Writer {
	r.t.Helper()
	return r.ackingOn(id, nil, term, n)
}

// ackingOn is acking with the writer's store path st (nil: the rig's store).
func (r *rig) ackingOn(id string, st store.Store, term int64, n int) *Writer {
	r.t.Helper()
	w := r.add(id, st)
	r.promote(w, term)
	r.submit(w, n)
	r.waitAcked(w, int64(n))
	return w
}

// settle waits until no writer has buffered ops or a sync in flight.
func (r *rig) settle() {
	r.t.Helper()
	if err := r.c.Settle(ctx(r.t)); err != nil {
		r.t.Fatal(err)
	}
}
