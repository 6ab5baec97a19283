package writers

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// oddStore answers a batch delete with a per-key failure for p/a and every Put with an
// unknown outcome; the rest is the in-memory store.
type oddStore struct{ store.Store }

func (o oddStore) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	var failed []store.KeyError
	var rest []string
	for _, k := range keys {
		if k == "p/a" {
			failed = append(failed, store.KeyError{Key: k, Err: errors.New("AccessDenied")})
		} else {
			rest = append(rest, k)
		}
	}
	_, err := o.Store.DeleteMany(ctx, rest)
	return failed, err
}

func (o oddStore) Put(ctx context.Context, key string, body []byte) (string, error) {
	return "", &store.Error{Op: "put", Key: key, Kind: store.ErrAmbiguous, Status: 503, Code: "SlowDown"}
}

// Every call through a RecordingStore leaves one completed event of its kind, with its key,
// outcome, HTTP status, the token it presented or obtained, and its detail: the store-call
// timeline a report shows beside the protocol's events.
func TestRecordingStoreRecordsEveryCall(t *testing.T) {
	rec := history.NewRecorder()
	rs := NewRecordingStore(oddStore{store.NewMem()}, rec, "w")
	c := context.Background()
	etag, err := rs.PutIfAbsent(c, "p/k", []byte("1"))
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rs.PutIfAbsent(c, "p/k", []byte("2"))
	next, err := rs.PutIfMatch(c, "p/k", []byte("3"), etag)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = rs.PutIfMatch(c, "p/k", []byte("4"), etag)
	_, _ = rs.Get(c, "p/k")
	_, _ = rs.List(c, "p/")
	_, _ = rs.Put(c, "p/x", []byte("5"))
	_, _ = rs.DeleteMany(c, []string{"p/a", "p/b"})
	_, _ = rs.DeleteMany(c, []string{"p/c"})
	_ = rs.Delete(c, "p/k")
	_, _ = rs.Get(c, "p/k")

	type want struct {
		kind    history.Kind
		outcome history.Outcome
		token   string
		status  int
		detail  string
		err     string
	}
	wants := []want{
		{history.StorePutIfAbsent, history.OK, etag, 0, "", ""},
		{history.StorePutIfAbsent, history.Fail, "", 412, "", "precondition"},
		{history.StorePutIfMatch, history.OK, next, 0, "if-match " + store.NormalizeETag(etag), ""},
		{history.StorePutIfMatch, history.Fail, store.NormalizeETag(etag), 412, "if-match " + store.NormalizeETag(etag), "precondition"},
		{history.StoreGet, history.OK, next, 0, "", ""},
		{history.StoreList, history.OK, "", 0, "1 entries", ""},
		{history.StorePut, history.Ambiguous, "", 503, "", "ambiguous"},
		{history.StoreDeleteMany, history.Fail, "", 0, "p/a p/b", "1 of 2 keys not deleted: p/a: AccessDenied"},
		{history.StoreDeleteMany, history.OK, "", 0, "p/c", ""},
		{history.StoreDelete, history.OK, "", 0, "", ""},
		{history.StoreGet, history.Fail, "", 404, "", "not found"},
	}
	evs := rec.Events()
	if len(evs) != len(wants) {
		t.Fatalf("%d events for %d calls: %v", len(evs), len(wants), evs)
	}
	for i, e := range evs {
		w := wants[i]
		if e.Kind != w.kind || e.Writer != "w" || e.Outcome != w.outcome || e.Token != w.token ||
			e.Status != w.status || e.Detail != w.detail || !strings.Contains(strings.ToLower(e.Err), strings.ToLower(w.err)) ||
			(w.err == "") != (e.Err == "") || e.Complete < e.Invoke {
			t.Errorf("call %d: %+v; want %+v", i, e, w)
		}
	}
}
