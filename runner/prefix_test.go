package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
)

// quick is a one-writer scenario with light traffic: a cell of about d.
func quick(t *testing.T, name, d string) *scenarios.Scenario {
	t.Helper()
	s, err := scenarios.Parse(name+".yaml", []byte(fmt.Sprintf(
		"name: %s\nduration: %s\nwriters:\n  - {id: a, role: primary, term: 1}\ntraffic: {clients: 2, rate: 100/s}\n", name, d)),
		scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type runEnd struct {
	sum *outcome.Summary
	err error
}

// startRun runs sc under prefix with cleanup on the shared MinIO, in the background.
func startRun(t *testing.T, sc *scenarios.Scenario, prefix string) <-chan runEnd {
	t.Helper()
	env, out := env.Local{Local: testenv.MinIO(t)}, t.TempDir()
	ch := make(chan runEnd, 1)
	go func() {
		sum, err := Run(context.Background(), []*scenarios.Scenario{sc}, Options{Out: out, Env: env, Prefix: prefix, Cleanup: true})
		ch <- runEnd{sum, err}
	}()
	return ch
}

// waitForClaim waits until the run on prefix has written an object besides its marker: its
// claim is complete (it wrote nothing before its sub-prefix check passed), not merely begun.
func waitForClaim(t *testing.T, st store.Store, prefix string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		for _, k := range testenv.Keys(t, st, prefix) {
			if k != store.MarkerName {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the run on %s never wrote past its marker", prefix)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func passed(t *testing.T, o runEnd, what string) {
	t.Helper()
	if o.err != nil {
		t.Fatalf("%s: %v", what, o.err)
	}
	for _, c := range o.sum.Cells {
		if c.Verdict != checker.Pass {
			t.Fatalf("%s: cell %s %s: %s %v", what, c.ID, c.Verdict, c.Error, c.Result.Reasons)
		}
	}
}

// TestNestedRunsConcurrently: while a run owns nest/, a run on nest/b/ is refused before it
// writes anything, and the first run passes without a false alarm and cleans up only its
// own objects; the same holds with the child started first. Runs on sibling prefixes both
// pass.
func TestNestedRunsConcurrently(t *testing.T) {
	// Not parallel, and the second run starts only once the first has written past its marker:
	// a marker alone is a claim begun, and a second run whose marker lands before the first run's
	// sub-prefix check makes both refuse (which the claim allows but this test does not expect).
	st := testenv.Store(t, store.ClientMinio, nil)
	base := testenv.Prefix(t)
	if _, err := st.Put(context.Background(), base+"neighbour", []byte("untouched")); err != nil {
		t.Fatal(err)
	}
	// The first run lasts long enough for the second to start and be refused on a loaded machine
	// (a 2s run ended, and released its marker, before a starved second run claimed).
	sc := quick(t, "nested", "6s")
	for _, tc := range []struct{ name, first, second string }{
		{"parent-first", base + "nest/", base + "nest/b/"},
		{"child-first", base + "par/c/", base + "par/"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			first := startRun(t, sc, tc.first)
			waitForClaim(t, st, tc.first)
			second := <-startRun(t, sc, tc.second)
			if second.err == nil || !errors.Is(second.err, store.ErrPrefixInUse) ||
				!strings.Contains(second.err.Error(), tc.first+store.MarkerName) {
				t.Fatalf("the second run must be refused naming the first run's marker, got %v", second.err)
			}
			if _, err := st.Get(context.Background(), tc.first+store.MarkerName); err != nil {
				o := <-first
				t.Fatalf("the first run's marker is gone while it runs: %v (first run: %v %+v)", err, o.err, o.sum)
			}
			// The refused run left nothing: what is under its prefix is the first run's.
			for _, k := range testenv.Keys(t, st, tc.second) {
				if !strings.HasPrefix(tc.second+k, tc.first) {
					o := <-first
					t.Fatalf("the refused run left %s (first run: %v %+v)", k, o.err, o.sum)
				}
			}
			passed(t, <-first, "the first run")
		})
	}
	if got := testenv.Keys(t, st, base); !slices.Equal(got, []string{"neighbour"}) {
		t.Fatalf("after the runs the test prefix holds %v, want only the neighbour", got)
	}

	a, b := startRun(t, sc, base+"sib/a/"), startRun(t, sc, base+"sib/b/")
	passed(t, <-a, "sibling a")
	passed(t, <-b, "sibling b")
	if got := testenv.Keys(t, st, base); !slices.Equal(got, []string{"neighbour"}) {
		t.Fatalf("after the sibling runs the test prefix holds %v", got)
	}
}

// TestBadRunIDsAndPrefixes: a run id that is not one safe path component and a prefix that
// is not a plain key path are refused as bad input before anything is written.
func TestBadRunIDsAndPrefixes(t *testing.T) {
	env := env.Local{Local: testenv.MinIO(t)}
	sc := quick(t, "never", "300ms")
	out := filepath.Join(t.TempDir(), "results")
	ok := testenv.Prefix(t)
	for _, id := range []string{"..", ".", "../x", "a/b", `a\b`, "x\n", "a b", "/abs", strings.Repeat("x", 129)} {
		_, err := Run(context.Background(), []*scenarios.Scenario{sc}, Options{Out: out, RunID: id, Env: env, Prefix: ok})
		if !errors.Is(err, outcome.ErrBadInput) || !strings.Contains(err.Error(), "run id") {
			t.Errorf("run id %q: got %v, want bad input", id, err)
		}
	}
	for _, p := range []string{"../", "a//", ".", "..", "./", "a/./b/", "a/../", "/abs/", "noslash", `a\b/`, "a\x01/"} {
		_, err := Run(context.Background(), []*scenarios.Scenario{sc}, Options{Out: out, RunID: "r", Env: env, Prefix: p})
		if !errors.Is(err, outcome.ErrBadInput) || !errors.Is(err, store.ErrBadPrefix) {
			t.Errorf("prefix %q: got %v, want bad input", p, err)
		}
	}
	if _, err := os.Stat(out); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a refused run created %s (%v)", out, err)
	}
	if got := testenv.Keys(t, testenv.Store(t, store.ClientMinio, nil), ok); len(got) != 0 {
		t.Fatalf("refused runs wrote %v", got)
	}
}

func TestNewRunID(t *testing.T) {
	at := time.Date(2026, 11, 30, 15, 45, 0, 0, time.UTC)
	seen := map[string]bool{}
	for range 20 {
		id := NewRunID(at)
		if !strings.HasPrefix(id, "20261130T154500Z-") || ValidateRunID(id) != nil || seen[id] {
			t.Fatalf("run id %q (seen %v)", id, seen[id])
		}
		seen[id] = true
	}
	if a, b := NewRunID(at), NewRunID(at.Add(time.Second)); a >= b {
		t.Fatalf("run ids must sort by time: %s >= %s", a, b)
	}
}
