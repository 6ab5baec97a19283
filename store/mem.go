package store

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"sort"
	"strings"
	"sync"
)

// Mem is an in-memory Store with MinIO's conditional-write semantics: ETags are the MD5 of the
// body (so identical bodies get identical ETags, the ABA hazard real stores have),
// If-None-Match: * on an existing key and a stale If-Match answer precondition failed, and
// If-Match on a missing key answers not found. Every operation is atomic. It exists for fast,
// deterministic protocol traces; the contract suite in store/storetest holds it to the same
// behaviour as MinIO.
//
// Hook, when set, runs before every operation with the operation name and key and may return
// an error to inject a failure (the operation is then not applied) or block to force an
// interleaving. It runs outside the store's lock.
type Mem struct {
	mu   sync.Mutex
	objs map[string]Object

	Hook func(ctx context.Context, op, key string) error
}

// NewMem returns an empty in-memory store.
func NewMem() *Mem { return &Mem{objs: map[string]Object{}} }

var _ Store = (*Mem)(nil)

func md5ETag(body []byte) string {
	sum := md5.Sum(body)
	return hex.EncodeToString(sum[:])
}

func (m *Mem) hook(ctx context.Context, op, key string) error {
	if err := ctx.Err(); err != nil {
		return Ambiguous(op, key, err)
	}
	if m.Hook == nil {
		return nil
	}
	return m.Hook(ctx, op, key)
}

func status(op, key string, kind error, st int, code string) error {
	return &Error{Op: op, Key: key, Kind: kind, Status: st, Code: code}
}

// Get implements Store.
func (m *Mem) Get(ctx context.Context, key string) (Object, error) {
	if err := m.hook(ctx, "get", key); err != nil {
		return Object{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return Object{}, status("get", key, ErrNotFound, 404, "NoSuchKey")
	}
	return Object{Body: append([]byte(nil), o.Body...), ETag: o.ETag}, nil
}

func (m *Mem) store(key string, body []byte) string {
	et := md5ETag(body)
	m.objs[key] = Object{Body: append([]byte(nil), body...), ETag: et}
	return et
}

// Put implements Store.
func (m *Mem) Put(ctx context.Context, key string, body []byte) (string, error) {
	if err := m.hook(ctx, "put", key); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.store(key, body), nil
}

// PutIfAbsent implements Store.
func (m *Mem) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	if err := m.hook(ctx, "put-if-absent", key); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objs[key]; ok {
		return "", status("put-if-absent", key, ErrPreconditionFailed, 412, "PreconditionFailed")
	}
	return m.store(key, body), nil
}

// PutIfMatch implements Store.
func (m *Mem) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	if err := m.hook(ctx, "put-if-match", key); err != nil {
		return "", err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objs[key]
	if !ok {
		return "", status("put-if-match", key, ErrNotFound, 404, "NoSuchKey")
	}
	if o.ETag != NormalizeETag(etag) && etag != "*" {
		return "", status("put-if-match", key, ErrPreconditionFailed, 412, "PreconditionFailed")
	}
	return m.store(key, body), nil
}

// Delete implements Store.
func (m *Mem) Delete(ctx context.Context, key string) error {
	if err := m.hook(ctx, "delete", key); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objs, key)
	return nil
}

// DeleteMany implements Store. The hook runs once per key with op "delete-many"; a hook error
// becomes that key's per-key failure, the way S3 reports them inside a 200 response.
func (m *Mem) DeleteMany(ctx context.Context, keys []string) ([]KeyError, error) {
	var failed []KeyError
	for _, k := range keys {
		if err := m.hook(ctx, "delete-many", k); err != nil {
			failed = append(failed, KeyError{Key: k, Err: err})
			continue
		}
		m.mu.Lock()
		delete(m.objs, k)
		m.mu.Unlock()
	}
	return failed, nil
}

// List implements Store.
func (m *Mem) List(ctx context.Context, prefix string) ([]Entry, error) {
	if err := m.hook(ctx, "list", prefix); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Entry
	for k, o := range m.objs {
		if strings.HasPrefix(k, prefix) {
			out = append(out, Entry{Key: k, ETag: o.ETag, Size: int64(len(o.Body))})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key < out[j].Key })
	return out, nil
}
