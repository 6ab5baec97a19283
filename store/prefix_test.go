package store_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

func TestValidatePrefix(t *testing.T) {
	for _, p := range []string{"a/", "fencebench/20261130T154500Z-3f9a1c/", "t/x y/z-1.2_3/", "é/"} {
		if err := store.ValidatePrefix(p); err != nil {
			t.Errorf("%q: %v", p, err)
		}
	}
	for _, p := range []string{"", "../", "a//", ".", "..", "./", "a/./", "a/../b/", "a/..", "/a/", "a", "a/b",
		`a\b/`, "a\x00/", "a\nb/", "a\x7f/", "a/.fencebench-claim/", "\xff/", strings.Repeat("a/", 300)} {
		err := store.ValidatePrefix(p)
		if !errors.Is(err, store.ErrBadPrefix) {
			t.Errorf("%q: got %v, want a refusal", p, err)
		}
	}
}

// claim claims prefix on s for runID, failing the test on any error.
func claim(t *testing.T, s store.Store, prefix, runID string) *store.Claim {
	t.Helper()
	c, err := store.ClaimPrefix(context.Background(), s, prefix, store.NewOwner(runID))
	if err != nil {
		t.Fatalf("claim %s: %v", prefix, err)
	}
	return c
}

// refused checks err is a prefix-in-use refusal that names the marker key.
func refused(t *testing.T, err error, marker string) {
	t.Helper()
	if !errors.Is(err, store.ErrPrefixInUse) || !strings.Contains(err.Error(), marker) {
		t.Fatalf("got %v, want a refusal naming %s", err, marker)
	}
}

func TestClaimSamePrefixTwice(t *testing.T) {
	s := testenv.Store(t, store.ClientMinio, nil)
	p := testenv.Prefix(t)
	first := claim(t, s, p, "first")
	_, err := store.ClaimPrefix(context.Background(), s, p, store.NewOwner("second"))
	refused(t, err, first.Marker)
	if !strings.Contains(err.Error(), `run "first"`) {
		t.Fatalf("the refusal should name the run holding the prefix: %v", err)
	}
	if got := testenv.Keys(t, s, p); !slices.Equal(got, []string{store.MarkerName}) {
		t.Fatalf("the prefix holds %v, want only the first run's marker", got)
	}
	o, err := s.Get(context.Background(), first.Marker)
	if err != nil || !strings.Contains(string(o.Body), first.Owner.Nonce) {
		t.Fatalf("the first run's marker was replaced: %q, %v", o.Body, err)
	}
}

// TestClaimNested: a child of a claimed prefix is refused, and so is a parent of one; the
// refused claim leaves nothing behind.
func TestClaimNested(t *testing.T) {
	s := testenv.Store(t, store.ClientMinio, nil)
	base := testenv.Prefix(t)
	parent := claim(t, s, base+"nest/", "parent")
	_, err := store.ClaimPrefix(context.Background(), s, base+"nest/b/c/", store.NewOwner("child"))
	refused(t, err, parent.Marker)
	if got := testenv.Keys(t, s, base+"nest/b/"); len(got) != 0 {
		t.Fatalf("the refused child left %v", got)
	}

	child := claim(t, s, base+"par/c/", "child")
	_, err = store.ClaimPrefix(context.Background(), s, base+"par/", store.NewOwner("parent"))
	refused(t, err, child.Marker)
	if got := testenv.Keys(t, s, base+"par/"); !slices.Equal(got, []string{"c/" + store.MarkerName}) {
		t.Fatalf("the refused parent left %v", got)
	}

	if _, err := s.Put(context.Background(), base+"busy/theirs", []byte("x")); err != nil {
		t.Fatal(err)
	}
	_, err = store.ClaimPrefix(context.Background(), s, base+"busy/", store.NewOwner("late"))
	refused(t, err, "busy/theirs")
	if got := testenv.Keys(t, s, base+"busy/"); !slices.Equal(got, []string{"theirs"}) {
		t.Fatalf("the refused claim left %v", got)
	}
}

