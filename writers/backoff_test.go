package writers

import (
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/wait"
)

// The pause before retry attempt n: RetryBackoff before the first, doubling with each attempt
// after it, never more than 16 times RetryBackoff. Measured on the virtual clock, where a
// pause takes exactly its length.
func TestRetryBackoffDoublesUpToItsCap(t *testing.T) {
	const base = 10 * time.Millisecond
	clock := wait.Virtual()
	r := memRig(t, func(c *Config) { c.Clock, c.RetryBackoff = clock, base })
	w := r.add("a", nil)
	want := []time.Duration{base, 2 * base, 4 * base, 8 * base, 16 * base, 16 * base, 16 * base}
	for i, d := range want {
		took := clock.Stopwatch()
		if !w.backoff(ctx(t), i+1) {
			t.Fatal("the backoff ended early")
		}
		// The virtual clock reads instants a nanosecond apart: allow a little.
		if got := took(); got < d-time.Microsecond || got > d+time.Microsecond {
			t.Errorf("pause before attempt %d: %v; want %v", i+1, got, d)
		}
	}
}

// The auditor's restore read waits out the retry backoff before each retry, as a writer's
// does: two unanswered reads of the restore point's metadata cost RetryBackoff and then twice
// it on the virtual clock before the third read succeeds.
func TestAuditRetriesAfterTheBackoff(t *testing.T) {
	const base = 10 * time.Millisecond
	clock := wait.Virtual()
	r := memRig(t, func(c *Config) { c.Clock, c.RetryBackoff = clock, base })
	r.acking("a", 3, 5)
	r.settle()
	st := newFailStore(r.st, "get", isMetadataFile, 2, unanswered)
	took := clock.Stopwatch()
	if _, err := r.c.Audit(ctx(t), st, 0); err != nil {
		t.Fatalf("audit whose first two metadata reads go unanswered: %v", err)
	}
	if got := took(); got < 3*base-time.Microsecond {
		t.Fatalf("the audit took %v of virtual time; want at least the two backoffs, %v", got, 3*base)
	}
}
