package certify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fencebench/fencebench/store"
)

func probeD17(ctx context.Context, t *trial) {
	k := t.key("rac")
	e, err := t.s.Put(ctx, k, body("d17 v0"))
	if err != nil {
		t.errorOn(err, "PUT v0: %s", answer(err))
		return
	}
	n := t.opts.Keys
	staleGet, staleList := 0, 0
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		b := body(fmt.Sprintf("d17 v%d", i))
		e2, err := t.s.PutIfMatch(ctx, k, b, e)
		if err != nil {
			t.unexpected(fmt.Sprintf("iteration %d: PUT If-Match: <current ETag>", i), err, "200")
			return
		}
		o, err := t.peer.Get(ctx, k)
		switch {
		case err != nil:
			t.errorOn(err, "iteration %d: second client's GET: %s", i, answer(err))
			return
		case o.ETag != e2 || !bytes.Equal(o.Body, b):
			staleGet++
			t.detail("iteration %d: second client's GET shows ETag %s, want %s", i, o.ETag, e2)
		}
		es, err := t.peer.List(ctx, k)
		if err != nil {
			t.errorOn(err, "iteration %d: second client's LIST: %s", i, answer(err))
			return
		}
		if j := slices.IndexFunc(es, func(x store.Entry) bool { return x.Key == k }); j < 0 || es[j].ETag != e2 {
			staleList++
			t.detail("iteration %d: second client's LIST does not show ETag %s", i, e2)
		}
		e = e2
	}
	t.fact("stale_get", fmt.Sprint(staleGet))
	t.fact("stale_list", fmt.Sprint(staleList))
	if staleGet+staleList > 0 {
		t.failf("%d stale GETs and %d stale LISTs from a second client over %d CAS writes", staleGet, staleList, n)
		return
	}
	t.observe("%d CAS writes: a second client's GET and LIST showed the new ETag every time", n)
}

func probeD18(ctx context.Context, t *trial) {
	n := max(5, t.opts.Keys/10)
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		k := t.key(fmt.Sprintf("phantom%d", i))
		e1, err := t.s.Put(ctx, k, body("d18 v1"))
		if err != nil {
			t.errorOn(err, "PUT v1: %s", answer(err))
			return
		}
		e2, err := t.peer.Put(ctx, k, body("d18 v2 by the second client"))
		if err != nil {
			t.errorOn(err, "second client's PUT v2: %s", answer(err))
			return
		}
		_, err = t.s.PutIfMatch(ctx, k, body("d18 v3"), e1)
		if !refused(err) {
			if err == nil {
				t.failf("iteration %d: PUT If-Match: <stale> answered 200: there is no 412 to explain", i)
			} else {
				t.unexpected(fmt.Sprintf("iteration %d: PUT If-Match: <stale>", i), err, "412")
			}
			return
		}
		o, err := t.s.Get(ctx, k)
		switch {
		case err != nil:
			t.unexpected(fmt.Sprintf("iteration %d: GET right after the 412", i), err, "200 with the second client's ETag")
			return
		case o.ETag == e1:
			t.failf("iteration %d: phantom 412: GET right after it shows the very ETag %s the write presented", i, e1)
		case o.ETag != e2:
			t.detail("iteration %d: GET after the 412 shows ETag %s (neither E1 %s nor E2 %s)", i, o.ETag, e1, e2)
		}
		_, err = t.s.PutIfAbsent(ctx, k, body("d18 create"))
		if !refused(err) {
			if err == nil {
				t.failf("iteration %d: PUT If-None-Match: * on an existing key answered 200: there is no 412 to explain", i)
			} else {
				t.unexpected(fmt.Sprintf("iteration %d: PUT If-None-Match: * on an existing key", i), err, "412")
			}
			return
		}
		if _, err := t.s.Get(ctx, k); err != nil {
			t.failf("iteration %d: phantom 412: the create was refused but GET right after it answers %s", i, answer(err))
		}
	}
	if !t.bad() {
		t.observe("%d stale If-Match and %d If-None-Match: * refusals: an immediate GET explained every one", n, n)
	}
}

func probeE19(ctx context.Context, t *trial) {
	t.record()
	raw, err := newRawS3(t.cfg)
	if err != nil {
		t.errorf("aws-sdk client for the conditional delete: %v", err)
		return
	}
	t.detail("the conditional DELETE is sent with aws-sdk-go-v2 directly: the bench's Store interface has no conditional delete")
	k := t.key("delete")
	e1, err := t.s.Put(ctx, k, body("e19 v1"))
	if err != nil {
		t.errorOn(err, "PUT v1: %s", answer(err))
		return
	}
	if _, err := t.s.Put(ctx, k, body("e19 v2")); err != nil {
		t.errorOn(err, "PUT v2: %s", answer(err))
		return
	}
	ans, derr := t.rawDeleteIfMatch(ctx, raw, k, e1)
	t.fact("answer", ans.String())
	if ans.err != nil && ans.status == 0 {
		t.errorOn(derr, "DELETE If-Match: <stale>: %s", ans)
		return
	}
	_, gerr := t.s.Get(ctx, k)
	present := gerr == nil
	if gerr != nil && !errors.Is(gerr, store.ErrNotFound) {
		t.errorOn(gerr, "GET afterwards: %s", answer(gerr))
		return
	}
	switch {
	case ans.ok() && !present:
		t.fact("honoured", "false")
		t.observe("DELETE If-Match: <stale> -> %s and the object was deleted: the condition is ignored (a protocol that deletes conditionally would be unsafe here; fencebench never does)", ans)
	case ans.ok() && present:
		t.fact("honoured", "false")
		t.observe("DELETE If-Match: <stale> -> %s but the object is still there", ans)
	case ans.status == 412 && present:
		t.fact("honoured", "true")
		t.observe("DELETE If-Match: <stale> -> %s and the object is still there: the condition is honoured", ans)
	case !present:
		t.failf("DELETE If-Match: <stale> -> %s, yet the object was deleted", ans)
	default:
		t.fact("honoured", "unknown")
		t.observe("DELETE If-Match: <stale> -> %s; the object is still there", ans)
	}
}

