package sim

import (
	"context"
	"net/http"

	"github.com/fencebench/fencebench/store"
)

var _ store.Store = (*Path)(nil)

// The store applies a call whatever became of its writer: the in-memory store never sees the
// writer's context.
var bg = context.Background()

func header(k, v string) http.Header {
	if k == "" {
		return http.Header{}
	}
	return http.Header{k: {v}}
}

// Get implements store.Store.
func (p *Path) Get(ctx context.Context, key string) (store.Object, error) {
	a := p.do(ctx, call{op: "get", method: http.MethodGet, key: key, match: []string{key}, header: http.Header{},
		apply: func(bool, func(string) bool) answer {
			o, err := p.b.mem.Get(bg, key)
			a := fromErr(err, http.StatusOK)
			a.obj, a.etag = o, o.ETag
			return a
		}})
	return a.obj, a.err
}

func (p *Path) put(ctx context.Context, op, key string, body []byte, h http.Header,
	write func() (string, error)) (string, error) {
	a := p.do(ctx, call{op: op, method: http.MethodPut, key: key, match: []string{key}, header: h, body: len(body),
		apply: func(strip bool, _ func(string) bool) answer {
			w := write
			if strip {
				w = func() (string, error) { return p.b.mem.Put(bg, key, body) }
			}
			etag, err := w()
			a := fromErr(err, http.StatusOK)
			a.etag = etag
			return a
		}})
	return a.etag, a.err
}

// Put implements store.Store.
func (p *Path) Put(ctx context.Context, key string, body []byte) (string, error) {
	return p.put(ctx, "put", key, body, header("", ""), func() (string, error) { return p.b.mem.Put(bg, key, body) })
}

// PutIfAbsent implements store.Store.
func (p *Path) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	return p.put(ctx, "put-if-absent", key, body, header("If-None-Match", "*"),
		func() (string, error) { return p.b.mem.PutIfAbsent(bg, key, body) })
}

// PutIfMatch implements store.Store.
func (p *Path) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	return p.put(ctx, "put-if-match", key, body, header("If-Match", `"`+store.NormalizeETag(etag)+`"`),
		func() (string, error) { return p.b.mem.PutIfMatch(bg, key, body, etag) })
}

// Delete implements store.Store.
func (p *Path) Delete(ctx context.Context, key string) error {
	a := p.do(ctx, call{op: "delete", method: http.MethodDelete, key: key, match: []string{key}, header: http.Header{},
		apply: func(bool, func(string) bool) answer {
			return fromErr(p.b.mem.Delete(bg, key), http.StatusNoContent)
		}})
	return a.err
}

// DeleteMany implements store.Store: one batch, matched on the keys it names.
func (p *Path) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	if len(keys) == 0 {
		return nil, nil
	}
	sent := append([]string(nil), keys...)
	a := p.do(ctx, call{op: "delete-many", method: http.MethodPost, query: "delete=", keys: sent, match: sent,
		header: http.Header{}, body: 64 * len(keys),
		apply: func(_ bool, fail func(string) bool) answer {
			var rest []string
			var failed []store.KeyError
			for _, k := range sent {
				if fail != nil && fail(k) {
					failed = append(failed, store.KeyError{Key: k, Err: &store.Error{Op: "delete-many", Key: k,
						Kind: store.Classify(0, "InternalError"), Code: "InternalError"}})
					continue
				}
				rest = append(rest, k)
			}
			more, err := p.b.mem.DeleteMany(bg, rest)
			a := fromErr(err, http.StatusOK)
			a.failed = append(failed, more...)
			return a
		}})
	return a.failed, a.err
}

// List implements store.Store.
func (p *Path) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	a := p.do(ctx, call{op: "list", method: http.MethodGet, query: listQuery(prefix), match: []string{prefix},
		header: http.Header{}, apply: func(bool, func(string) bool) answer {
			l, err := p.b.mem.List(bg, prefix)
			a := fromErr(err, http.StatusOK)
			a.list = l
			return a
		}})
	return a.list, a.err
}
