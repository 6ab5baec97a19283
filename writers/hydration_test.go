package writers

import (
	"errors"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// hydrateDuringPublishes relocates a to t with Prehydrate: t lists a's third reference set,
// and while its fetch of the oldest file it lists is held, a publishes publishes more sets
// and collects. It returns how many of t's fetches found a listed file missing.
func hydrateDuringPublishes(t *testing.T, variant fence.Variant, publishes int) int {
	t.Helper()
	rg := memRig(t, func(c *Config) { c.Variant = variant })
	hold := newHold(rg.st, func(op, key string) bool { return op == "get" && strings.HasSuffix(key, "_0.seg") })
	a, tg := rg.add("a", nil), rg.add("t", hold)
	rg.promote(a, 3)
	for range 3 {
		if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
			t.Fatalf("refresh: %v %v", ok, err)
		}
	}
	hold.arm()
	done := make(chan error, 1)
	go func() { _, err := a.Relocate(ctx(t), tg, RelocateOptions{Prehydrate: true}); done <- err }()
	hold.waitHit(t)
	for range publishes {
		if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
			t.Fatalf("refresh during the hydration: %v %v", ok, err)
		}
	}
	if _, err := a.GC(ctx(t)); err != nil {
		t.Fatal(err)
	}
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	missing := 0
	for _, e := range rg.events(history.Hydrate, "t") {
		if e.Outcome == history.Fail && e.Status == 404 {
			missing++
		}
	}
	return missing
}

// TestEqualTermHydrationBound: a same-term relocation target hydrating while its source
// publishes is protected by the source's retention alone (Retain = 2 reference sets): one
// publish during the hydration is safe, two delete a file the target listed even with the
// correct protocol (the known gap S23 documents), and a collection without retention loses
// one with a single publish.
func TestEqualTermHydrationBound(t *testing.T) {
	if n := hydrateDuringPublishes(t, fence.Correct, 1); n != 0 {
		t.Fatalf("one publish within retention: %d listed files missing; want none", n)
	}
	if n := hydrateDuringPublishes(t, fence.Correct, 2); n == 0 {
		t.Fatal("two publishes (= retention): no listed file missing; the bound says one must be")
	}
	if n := hydrateDuringPublishes(t, fence.NoRetention, 1); n == 0 {
		t.Fatal("no-retention, one publish: no listed file missing")
	}
}

// A hydration in which one segment fetch is refused (a 403) has not fetched the reference
// set, however many of its other fetches succeeded: the promotion fails with the store's
// error and the copy stays a standby.
func TestAHydrationWithOneRefusedFetchFails(t *testing.T) {
	rg := memRig(t, nil)
	a := rg.add("a", nil)
	rg.promote(a, 3)
	for range 3 {
		if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
			t.Fatalf("refresh: %v %v", ok, err)
		}
	}
	b := rg.add("b", newFailStore(rg.st, "get", func(key string) bool { return strings.HasSuffix(key, ".seg") }, 1, forbidden))
	err := b.Promote(ctx(t), 4)
	if !errors.Is(err, store.ErrConfig) || b.State() != StateStandby {
		t.Fatalf("promotion with a refused segment fetch: %v, b %s; want the store's error and a standby", err, b.State())
	}
	fetches := 0
	for _, e := range rg.events(history.Hydrate, "b") {
		if e.Key != "" && strings.HasSuffix(e.Key, ".seg") {
			fetches++
		}
	}
	if fetches < 2 {
		t.Fatalf("b fetched %d segment files; want a reference set of several, so that others succeeded", fetches)
	}
}

// A hydration starts over from the listing while a listed file is missing, up to five
// attempts: a file missing four times in a row still lets the fifth attempt hydrate.
func TestAHydrationHasFiveAttempts(t *testing.T) {
	rg := memRig(t, nil)
	a := rg.add("a", nil)
	rg.promote(a, 3)
	if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("refresh: %v %v", ok, err)
	}
	missing := &store.Error{Op: "get", Kind: store.ErrNotFound, Status: 404, Code: "NoSuchKey"}
	b := rg.add("b", newFailStore(rg.st, "get", func(key string) bool { return strings.HasSuffix(key, "_0.seg") }, 4, missing))
	if err := b.Promote(ctx(t), 4); err != nil || b.State() != StateActive {
		t.Fatalf("promotion whose hydration meets a missing file four times: %v, b %s; want b active", err, b.State())
	}
	failed := 0
	for _, e := range rg.events(history.Hydrate, "b") {
		if e.Outcome == history.Fail {
			failed++
		}
	}
	if failed != 4 {
		t.Fatalf("b's failed fetches %d; want the four of the file that was missing", failed)
	}
}

// A hydration whose read of the reference set itself is refused (a 403) has fetched nothing:
// the promotion fails with the store's error and the copy stays a standby, rather than
// serving as if the set named no file.
func TestAHydrationWhoseSetReadIsRefusedFails(t *testing.T) {
	rg := memRig(t, nil)
	a := rg.add("a", nil)
	rg.promote(a, 3)
	if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("refresh: %v %v", ok, err)
	}
	b := rg.add("b", newFailStore(rg.st, "get", func(key string) bool { return strings.Contains(key, "/segments/metadata/metadata__") }, 1, forbidden))
	err := b.Promote(ctx(t), 4)
	if !errors.Is(err, store.ErrConfig) || b.State() != StateStandby {
		t.Fatalf("promotion whose reference set read is refused: %v, b %s; want the store's error and a standby", err, b.State())
	}
}

// A reference set that does not decode is not hydrated from: the promotion fails and the
// copy stays a standby, rather than serving as if the set named no file.
func TestAHydrationOfAnUnreadableSetFails(t *testing.T) {
	rg := memRig(t, nil)
	a := rg.add("a", nil)
	rg.promote(a, 3)
	if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("refresh: %v %v", ok, err)
	}
	sets, err := rg.st.List(ctx(t), a.c.cfg.Shard.SegmentMetadataPrefix())
	if err != nil || len(sets) == 0 {
		t.Fatalf("the published sets: %v %v", sets, err)
	}
	for _, s := range sets {
		if _, err := rg.st.Put(ctx(t), s.Key, []byte("not a reference set\n")); err != nil {
			t.Fatal(err)
		}
	}
	b := rg.add("b", nil)
	if err := b.Promote(ctx(t), 4); err == nil || b.State() != StateStandby {
		t.Fatalf("promotion over an unreadable reference set: %v, b %s; want an error and a standby", err, b.State())
	}
}
