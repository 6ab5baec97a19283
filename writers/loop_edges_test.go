package writers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// A writer fenced by its sync records a Fenced event whose error names the fencing verdict.
func TestFencedEventNamesTheCause(t *testing.T) {
	r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 3, time.Hour })
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 3)
	r.promote(b, 4)
	r.submit(a, 3)
	r.wait(a, history.SigFenced, 1)
	fe := r.events(history.Fenced, "a")
	if len(fe) != 1 || !strings.Contains(fe[0].Err, fence.ErrFenced.Error()) {
		t.Fatalf("a's Fenced events %+v; want one naming %q", fe, fence.ErrFenced)
	}
}

// The Ack of a fenced sync names the fence object the sync advanced and its sequence number.
func TestAckNamesTheFenceObjectAndSequence(t *testing.T) {
	r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 3, time.Hour })
	a := r.acking("a", 1, 3)
	acks := r.events(history.Ack, "a")
	if len(acks) != 1 || acks[0].Key == "" || acks[0].Key != a.Fence().Key() || acks[0].Seq <= 0 {
		t.Fatalf("a's Ack events %+v; want one naming fence object %q with a positive sequence", acks, a.Fence().Key())
	}
}

// A relocation that starts while a sync is in flight, a sync then refused as fenced (a newer
// primary superseded the source), fails at the drain as soon as the sync loop ends, without
// waiting for the caller's deadline.
func TestRelocationFailsAtOnceWhenTheSyncLoopEndsBeforeTheDrain(t *testing.T) {
	hold := newHold(nil, isMetadataPut)
	r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 3, time.Hour })
	hold.Store = r.st
	a, b, tg := r.add("a", hold), r.add("b", nil), r.add("t", nil)
	r.promote(a, 3)
	r.promote(b, 4)
	hold.arm()
	r.submit(a, 3)
	hold.waitHit(t) // a's sync is in flight, its fence step still to come
	rctx, cancel := context.WithTimeout(ctx(t), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := a.Relocate(rctx, tg, RelocateOptions{})
		done <- err
	}()
	for a.State() != StateRelocating {
		time.Sleep(time.Millisecond) // waiting for the relocation to block new ops
	}
	close(hold.release)
	err := <-done
	if !errors.Is(err, errStopped) || !strings.Contains(err.Error(), "drain") {
		t.Fatalf("relocation whose source was fenced before its drain: %v; want the drain to find the writer stopped", err)
	}
	if a.State() != StateFenced || tg.State() != StateStandby {
		t.Fatalf("source %s, target %s; want fenced and standby", a.State(), tg.State())
	}
}
