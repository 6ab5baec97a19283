// Package storetest is the contract every store.Store must meet: the conditional-write
// semantics fencing depends on. The same suite runs against both SDK adapters on a real MinIO
// and against the in-memory store, which is what licenses using the in-memory store for fast
// protocol traces.
package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/store"
)

// Factory returns a store and a key prefix that is empty and private to the calling test.
type Factory func(t *testing.T) (s store.Store, prefix string)

// Run runs the whole contract suite.
func Run(t *testing.T, newStore Factory) {
	t.Run("GetPutRoundTrip", func(t *testing.T) { testRoundTrip(t, newStore) })
	t.Run("CreateIfAbsentRace", func(t *testing.T) { testCreateRace(t, newStore) })
	t.Run("IfMatch", func(t *testing.T) { testIfMatch(t, newStore) })
	t.Run("IdenticalBodyIdenticalETag", func(t *testing.T) { testABA(t, newStore) })
	t.Run("ListOrderAndPagination", func(t *testing.T) { testList(t, newStore) })
	t.Run("DeleteMany", func(t *testing.T) { testDeleteMany(t, newStore) })
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return c
}

func wantKind(t *testing.T, what string, err, kind error) {
	t.Helper()
	if !errors.Is(err, kind) {
		t.Fatalf("%s: got error %v, want %v", what, err, kind)
	}
}

func testRoundTrip(t *testing.T, newStore Factory) {
	s, p := newStore(t)
	c := ctx(t)
	_, err := s.Get(c, p+"missing")
	wantKind(t, "get missing key", err, store.ErrNotFound)
	etag, err := s.Put(c, p+"k", []byte("hello"))
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	o, err := s.Get(c, p+"k")
	if err != nil {
		t.Fatalf("get: %v", err)
	}
	if string(o.Body) != "hello" || o.ETag != etag {
		t.Fatalf("get: got (%q, %q), want (%q, %q)", o.Body, o.ETag, "hello", etag)
	}
	if err := s.Delete(c, p+"k"); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if err := s.Delete(c, p+"k"); err != nil {
		t.Fatalf("delete of a missing key must succeed, got %v", err)
	}
	_, err = s.Get(c, p+"k")
	wantKind(t, "get deleted key", err, store.ErrNotFound)
}

// testCreateRace: 16 goroutines race If-None-Match: * on a fresh key, 20 rounds. Exactly one
// wins each round, every loser gets precondition failed, and the stored body is the winner's.
func testCreateRace(t *testing.T, newStore Factory) {
	s, p := newStore(t)
	c := ctx(t)
	const racers, rounds = 16, 20
	for r := 0; r < rounds; r++ {
		key := fmt.Sprintf("%srace-%02d", p, r)
		var wg sync.WaitGroup
		errs := make([]error, racers)
		etags := make([]string, racers)
		start := make(chan struct{})
		for i := 0; i < racers; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				etags[i], errs[i] = s.PutIfAbsent(c, key, []byte(fmt.Sprintf("round %d racer %d", r, i)))
			}()
		}
		close(start)
		wg.Wait()
		winner := -1
		for i, err := range errs {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: racers %d and %d both created %s", r, winner, i, key)
				}
				winner = i
			case errors.Is(err, store.ErrPreconditionFailed):
			default:
				t.Fatalf("round %d: racer %d: got %v, want precondition failed", r, i, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: nobody created %s", r, key)
		}
		o, err := s.Get(c, key)
		if err != nil {
			t.Fatalf("round %d: get: %v", r, err)
		}
		if want := fmt.Sprintf("round %d racer %d", r, winner); string(o.Body) != want || o.ETag != etags[winner] {
			t.Fatalf("round %d: stored (%q, %s), want the winner's (%q, %s)", r, o.Body, o.ETag, want, etags[winner])
		}
	}
}

func testIfMatch(t *testing.T, newStore Factory) {
	s, p := newStore(t)
	c := ctx(t)
	k := p + "cas"
	e1, err := s.PutIfAbsent(c, k, []byte("v1"))
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	_, err = s.PutIfAbsent(c, k, []byte("v1-again"))
	wantKind(t, "create on an existing key", err, store.ErrPreconditionFailed)
	e2, err := s.PutIfMatch(c, k, []byte("v2"), e1)
	if err != nil {
		t.Fatalf("If-Match with the current ETag: %v", err)
	}
	if e2 == e1 {
		t.Fatalf("a different body must get a new ETag, got %s twice", e1)
	}
	_, err = s.PutIfMatch(c, k, []byte("v3"), e1)
	wantKind(t, "If-Match with a stale ETag", err, store.ErrPreconditionFailed)
	o, err := s.Get(c, k)
	if err != nil || string(o.Body) != "v2" || o.ETag != e2 {
		t.Fatalf("after the refused write: got (%q, %q, %v), want (v2, %s)", o.Body, o.ETag, err, e2)
	}
	// The ETag from a listing is the same token.
	l, err := s.List(c, k)
	if err != nil || len(l) != 1 || l[0].ETag != e2 {
		t.Fatalf("list: got %+v, %v; want one entry with ETag %s", l, err, e2)
	}
	// If-Match on a key that was deleted: MinIO and AWS answer 404 NoSuchKey. That is what a
	// zombie sees after a successor swept its fence object.
	if err := s.Delete(c, k); err != nil {
		t.Fatalf("delete: %v", err)
	}
	_, err = s.PutIfMatch(c, k, []byte("v4"), e2)
	wantKind(t, "If-Match on a deleted key", err, store.ErrNotFound)
	if _, err := s.Get(c, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a refused If-Match must not create the key, get: %v", err)
	}
}

