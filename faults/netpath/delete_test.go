package netpath_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

// putAll writes each key directly (not through a path).
func putAll(t *testing.T, d store.Store, keys ...string) {
	t.Helper()
	for _, k := range keys {
		if _, err := d.Put(context.Background(), k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
}

// present reports which of keys exist in the store.
func present(t *testing.T, d store.Store, keys ...string) []string {
	t.Helper()
	var out []string
	for _, k := range keys {
		_, err := d.Get(context.Background(), k)
		switch {
		case err == nil:
			out = append(out, k)
		case !errors.Is(err, store.ErrNotFound):
			t.Fatalf("get %s: %v", k, err)
		}
	}
	return out
}

// deletes returns the DeleteObjects entries of a ledger.
func deletes(l []history.LedgerEntry) []history.LedgerEntry {
	var out []history.LedgerEntry
	for _, e := range l {
		if e.Method == "POST" && e.Key == "" {
			out = append(out, e)
		}
	}
	return out
}

// checkKeyError asserts that failed is exactly one per-key InternalError for key.
func checkKeyError(t *testing.T, failed []store.KeyError, key string) {
	t.Helper()
	if len(failed) != 1 || failed[0].Key != key {
		t.Fatalf("want exactly one per-key failure for %s, got %v", key, failed)
	}
	var se *store.Error
	if !errors.As(failed[0].Err, &se) || se.Code != "InternalError" || !errors.Is(failed[0].Err, store.ErrAmbiguous) {
		t.Fatalf("the per-key failure must be a store error with code InternalError: %#v", failed[0].Err)
	}
}

// A DeleteObjects batch answered 200 with a per-key failure, as S3 reports it: the other keys
// are deleted, the failed one stays, and the client learns which one failed.
func TestFailDeleteKeys(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			d := direct(t, c)
			pre := testenv.Prefix(t)
			keys := []string{pre + "data-1", pre + "fence__5", pre + "data-2"}
			putAll(t, d, keys...)
			mustAdd(t, p, faults.Rule{Name: "sweep", Method: "POST", Key: "*fence__*", Count: 1,
				Action: faults.FailDeleteKeys})

			failed, err := s.DeleteMany(ctx, keys)
			if err != nil {
				t.Fatalf("a partial failure is not a failure of the call: %v", err)
			}
			checkKeyError(t, failed, pre+"fence__5")
			if got := present(t, d, keys...); !slices.Equal(got, []string{pre + "fence__5"}) {
				t.Fatalf("left in the store: %v, want only the failed key", got)
			}
			got := byRule(b.Ledger(), "sweep")
			if len(got) != 1 || p.Fired("sweep") != 1 {
				t.Fatalf("want one firing: %d entries, fired %d", len(got), p.Fired("sweep"))
			}
			e := got[0]
			if !slices.Equal(e.Keys, keys) || e.Action != "fail-delete-keys" || !e.Forwarded || e.Status != 200 ||
				!e.Delivered || e.Err != "" {
				t.Fatalf("ledger entry: %+v", e)
			}

			// The rule is spent: the same sweep now goes through untouched.
			failed, err = s.DeleteMany(ctx, []string{pre + "fence__5"})
			if err != nil || len(failed) != 0 {
				t.Fatalf("after the rule is spent: %v %v", failed, err)
			}
			if got := present(t, d, keys...); len(got) != 0 {
				t.Fatalf("left in the store: %v", got)
			}
			all := deletes(b.Ledger())
			if len(all) != 2 || all[1].Rule != "" || !slices.Equal(all[1].Keys, []string{pre + "fence__5"}) {
				t.Fatalf("every DeleteObjects must be in the ledger with its keys: %+v", all)
			}
		})
	}
}

// Nth and Count count batches that name a matching key; a batch naming none is untouched and
// not counted.
func TestFailDeleteKeysNthCount(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			d := direct(t, c)
			pre := testenv.Prefix(t)
			mustAdd(t, p, faults.Rule{Name: "second", Method: "POST", Key: "*fence__*", Nth: 2, Count: 1,
				Action: faults.FailDeleteKeys})
			round := func(i int, withFence bool) []store.KeyError {
				t.Helper()
				keys := []string{pre + "x" + string(rune('a'+i)), pre + "y" + string(rune('a'+i))}
				if withFence {
					keys = append(keys, pre+"fence__"+string(rune('a'+i)))
				}
				putAll(t, d, keys...)
				failed, err := s.DeleteMany(ctx, keys)
				if err != nil {
					t.Fatalf("round %d: %v", i, err)
				}
				return failed
			}
			if f := round(0, false); len(f) != 0 {
				t.Fatalf("a batch naming no matching key must be untouched: %v", f)
			}
			if f := round(1, true); len(f) != 0 {
				t.Fatalf("first matching batch (before Nth): %v", f)
			}
			checkKeyError(t, round(2, true), pre+"fence__c")
			if f := round(3, true); len(f) != 0 {
				t.Fatalf("after Count: %v", f)
			}
			if p.Fired("second") != 1 {
				t.Fatalf("fired %d, want 1", p.Fired("second"))
			}
			if got := present(t, d, pre+"fence__b", pre+"fence__c", pre+"fence__d"); !slices.Equal(got, []string{pre + "fence__c"}) {
				t.Fatalf("left in the store: %v", got)
			}
			all := deletes(b.Ledger())
			if len(all) != 4 || all[2].Rule != "second" || all[0].Rule != "" || all[1].Rule != "" || all[3].Rule != "" ||
				len(all[0].Keys) != 2 || len(all[2].Keys) != 3 {
				t.Fatalf("ledger: %+v", all)
			}
		})
	}
}

// When every key of the batch would fail, the proxy answers the DeleteResult itself and the
// store never sees the request.
func TestFailDeleteKeysWholeBatch(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			d := direct(t, c)
			pre := testenv.Prefix(t)
			keys := []string{pre + "fence__5", pre + "fence__4"}
			putAll(t, d, keys...)
			mustAdd(t, p, faults.Rule{Name: "all", Key: pre + "*", Count: 1, Action: faults.FailDeleteKeys})
			failed, err := s.DeleteMany(ctx, keys)
			// The minio-go adapter reports a batch in which every key failed as a failure of the
			// call (err is the first key's error); the aws-sdk adapter returns the per-key list.
			if err != nil && (len(failed) == 0 || !errors.Is(err, failed[0].Err)) {
				t.Fatalf("call error %v with per-key failures %v", err, failed)
			}
			if len(failed) != 2 {
				t.Fatalf("want both keys failed, got %v", failed)
			}
			for i, k := range keys {
				checkKeyError(t, failed[i:i+1], k)
			}
			if got := present(t, d, keys...); !slices.Equal(got, keys) {
				t.Fatalf("left in the store: %v, want both", got)
			}
			got := byRule(b.Ledger(), "all")
			if len(got) != 1 || got[0].Forwarded || !got[0].Delivered || !slices.Equal(got[0].Keys, keys) {
				t.Fatalf("ledger: %+v", got)
			}
			if p.Fired("all") != 1 {
				t.Fatalf("fired %d", p.Fired("all"))
			}
		})
	}
}