func probeE20(ctx context.Context, t *trial) {
	t.record()
	raw, err := newRawS3(t.cfg)
	if err != nil {
		t.errorf("aws-sdk client for the conditional delete: %v", err)
		return
	}
	var obs []string
	// DELETE If-Match on a missing key.
	miss := t.key("missing")
	ans, derr := t.rawDeleteIfMatch(ctx, raw, miss, "6f5902ac237024bdd0c176cb93063dc4")
	t.fact("missing_key_answer", ans.String())
	if ans.err != nil && ans.status == 0 {
		t.errorOn(derr, "DELETE If-Match on a missing key: %s", ans)
		return
	}
	obs = append(obs, "DELETE If-Match on a missing key -> "+ans.String())

	// DeleteObjects naming a stale <ETag>.
	k := t.key("batch-etag")
	e1, err := t.s.Put(ctx, k, body("e20 v1"))
	if err != nil {
		t.errorOn(err, "PUT v1: %s", answer(err))
		return
	}
	if _, err := t.s.Put(ctx, k, body("e20 v2")); err != nil {
		t.errorOn(err, "PUT v2: %s", answer(err))
		return
	}
	perKey, dans, derr := t.rawDeleteObjectsWithETag(ctx, raw, k, e1)
	if derr != nil && dans.status == 0 {
		t.errorOn(derr, "DeleteObjects with <ETag>: %s", dans)
		return
	}
	_, gerr := t.s.Get(ctx, k)
	switch {
	case derr != nil && (gerr == nil || errors.Is(gerr, store.ErrNotFound)):
		// The store answered the request itself with an error: what it does with an <ETag>.
		if gerr != nil {
			t.failf("DeleteObjects with a stale <ETag> answered %s for the whole request, yet the object was deleted", dans)
			break
		}
		t.fact("deleteobjects_etag", "refused "+dans.String())
		obs = append(obs, "DeleteObjects with a stale <ETag> -> "+dans.String()+" for the whole request, object kept")
	case gerr != nil && !errors.Is(gerr, store.ErrNotFound):
		t.errorOn(gerr, "GET afterwards: %s", answer(gerr))
		return
	case perKey != "" && gerr == nil:
		t.fact("deleteobjects_etag", "honoured")
		obs = append(obs, "DeleteObjects with a stale <ETag> -> per-key <Error> "+perKey+", object kept")
	case perKey == "" && gerr != nil:
		t.fact("deleteobjects_etag", "ignored")
		obs = append(obs, "DeleteObjects with a stale <ETag> -> deleted, no per-key error (the <ETag> is ignored)")
	case perKey != "":
		t.failf("DeleteObjects with a stale <ETag> reported the per-key error %s, yet the object was deleted", perKey)
	default:
		t.fact("deleteobjects_etag", "unreported")
		obs = append(obs, "DeleteObjects with a stale <ETag> -> no per-key error, yet the object is still there")
	}

	// The bench's DeleteMany: existing and missing keys, no per-key failure.
	var keys []string
	for i := range 3 {
		kk := t.key(fmt.Sprintf("batch%d", i))
		if _, err := t.s.Put(ctx, kk, body("e20 batch")); err != nil {
			t.errorOn(err, "PUT %s: %s", t.short(kk), answer(err))
			return
		}
		keys = append(keys, kk)
	}
	keys = append(keys, t.key("batch-missing"))
	failed, err := t.s.DeleteMany(ctx, keys)
	if err != nil {
		t.unexpected("the bench's DeleteMany", err, "200")
		return
	}
	for _, f := range failed {
		t.failf("the bench's DeleteMany reported a per-key failure for %s: %v", t.short(f.Key), f.Err)
	}
	for _, kk := range keys[:3] {
		if _, err := t.s.Get(ctx, kk); err == nil {
			t.failf("the bench's DeleteMany reported %s deleted, but it is still there", t.short(kk))
		} else if !errors.Is(err, store.ErrNotFound) {
			t.errorOn(err, "GET %s afterwards: %s", t.short(kk), answer(err))
		}
	}
	if !t.bad() {
		obs = append(obs, "the bench's DeleteMany on 3 existing keys and 1 missing key: no per-key failure, all deleted")
	}
	t.observe("%s", strings.Join(obs, "; "))
}
