package writers

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
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

// The bus's wait for a target to serve: it returns served as soon as the writer has
// acknowledged the ops asked for (not one more), and the context's end when the writer
// neither serves nor stops.
func TestWaitAckedOrStopped(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 3, 5)
	wctx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	if served, err := r.c.bus.waitAckedOrStopped(wctx, "a", 5, history.SigCrashed); !served || err != nil {
		t.Fatalf("wait for the 5 ops a acknowledged: served %v, %v; want served at once", served, err)
	}
	short, cancelShort := context.WithTimeout(ctx(t), 50*time.Millisecond)
	defer cancelShort()
	if served, err := r.c.bus.waitAckedOrStopped(short, "a", 6, history.SigCrashed); served || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("wait for a 6th op that never comes: served %v, %v; want the context's end", served, err)
	}
}
