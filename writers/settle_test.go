package writers

import (
	"context"
	"testing"
	"time"
)

// settleAsync starts the cluster's Settle with a bound far above what it needs, and returns
// its result channel.
func settleAsync(r *rig) <-chan error {
	done := make(chan error, 1)
	go func() {
		sctx, cancel := context.WithTimeout(ctx(r.t), 10*time.Second)
		defer cancel()
		done <- r.c.Settle(sctx)
	}()
	return done
}

// Settle waits for a sync in flight and returns as soon as it ends: the end of a batch
// wakes it, with nothing else happening afterwards.
func TestSettleWakesAtTheEndOfASync(t *testing.T) {
	hold := newHold(nil, isMetadataPut)
	r := memRig(t, func(c *Config) { c.SyncEvery = 3 })
	hold.Store = r.st
	a := r.add("a", hold)
	r.promote(a, 1)
	hold.arm()
	r.submit(a, 3)
	hold.waitHit(t)
	done := settleAsync(r) // the held metadata write is the batch's: a is syncing
	// Give Settle time to find the sync in flight: a Settle that returned while it was in
	// flight would find the ops unacknowledged.
	time.Sleep(50 * time.Millisecond)
	close(hold.release)
	if err := <-done; err != nil {
		t.Fatalf("settle after the sync ended: %v", err)
	}
	if a.Acked() != 3 {
		t.Fatalf("settled with %d of 3 ops acknowledged", a.Acked())
	}
}

// Settle waiting on a writer whose ops wait for a batch returns when the writer closes or
// crashes.
func TestSettleWakesWhenTheWriterStops(t *testing.T) {
	for _, stop := range []struct {
		name string
		do   func(*Writer)
	}{{"close", (*Writer).Close}, {"crash", (*Writer).Crash}} {
		t.Run(stop.name, func(t *testing.T) {
			r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 1000, time.Hour })
			a := r.add("a", nil)
			r.promote(a, 1)
			r.submit(a, 3)
			done := settleAsync(r)
			select {
			case err := <-done:
				t.Fatalf("settle returned (%v) with 3 ops waiting for a batch", err)
			case <-time.After(50 * time.Millisecond):
			}
			stop.do(a)
			if err := <-done; err != nil {
				t.Fatalf("settle after the writer's %s: %v", stop.name, err)
			}
		})
	}
}
