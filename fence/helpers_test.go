package fence

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

const (
	testIndex = "idx-7f3a"
	testShard = 3
)

// backend opens a fresh, empty key space on one store.
type backend struct {
	name string
	open func(t *testing.T) (Store, string)
}

// backends lists the in-memory store and both adapters on the shared MinIO. Every protocol
// trace runs on each of them.
func backends() []backend {
	bs := []backend{{"mem", func(t *testing.T) (Store, string) {
		return store.NewMem(), "indices/" + testIndex + "/3/translog/metadata/"
	}}}
	for _, c := range store.Clients {
		bs = append(bs, backend{"minio/" + string(c), func(t *testing.T) (Store, string) {
			return testenv.Store(t, c, nil), testenv.Prefix(t)
		}})
	}
	return bs
}

// world is one trace's shared store and key space. Each actor gets its own faulty wrapper,
// the way each writer has its own client and network path.
type world struct {
	t      *testing.T
	ctx    context.Context
	raw    Store
	prefix string
}

func newWorld(t *testing.T, b backend) *world {
	s, p := b.open(t)
	return &world{t: t, ctx: context.Background(), raw: s, prefix: p}
}

func (w *world) key(term int64) string { return Key(w.prefix, term) }

// fence builds an instance for allocation alloc (on node "node-"+alloc) at term.
func (w *world) fence(alloc string, term int64, guarded bool, v Variant) (*Fence, *faulty) {
	w.t.Helper()
	fs := &faulty{Store: w.raw}
	f, err := New(Options{Store: fs, Prefix: w.prefix, IndexUUID: testIndex, ShardID: testShard,
		AllocationID: alloc, NodeID: "node-" + alloc, Term: term, Guarded: guarded, Variant: v})
	if err != nil {
		w.t.Fatalf("New: %v", err)
	}
	return f, fs
}

// owner builds an instance and claims, failing the test unless the claim succeeds.
func (w *world) owner(alloc string, term int64, guarded bool, v Variant) (*Fence, *faulty) {
	w.t.Helper()
	f, fs := w.fence(alloc, term, guarded, v)
	if err := f.Claim(w.ctx); err != nil {
		w.t.Fatalf("%s claims term %d: %v", alloc, term, err)
	}
	return f, fs
}

func (w *world) exists(term int64) bool {
	w.t.Helper()
	_, err := w.raw.Get(w.ctx, w.key(term))
	if errors.Is(err, store.ErrNotFound) {
		return false
	}
	if err != nil {
		w.t.Fatalf("get %s: %v", w.key(term), err)
	}
	return true
}

func (w *world) content(term int64) Content {
	w.t.Helper()
	o, err := w.raw.Get(w.ctx, w.key(term))
	if err != nil {
		w.t.Fatalf("get %s: %v", w.key(term), err)
	}
	c, err := Decode(o.Body)
	if err != nil {
		w.t.Fatalf("decode %s: %v", w.key(term), err)
	}
	return c
}

func mustOK(t *testing.T, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: got %v, want success", what, err)
	}
}

// wantErr checks that err wraps kind and, when non-empty, mentions reason.
func wantErr(t *testing.T, what string, err, kind error, reason string) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got %v, want %v", what, err, kind)
	}
	for _, other := range []error{ErrFenced, ErrRetryable, ErrIdentity, ErrTransferred} {
		if other != kind && errors.Is(err, other) {
			t.Fatalf("%s: %v is both %v and %v", what, err, kind, other)
		}
	}
	if reason != "" && !strings.Contains(err.Error(), reason) {
		t.Fatalf("%s: got %q, want it to say %q", what, err, reason)
	}
}

// action is what a faulty rule does to the call it matches.
type action int

const (
	pass   action = iota // apply normally (after the rule's hook)
	drop                 // not applied; the caller sees an ambiguous outcome (lost request)
	lose                 // applied; the caller sees an ambiguous outcome (lost response)
	fail                 // not applied; the caller sees rule.err
	as412                // applied; a not-found answer comes back as 412 (stores that answer If-Match on a missing key with 412)
	garble               // a read: applied, and the body comes back cut in half (a misdirected or garbled answer)
)

type rule struct {
	op, key string
	skip    int
	times   int // remaining firings; negative means forever
	act     action
	err     error
	hook    func()
}

