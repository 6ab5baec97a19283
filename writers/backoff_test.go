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