// TestClaimRace: claims racing on the same, parent and child prefixes never both succeed;
// claims on siblings all do.
func TestClaimRace(t *testing.T) {
	s := testenv.Store(t, store.ClientMinio, nil)
	for round := range 8 {
		base := testenv.Prefix(t)
		chain := []string{base + "r/", base + "r/", base + "r/a/", base + "r/a/b/", base + "r/a/"}
		siblings := []string{base + "s/x/", base + "s/y/", base + "s/z/"}
		all := append(slices.Clone(chain), siblings...)
		errs := make([]error, len(all))
		var wg sync.WaitGroup
		for i, p := range all {
			wg.Go(func() {
				_, errs[i] = store.ClaimPrefix(context.Background(), s, p, store.NewOwner(fmt.Sprintf("run%d", i)))
			})
		}
		wg.Wait()
		won := 0
		for i := range chain {
			switch {
			case errs[i] == nil:
				won++
			case !errors.Is(errs[i], store.ErrPrefixInUse):
				t.Fatalf("round %d: %s: %v", round, chain[i], errs[i])
			}
		}
		if won > 1 {
			t.Fatalf("round %d: %d overlapping claims succeeded: %v", round, won, errs[:len(chain)])
		}
		for i := len(chain); i < len(all); i++ {
			if errs[i] != nil {
				t.Fatalf("round %d: sibling %s refused: %v", round, all[i], errs[i])
			}
		}
	}
}

// TestReleaseLeavesOthersClaims: cleanup deletes the run's objects, never those under a
// sub-prefix another run claimed, and the run's own marker last.
func TestReleaseLeavesOthersClaims(t *testing.T) {
	m := store.NewMem()
	var mu sync.Mutex
	var ops []string
	m.Hook = func(_ context.Context, op, key string) error {
		if strings.HasPrefix(op, "delete") {
			mu.Lock()
			ops = append(ops, op+" "+key)
			mu.Unlock()
		}
		return nil
	}
	ctx := context.Background()
	c := claim(t, m, "p/", "mine")
	for _, k := range []string{"p/obj", "p/sub/x", "p/other/" + store.MarkerName, "p/other/data", "p/otherwise", "q/outside"} {
		if _, err := m.Put(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	n, err := c.Release(ctx)
	if err != nil || n != 4 {
		t.Fatalf("release: deleted %d, %v; want 4 (three objects and the marker)", n, err)
	}
	if got := testenv.Keys(t, m, ""); !slices.Equal(got, []string{"p/other/" + store.MarkerName, "p/other/data", "q/outside"}) {
		t.Fatalf("after release the store holds %v", got)
	}
	if len(ops) == 0 || ops[len(ops)-1] != "delete "+c.Marker {
		t.Fatalf("the marker must be deleted last: %v", ops)
	}
}

// TestClaimRefusalKeepsOthersMarker: a refused claim on an ancestor deletes only its own
// marker, and a failing store leaves no marker behind either.
func TestClaimRefusalKeepsOthersMarker(t *testing.T) {
	m := store.NewMem()
	ctx := context.Background()
	claim(t, m, "a/b/", "child")
	if _, err := store.ClaimPrefix(ctx, m, "a/", store.NewOwner("parent")); !errors.Is(err, store.ErrPrefixInUse) {
		t.Fatalf("got %v", err)
	}
	m.Hook = func(_ context.Context, op, key string) error {
		if op == "list" {
			return &store.Error{Op: op, Key: key, Kind: store.ErrAmbiguous}
		}
		return nil
	}
	if _, err := store.ClaimPrefix(ctx, m, "c/", store.NewOwner("unlucky")); err == nil || errors.Is(err, store.ErrPrefixInUse) {
		t.Fatalf("a failing listing: got %v, want an error that is not a refusal", err)
	}
	m.Hook = nil
	if got := testenv.Keys(t, m, ""); !slices.Equal(got, []string{"a/b/" + store.MarkerName}) {
		t.Fatalf("the store holds %v, want only the child's marker", got)
	}
}
