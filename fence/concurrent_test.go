package fence

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// claimUntilSettled claims until the outcome is not retryable: a retry re-runs the whole
// claim on the same instance, which is what the next sync would do.
func claimUntilSettled(ctx context.Context, f *Fence) error {
	var err error
	for range 50 {
		if err = f.Claim(ctx); !IsRetryable(err) {
			return err
		}
	}
	return err
}

// raceClaims starts every instance's claim at once and returns their settled outcomes.
func raceClaims(ctx context.Context, fs []*Fence) []error {
	errs := make([]error, len(fs))
	var start, done sync.WaitGroup
	start.Add(1)
	for i, f := range fs {
		done.Add(1)
		go func() {
			defer done.Done()
			start.Wait()
			errs[i] = claimUntilSettled(ctx, f)
		}()
	}
	start.Done()
	done.Wait()
	return errs
}

// Barrier-synchronized equal-term seals (in-place restores at one term): every contender
// either claims or is fenced, and at the end exactly one of them can ack.
func TestConcurrentEqualTermClaimants(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for n := 2; n <= 8; n++ {
				t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
					t.Parallel()
					w := newWorld(t, b)
					fs := make([]*Fence, n)
					for i := range fs {
						fs[i], _ = w.fence(fmt.Sprintf("c%d", i), 9, false, Correct)
					}
					claimed := 0
					for i, err := range raceClaims(w.ctx, fs) {
						switch {
						case err == nil:
							claimed++
						case IsFenced(err):
						default:
							t.Fatalf("claimant %d: %v, want claimed or fenced", i, err)
						}
					}
					if claimed == 0 {
						t.Fatal("nobody claimed")
					}
					// A claim that completed can still be arbitrated over by a later equal-term
					// seal; the next ack settles who owns the chain.
					owners := 0
					for i, f := range fs {
						if f.Fenced() {
							continue
						}
						switch err := f.Advance(w.ctx); {
						case err == nil:
							owners++
						case IsFenced(err):
						default:
							t.Fatalf("claimant %d acks: %v", i, err)
						}
					}
					if owners != 1 {
						t.Fatalf("%d owners after %d claims, want exactly 1", owners, claimed)
					}
					for i, f := range fs {
						if !f.Fenced() {
							mustOK(t, fmt.Sprintf("owner %d acks again", i), f.Advance(w.ctx))
						}
					}
				})
			}
		})
	}
}

// Claimants at distinct terms race: the highest term always ends as the only owner, and only
// its key survives.
func TestHigherTermPrevails(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for n := 2; n <= 8; n++ {
				t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
					t.Parallel()
					w := newWorld(t, b)
					terms := rand.Perm(n)
					fs := make([]*Fence, n)
					for i, term := range terms {
						fs[i], _ = w.fence(fmt.Sprintf("c%d", i), int64(term+1), i%2 == 0, Correct)
					}
					errs := raceClaims(w.ctx, fs)
					for i, f := range fs {
						err := errs[i]
						if err == nil {
							err = f.Advance(w.ctx)
						}
						if f.Term() == int64(n) {
							mustOK(t, fmt.Sprintf("highest term %d", n), err)
							continue
						}
						if !IsFenced(err) {
							t.Fatalf("term %d: got %v, want fenced by the highest term", f.Term(), err)
						}
					}
					entries, err := w.raw.List(w.ctx, w.prefix+KeyPrefix)
					if err != nil {
						t.Fatal(err)
					}
					if len(entries) != 1 || entries[0].Key != w.key(int64(n)) {
						t.Fatalf("keys left %v, want only %s", entries, w.key(int64(n)))
					}
				})
			}
		})
	}
}
