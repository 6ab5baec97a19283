package sim

import (
	"context"
	"errors"

	"github.com/fencebench/fencebench/store"
)

// Retrying is a store client that retries, the way the SDKs do when their retries are left on:
// a call whose answer was lost or was a 5xx is sent again, up to attempts times, conditional
// writes included. It exists for the sdk-retries protocol variant, which turns retries on: on
// the network stacks the SDK's own retryer does it.
func Retrying(s store.Store, attempts int) store.Store {
	if attempts < 2 {
		return s
	}
	return &retrying{Store: s, attempts: attempts}
}

type retrying struct {
	store.Store
	attempts int
}

// again reports whether the SDK would send the call again after err.
func again(err error) bool {
	var se *store.Error
	if !errors.As(err, &se) || !errors.Is(err, store.ErrAmbiguous) {
		return false
	}
	return se.Status == 0 || se.Status >= 500
}

func retry[T any](ctx context.Context, n int, f func() (T, error)) (T, error) {
	var v T
	var err error
	for i := 0; i < n; i++ {
		if v, err = f(); !again(err) || ctx.Err() != nil {
			return v, err
		}
	}
	return v, err
}

func (r *retrying) Get(ctx context.Context, key string) (store.Object, error) {
	return retry(ctx, r.attempts, func() (store.Object, error) { return r.Store.Get(ctx, key) })
}

func (r *retrying) Put(ctx context.Context, key string, body []byte) (string, error) {
	return retry(ctx, r.attempts, func() (string, error) { return r.Store.Put(ctx, key, body) })
}

func (r *retrying) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	return retry(ctx, r.attempts, func() (string, error) { return r.Store.PutIfAbsent(ctx, key, body) })
}

func (r *retrying) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	return retry(ctx, r.attempts, func() (string, error) { return r.Store.PutIfMatch(ctx, key, body, etag) })
}

func (r *retrying) Delete(ctx context.Context, key string) error {
	_, err := retry(ctx, r.attempts, func() (struct{}, error) { return struct{}{}, r.Store.Delete(ctx, key) })
	return err
}

func (r *retrying) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	return retry(ctx, r.attempts, func() ([]store.Entry, error) { return r.Store.List(ctx, prefix) })
}
