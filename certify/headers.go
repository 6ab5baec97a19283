package certify

import (
	"bytes"
	"context"
	"errors"
	"slices"

	"github.com/fencebench/fencebench/store"
)

// body returns a probe body: a tag and a unique nonce.
func body(tag string) []byte { return []byte("fencebench-certify " + tag + " nonce=" + nonce()) }

// intact checks that key still holds want with ETag etag.
func (t *trial) intact(ctx context.Context, key string, want []byte, etag string) {
	o, err := t.s.Get(ctx, key)
	switch {
	case err != nil:
		t.errorOn(err, "GET %s afterwards: %s", t.short(key), answer(err))
	case !bytes.Equal(o.Body, want):
		t.failf("GET afterwards returns %.100q, want the unchanged %.100q: the refused write was applied", o.Body, want)
	case etag != "" && o.ETag != etag:
		t.failf("GET afterwards shows ETag %s, want the unchanged %s", o.ETag, etag)
	}
}

// refusedWrite judges a conditional write that must be refused: 412, or 409 (not applied by
// AWS's definition).
func (t *trial) refusedWrite(what string, err error) {
	t.fact("answer", answer(err))
	switch {
	case err == nil:
		t.failf("%s answered 200: the condition is ignored", what)
	case refused(err):
		if errors.Is(err, store.ErrConflict) {
			t.detail("%s answered 409 ConditionalRequestConflict (accepted: not applied)", what)
		}
	default:
		t.unexpected(what, err, "412 or 409")
	}
}

func probeA1(ctx context.Context, t *trial) {
	k := t.key("existing")
	orig := body("a1 original")
	e, err := t.s.Put(ctx, k, orig)
	if err != nil {
		t.errorOn(err, "plain PUT: %s", answer(err))
		return
	}
	_, err = t.s.PutIfAbsent(ctx, k, body("a1 create"))
	t.refusedWrite("PUT If-None-Match: * on an existing key", err)
	t.intact(ctx, k, orig, e)
	if !t.bad() {
		t.observe("PUT If-None-Match: * on an existing key -> %s; original content intact", answer(err))
	}
}

func probeA2(ctx context.Context, t *trial) {
	k := t.key("stale")
	e1, err := t.s.Put(ctx, k, body("a2 v1"))
	if err != nil {
		t.errorOn(err, "PUT v1: %s", answer(err))
		return
	}
	v2 := body("a2 v2")
	e2, err := t.s.Put(ctx, k, v2)
	if err != nil {
		t.errorOn(err, "PUT v2: %s", answer(err))
		return
	}
	if e1 == e2 {
		t.failf("two different bodies got the same ETag %s: If-Match cannot tell them apart", e1)
		return
	}
	_, err = t.s.PutIfMatch(ctx, k, body("a2 v3"), e1)
	t.refusedWrite("PUT If-Match: <stale E1>", err)
	t.intact(ctx, k, v2, e2)
	if !t.bad() {
		t.observe("PUT If-Match: E1 after v2 -> %s; GET returns v2", answer(err))
	}
}

func probeA3(ctx context.Context, t *trial) {
	k := t.key("bogus")
	v1 := body("a3 v1")
	e1, err := t.s.Put(ctx, k, v1)
	if err != nil {
		t.errorOn(err, "PUT v1: %s", answer(err))
		return
	}
	bogus := "00000000000000000000000000000000"
	if e1 == bogus {
		bogus = "11111111111111111111111111111111"
	}
	_, err = t.s.PutIfMatch(ctx, k, body("a3 v2"), bogus)
	t.refusedWrite(`PUT If-Match: "`+bogus+`"`, err)
	t.intact(ctx, k, v1, e1)
	if !t.bad() {
		t.observe(`PUT If-Match: "%s" -> %s; content intact`, bogus, answer(err))
	}
}

func probeA4(ctx context.Context, t *trial) {
	k := t.key("fresh")
	b := body("a4")
	e, err := t.s.PutIfAbsent(ctx, k, b)
	t.fact("answer", answer(err))
	if err != nil {
		t.unexpected("PUT If-None-Match: * on a fresh key", err, "200")
		return
	}
	if e == "" {
		t.failf("PUT If-None-Match: * on a fresh key answered 200 without an ETag")
		return
	}
	t.intact(ctx, k, b, e)
	if !t.bad() {
		t.observe("PUT If-None-Match: * on a fresh key -> 200; GET returns the body with ETag %s", e)
	}
}

func probeA5(ctx context.Context, t *trial) {
	k := t.key("missing")
	_, err := t.s.PutIfMatch(ctx, k, body("a5"), "6f5902ac237024bdd0c176cb93063dc4")
	t.fact("answer", answer(err))
	switch {
	case err == nil:
		t.fact("status", "200")
		t.failf("PUT If-Match on a missing key answered 200: the object was created")
	case errors.Is(err, store.ErrNotFound):
		t.fact("status", "404")
	case errors.Is(err, store.ErrPreconditionFailed):
		t.fact("status", "412")
	case errors.Is(err, store.ErrConflict):
		t.fact("status", "409")
		t.detail("409 is neither of the documented answers (404, 412), but it refuses the write")
	default:
		t.unexpected("PUT If-Match on a missing key", err, "404 or 412")
	}
	if _, gerr := t.s.Get(ctx, k); gerr == nil {
		t.failf("the key exists after PUT If-Match on a missing key (answered %s)", answer(err))
	} else if !errors.Is(gerr, store.ErrNotFound) {
		t.errorOn(gerr, "GET afterwards: %s", answer(gerr))
	}
	if !t.bad() {
		like := map[string]string{"404": " (as AWS)", "412": " (as R2, Ceph, SeaweedFS, gofakes3, Ozone)"}[t.facts["status"]]
		t.observe("PUT If-Match on a missing key -> %s%s; no object created", answer(err), like)
	}
}

func probeA6(ctx context.Context, t *trial) {
	k := t.key("current")
	e1, err := t.s.Put(ctx, k, body("a6 v1"))
	if err != nil {
		t.errorOn(err, "PUT v1: %s", answer(err))
		return
	}
	v2 := body("a6 v2")
	e2, err := t.s.PutIfMatch(ctx, k, v2, e1)
	if err != nil {
		t.unexpected("PUT If-Match: <current ETag>", err, "200")
		return
	}
	if e2 == e1 {
		t.failf("the new ETag equals the previous one (%s) although the body differs", e1)
	}
	o, err := t.s.Get(ctx, k)
	if err != nil {
		t.errorOn(err, "GET: %s", answer(err))
		return
	}
	if o.ETag != e2 || !bytes.Equal(o.Body, v2) {
		t.failf("GET shows ETag %s and body %.100q, want the new ETag %s and %.100q", o.ETag, o.Body, e2, v2)
	}
	es, err := t.s.List(ctx, k)
	if err != nil {
		t.errorOn(err, "LIST: %s", answer(err))
		return
	}
	i := slices.IndexFunc(es, func(e store.Entry) bool { return e.Key == k })
	switch {
	case i < 0:
		t.failf("LIST does not show the key")
	case es[i].ETag != e2:
		t.failf("LIST shows ETag %s, want the new ETag %s", es[i].ETag, e2)
	}
	if !t.bad() {
		t.observe("PUT If-Match: <current> -> 200 with a new ETag (%s -> %s); GET and LIST show it", e1, e2)
	}
}
