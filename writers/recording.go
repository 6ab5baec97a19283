package writers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// RecordingStore wraps a store client and records every call at the client boundary as one
// history store.* event: the writer, the key (the prefix for a listing, the first key for a
// batch delete), the outcome, the HTTP status and S3 error code of a failed call, and the ETag
// as Token (obtained on success; for put-if-match the ETag presented when the call failed).
//
// Outcomes: nil is ok; store.ErrAmbiguous and store.ErrConflict are ambiguous (the call may
// have been applied); every other error is fail. A batch delete whose response reports
// per-key failures is fail with Err naming those keys; the other keys were deleted.
//
// Calls of one writer may overlap (a sync runs beside a segment refresh, and the
// cas-concurrent-with-metadata variant overlaps two calls on purpose), so the wrapper does
// not serialise them; each event carries its own invoke and complete times.
type RecordingStore struct {
	inner  store.Store
	rec    *history.Recorder
	writer string
}

var _ store.Store = (*RecordingStore)(nil)

// NewRecordingStore records calls made through inner on behalf of writer into rec.
func NewRecordingStore(inner store.Store, rec *history.Recorder, writer string) *RecordingStore {
	return &RecordingStore{inner: inner, rec: rec, writer: writer}
}

func (r *RecordingStore) begin(kind history.Kind, key string) *history.Span {
	return r.rec.Begin(history.Event{Kind: kind, Writer: r.writer, Key: key})
}

// storeOutcome classifies a store error for the history.
func storeOutcome(err error) history.Outcome {
	switch {
	case err == nil:
		return history.OK
	case errors.Is(err, store.ErrAmbiguous), errors.Is(err, store.ErrConflict):
		return history.Ambiguous
	default:
		return history.Fail
	}
}

func (r *RecordingStore) end(sp *history.Span, err error) {
	e := sp.Event()
	var se *store.Error
	if errors.As(err, &se) {
		e.Status, e.Code = se.Status, se.Code
	}
	sp.End(storeOutcome(err), err)
}

// Get implements store.Store.
func (r *RecordingStore) Get(ctx context.Context, key string) (store.Object, error) {
	sp := r.begin(history.StoreGet, key)
	o, err := r.inner.Get(ctx, key)
	sp.Event().Token = o.ETag
	r.end(sp, err)
	return o, err
}

// Put implements store.Store.
func (r *RecordingStore) Put(ctx context.Context, key string, body []byte) (string, error) {
	sp := r.begin(history.StorePut, key)
	etag, err := r.inner.Put(ctx, key, body)
	sp.Event().Token = etag
	r.end(sp, err)
	return etag, err
}

// PutIfAbsent implements store.Store.
func (r *RecordingStore) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	sp := r.begin(history.StorePutIfAbsent, key)
	etag, err := r.inner.PutIfAbsent(ctx, key, body)
	sp.Event().Token = etag
	r.end(sp, err)
	return etag, err
}

// PutIfMatch implements store.Store.
func (r *RecordingStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	sp := r.begin(history.StorePutIfMatch, key)
	sp.Event().Detail = "if-match " + store.NormalizeETag(etag)
	next, err := r.inner.PutIfMatch(ctx, key, body, etag)
	if err == nil {
		sp.Event().Token = next
	} else {
		sp.Event().Token = store.NormalizeETag(etag)
	}
	r.end(sp, err)
	return next, err
}

// Delete implements store.Store.
func (r *RecordingStore) Delete(ctx context.Context, key string) error {
	sp := r.begin(history.StoreDelete, key)
	err := r.inner.Delete(ctx, key)
	r.end(sp, err)
	return err
}

// DeleteMany implements store.Store. Detail lists every key of the batch.
func (r *RecordingStore) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	first := ""
	if len(keys) > 0 {
		first = keys[0]
	}
	sp := r.begin(history.StoreDeleteMany, first)
	sp.Event().Detail = strings.Join(keys, " ")
	failed, err := r.inner.DeleteMany(ctx, keys)
	if err == nil && len(failed) > 0 {
		msgs := make([]string, len(failed))
		for i, f := range failed {
			msgs[i] = f.Error()
		}
		sp.End(history.Fail, fmt.Errorf("%d of %d keys not deleted: %s", len(failed), len(keys), strings.Join(msgs, "; ")))
		return failed, err
	}
	r.end(sp, err)
	return failed, err
}

// List implements store.Store. Detail is the number of entries returned.
func (r *RecordingStore) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	sp := r.begin(history.StoreList, prefix)
	es, err := r.inner.List(ctx, prefix)
	if err == nil {
		sp.Event().Detail = fmt.Sprintf("%d entries", len(es))
	}
	r.end(sp, err)
	return es, err
}

// gate is the pause switch of one writer: while closed, every store call of the writer waits
// before it is issued (and before it is recorded), as a process frozen by a long GC pause
// would.
type gate struct {
	mu     sync.Mutex
	paused bool
	open   chan struct{} // closed on resume
}

func (g *gate) pause() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.paused {
		return false
	}
	g.paused, g.open = true, make(chan struct{})
	return true
}

func (g *gate) resume() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.paused {
		return false
	}
	g.paused = false
	close(g.open)
	return true
}

func (g *gate) isPaused() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.paused
}

func (g *gate) wait(ctx context.Context, op, key string) error {
	g.mu.Lock()
	paused, open := g.paused, g.open
	g.mu.Unlock()
	if !paused {
		return nil
	}
	select {
	case <-open:
		return nil
	case <-ctx.Done():
		// The call never left: report it the way an adapter reports a cancelled call.
		return &store.Error{Op: op, Key: key, Kind: store.ErrAmbiguous, Err: ctx.Err()}
	}
}

// gatedStore holds every call at the writer's gate before handing it on.
type gatedStore struct {
	g     *gate
	inner store.Store
}

var _ store.Store = gatedStore{}

func (s gatedStore) Get(ctx context.Context, key string) (store.Object, error) {
	if err := s.g.wait(ctx, "get", key); err != nil {
		return store.Object{}, err
	}
	return s.inner.Get(ctx, key)
}

func (s gatedStore) Put(ctx context.Context, key string, body []byte) (string, error) {
	if err := s.g.wait(ctx, "put", key); err != nil {
		return "", err
	}
	return s.inner.Put(ctx, key, body)
}

func (s gatedStore) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	if err := s.g.wait(ctx, "put-if-absent", key); err != nil {
		return "", err
	}
	return s.inner.PutIfAbsent(ctx, key, body)
}

func (s gatedStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	if err := s.g.wait(ctx, "put-if-match", key); err != nil {
		return "", err
	}
	return s.inner.PutIfMatch(ctx, key, body, etag)
}

func (s gatedStore) Delete(ctx context.Context, key string) error {
	if err := s.g.wait(ctx, "delete", key); err != nil {
		return err
	}
	return s.inner.Delete(ctx, key)
}

func (s gatedStore) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	if err := s.g.wait(ctx, "delete-many", ""); err != nil {
		return nil, err
	}
	return s.inner.DeleteMany(ctx, keys)
}

func (s gatedStore) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	if err := s.g.wait(ctx, "list", prefix); err != nil {
		return nil, err
	}
	return s.inner.List(ctx, prefix)
}
