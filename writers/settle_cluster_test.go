package writers

import (
	"context"
	"errors"
	"testing"
	"time"
)

// Cluster.Settle waits for every writer, not the first that settled: with a settled standby
// listed before a paused primary holding buffered ops, it returns the context's end; once
// the primary is resumed it returns nil.
func TestClusterSettleWaitsForEveryWriter(t *testing.T) {
	r := memRig(t, func(c *Config) { c.SyncEvery = 100 })
	r.add("a", nil) // a standby: nothing buffered, nothing in flight
	b := r.acking("b", 3, 1)
	b.Pause()
	r.submit(b, 2)
	sctx, cancel := context.WithTimeout(ctx(t), 200*time.Millisecond)
	defer cancel()
	if err := r.c.Settle(sctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Settle with b paused and holding ops: %v; want the context's end", err)
	}
	b.Resume()
	if err := r.c.Settle(ctx(t)); err != nil {
		t.Fatalf("Settle once b resumed: %v", err)
	}
	r.waitAcked(b, 3)
}

// errText is the history's text of an error: empty for none.
func TestErrText(t *testing.T) {
	if got := errText(nil); got != "" {
		t.Fatalf("errText(nil) = %q", got)
	}
	if got := errText(errors.New("the store refused")); got != "the store refused" {
		t.Fatalf("errText = %q", got)
	}
}