// testABA documents the hazard the protocol's seq field exists for: the ETag is a content
// hash, so rewriting identical bytes brings back an old token, and a holder of that old token
// passes If-Match again.
func testABA(t *testing.T, newStore Factory) {
	s, p := newStore(t)
	c := ctx(t)
	k := p + "aba"
	ex, err := s.Put(c, k, []byte("X"))
	if err != nil {
		t.Fatal(err)
	}
	ey, err := s.Put(c, k, []byte("Y"))
	if err != nil {
		t.Fatal(err)
	}
	ex2, err := s.Put(c, k, []byte("X"))
	if err != nil {
		t.Fatal(err)
	}
	if ex2 != ex || ey == ex {
		t.Fatalf("ETags X=%s Y=%s X again=%s: want X again == X != Y (content-hash ETags)", ex, ey, ex2)
	}
	if _, err := s.PutIfMatch(c, k, []byte("Z"), ex); err != nil {
		t.Fatalf("ABA: the holder of the first X token should pass If-Match once X is back, got %v", err)
	}
}

func testList(t *testing.T, newStore Factory) {
	s, p := newStore(t)
	c := ctx(t)
	const n = 1100 // more than one 1000-key page
	keys := make([]string, 0, n)
	for i := n - 1; i >= 0; i-- {
		keys = append(keys, fmt.Sprintf("%sfence__%019d", p, 9223372036854775807-int64(i)))
	}
	// Write in parallel: n sequential round trips would dominate the suite's time.
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	errs := make(chan error, n)
	for _, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			if _, err := s.Put(c, k, []byte(k)); err != nil {
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatalf("put: %v", err)
	}
	// A sibling prefix must not leak into the listing.
	if _, err := s.Put(c, p+"other", []byte("x")); err != nil {
		t.Fatal(err)
	}
	got, err := s.List(c, p+"fence__")
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(got) != n {
		t.Fatalf("list: got %d entries, want %d (pagination)", len(got), n)
	}
	sort.Strings(keys)
	for i := range got {
		if got[i].Key != keys[i] {
			t.Fatalf("list[%d] = %s, want %s (ascending byte order)", i, got[i].Key, keys[i])
		}
	}
	// Highest term first: the smallest inverted suffix is term n-1.
	if want := fmt.Sprintf("%sfence__%019d", p, 9223372036854775807-int64(n-1)); got[0].Key != want {
		t.Fatalf("first key %s, want the highest term %s", got[0].Key, want)
	}
	// DeleteMany across the page size.
	failed, err := s.DeleteMany(c, keys)
	if err != nil || len(failed) != 0 {
		t.Fatalf("delete-many of %d keys: failed=%v err=%v", n, failed, err)
	}
	got, err = s.List(c, p+"fence__")
	if err != nil || len(got) != 0 {
		t.Fatalf("after delete-many: %d entries left, err %v", len(got), err)
	}
}

func testDeleteMany(t *testing.T, newStore Factory) {
	s, p := newStore(t)
	c := ctx(t)
	for _, k := range []string{"a", "b", "c"} {
		if _, err := s.Put(c, p+k, bytes.Repeat([]byte(k), 3)); err != nil {
			t.Fatal(err)
		}
	}
	failed, err := s.DeleteMany(c, []string{p + "a", p + "missing", p + "c"})
	if err != nil || len(failed) != 0 {
		t.Fatalf("delete-many including a missing key: failed=%v err=%v; S3 treats a missing key as deleted", failed, err)
	}
	l, err := s.List(c, p)
	if err != nil || len(l) != 1 || l[0].Key != p+"b" {
		t.Fatalf("after delete-many: %+v %v, want only %sb", l, err, p)
	}
	if failed, err := s.DeleteMany(c, nil); err != nil || len(failed) != 0 {
		t.Fatalf("delete-many of nothing: %v %v", failed, err)
	}
}