// Skip lets the first n matching calls through untouched.
func (r *rule) Skip(n int) *rule { r.skip = n; return r }

// Times sets how often the rule fires; negative means forever.
func (r *rule) Times(n int) *rule { r.times = n; return r }

// Err sets the error a fail rule returns.
func (r *rule) Err(err error) *rule { r.err = err; return r }

// Do runs fn before the matched call proceeds: another actor's steps, interleaved here.
func (r *rule) Do(fn func()) *rule { r.hook = fn; return r }

// faulty wraps a Store and applies rules to matching calls. It works on every backend, so
// the same interleavings run on the in-memory store and on MinIO.
type faulty struct {
	Store
	mu    sync.Mutex
	rules []*rule
}

// on adds a rule firing once on the next call of op on key ("" matches any key).
func (s *faulty) on(op, key string, act action) *rule {
	r := &rule{op: op, key: key, times: 1, act: act}
	s.mu.Lock()
	s.rules = append(s.rules, r)
	s.mu.Unlock()
	return r
}

func (s *faulty) match(op, key string) *rule {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.rules {
		if r.op != op || (r.key != "" && r.key != key) || r.times == 0 {
			continue
		}
		if r.skip > 0 {
			r.skip--
			continue
		}
		if r.times > 0 {
			r.times--
		}
		return r
	}
	return nil
}

func injectedAmbiguous(op, key string) error {
	return &store.Error{Op: op, Key: key, Kind: store.ErrAmbiguous, Err: errors.New("injected: connection reset by peer")}
}

func injected409(op, key string) error {
	return &store.Error{Op: op, Key: key, Kind: store.ErrConflict, Status: 409, Code: "ConditionalRequestConflict"}
}

func apply[T any](r *rule, op, key string, call func() (T, error)) (T, error) {
	var zero T
	if r == nil {
		return call()
	}
	if r.hook != nil {
		r.hook()
	}
	switch r.act {
	case drop:
		return zero, injectedAmbiguous(op, key)
	case fail:
		return zero, r.err
	case lose:
		if _, err := call(); err != nil {
			return zero, err
		}
		return zero, injectedAmbiguous(op, key)
	case garble:
		v, err := call()
		if o, ok := any(&v).(*store.Object); ok && err == nil {
			o.Body = o.Body[:len(o.Body)/2]
		}
		return v, err
	case as412:
		v, err := call()
		if errors.Is(err, store.ErrNotFound) {
			return zero, &store.Error{Op: op, Key: key, Kind: store.ErrPreconditionFailed, Status: 412, Code: "PreconditionFailed"}
		}
		return v, err
	}
	return call()
}

func (s *faulty) Get(ctx context.Context, key string) (store.Object, error) {
	return apply(s.match("get", key), "get", key, func() (store.Object, error) { return s.Store.Get(ctx, key) })
}

func (s *faulty) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	return apply(s.match("put-if-absent", key), "put-if-absent", key, func() (string, error) {
		return s.Store.PutIfAbsent(ctx, key, body)
	})
}

func (s *faulty) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	return apply(s.match("put-if-match", key), "put-if-match", key, func() (string, error) {
		return s.Store.PutIfMatch(ctx, key, body, etag)
	})
}

func (s *faulty) Delete(ctx context.Context, key string) error {
	_, err := apply(s.match("delete", key), "delete", key, func() (struct{}, error) {
		return struct{}{}, s.Store.Delete(ctx, key)
	})
	return err
}

func (s *faulty) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	return apply(s.match("list", ""), "list", prefix, func() ([]store.Entry, error) { return s.Store.List(ctx, prefix) })
}

// DeleteMany applies rules per key: a drop or fail rule turns that key into a per-key
// failure inside an otherwise successful batch, the way S3 reports them.
func (s *faulty) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	var through []string
	var failed []store.KeyError
	for _, k := range keys {
		if r := s.match("delete-many", k); r != nil {
			if r.hook != nil {
				r.hook()
			}
			if r.act == drop || r.act == fail {
				failed = append(failed, store.KeyError{Key: k, Err: &store.Error{Op: "delete-many", Key: k,
					Kind: store.ErrAmbiguous, Status: 200, Code: "InternalError"}})
				continue
			}
		}
		through = append(through, k)
	}
	if len(through) == 0 {
		return failed, nil
	}
	more, err := s.Store.DeleteMany(ctx, through)
	return append(failed, more...), err
}
