package writers

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// landedStore applies the next n Puts whose key match accepts and then answers them as the
// store's answer was lost (a 500): the write landed, the writer does not know it.
type landedStore struct {
	store.Store
	match func(key string) bool
	n     atomic.Int64
}

func (l *landedStore) Put(ctx context.Context, key string, body []byte) (string, error) {
	etag, err := l.Store.Put(ctx, key, body)
	if err == nil && l.match(key) && l.n.Add(-1) >= 0 {
		return "", &store.Error{Op: "put", Key: key, Kind: store.ErrAmbiguous, Status: 500, Code: "InternalError"}
	}
	return etag, err
}

func isSegmentMetadata(key string) bool { return strings.Contains(key, "/segments/metadata/") }

// A source superseded by a higher term before it relocates learns it at its transfer: the
// relocation fails with the fencing verdict, the source is fenced for good (recording
// Fenced) and the target is a standby again.
func TestTransferRefusedAsFencedFencesTheSource(t *testing.T) {
	r := memRig(t, nil)
	a, b, tg := r.add("a", nil), r.add("b", nil), r.add("t", nil)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	r.promote(b, 4) // sweeps term 3's fence object; a, with nothing buffered, has not noticed
	if a.State() != StateActive {
		t.Fatalf("a is %s; the test needs it unaware of b", a.State())
	}
	_, err := a.Relocate(ctx(t), tg, RelocateOptions{})
	if !fence.IsFenced(err) || !strings.Contains(err.Error(), "transfer") {
		t.Fatalf("relocation of a superseded source: %v; want its transfer fenced", err)
	}
	if a.State() != StateFenced || tg.State() != StateStandby {
		t.Fatalf("source %s, target %s; want fenced and standby", a.State(), tg.State())
	}
	if fe := r.events(history.Fenced, "a"); len(fe) != 1 || fe[0].Term != 3 {
		t.Fatalf("a's Fenced events %+v; want one at term 3", fe)
	}
	if err := a.Submit(r.c.NextOp()); !errors.Is(err, ErrNotServing) {
		t.Fatalf("an op submitted to the fenced source: %v; want refused", err)
	}
}

// A prehydrated target whose source's drain fails (the source learns at its final sync that
// it was superseded) is released: a standby again, with no stand-down recorded, that a later
// promotion takes.
func TestFailedDrainReleasesThePrehydratedTarget(t *testing.T) {
	r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 5, time.Hour })
	a, b, tg := r.add("a", nil), r.add("b", nil), r.add("t", nil)
	r.promote(a, 3)
	r.submit(a, 5)
	r.waitAcked(a, 5)
	r.submit(a, 2) // buffered until the drain
	r.promote(b, 4)
	_, err := a.Relocate(ctx(t), tg, RelocateOptions{Prehydrate: true})
	if !fence.IsFenced(err) || !strings.Contains(err.Error(), "drain") {
		t.Fatalf("relocation whose drain is fenced: %v; want the drain's fencing", err)
	}
	if r.c.Bus().Count("t", history.SigHydrated) != 1 {
		t.Fatalf("the target hydrated %d times; the test needs its prehydration done", r.c.Bus().Count("t", history.SigHydrated))
	}
	if a.State() != StateFenced || tg.State() != StateStandby {
		t.Fatalf("source %s, target %s; want fenced and standby", a.State(), tg.State())
	}
	if n := len(r.events(history.StandDown, "t")); n != 0 {
		t.Fatalf("the released target recorded %d stand-downs", n)
	}
	r.promote(tg, 5)
}

// A relocation abandoned while the source waits for its silent target to acknowledge (the
// caller's context ends) reports the context's end: no handoff, and the source does not
// count itself relocated.
func TestAbandonedWaitForTargetAcksIsNoHandoff(t *testing.T) {
	r := memRig(t, nil)
	a, tg := r.add("a", nil), r.add("t", nil)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	rctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	type result struct {
		res RelocationResult
		err error
	}
	done := make(chan result, 1)
	go func() {
		res, err := a.Relocate(rctx, tg, RelocateOptions{Abort: history.AbortAfterTargetAcks})
		done <- result{res, err}
	}()
	// The target took over (it received the handoff); it gets no traffic, so it never acks.
	r.wait(tg, history.SigHydrated, 1)
	cancel()
	got := <-done
	if !errors.Is(got.err, context.Canceled) || got.res == RelocationHandedOff {
		t.Fatalf("abandoned relocation: %+v, %v; want the context's end and no handoff", got.res, got.err)
	}
	if a.State() == StateRelocated || r.c.Bus().Count("a", history.SigHandedOff) != 0 {
		t.Fatalf("source %s, %d handed-off signals; want it not relocated", a.State(), r.c.Bus().Count("a", history.SigHandedOff))
	}
	if hs := r.events(history.Handoff, "a"); len(hs) != 1 || hs[0].Outcome != history.Fail {
		t.Fatalf("handoff events %+v; want one, failed", hs)
	}
}

// A target takes over the reference set the store holds, even one whose publish its source
// did not hear answered: the target's next reference set still names the source's files, and
// a copy recovering from the target hydrates them.
func TestTargetContinuesThePublishedReferenceSet(t *testing.T) {
	r := memRig(t, nil)
	ls := &landedStore{Store: r.st, match: isSegmentMetadata}
	a, tg, c := r.add("a", ls), r.add("t", nil), r.add("c", nil)
	r.promote(a, 3)
	ls.n.Store(1)
	if ok, err := a.Refresh(ctx(t)); err == nil || ok {
		t.Fatalf("refresh whose publish answer is lost: %v %v; want the publish's error", ok, err)
	}
	r.submit(a, 10)
	r.waitAcked(a, 10)
	if res, err := a.Relocate(ctx(t), tg, RelocateOptions{}); err != nil || res != RelocationHandedOff {
		t.Fatalf("relocate: %+v %v", res, err)
	}
	if ok, err := tg.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("target's refresh: %v %v", ok, err)
	}
	rc, err := c.Recover(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	var fromA, fromT int
	for _, k := range rc.Segments {
		switch {
		case strings.Contains(k, "/"+a.Alloc()+"_"):
			fromA++
		case strings.Contains(k, "/"+tg.Alloc()+"_"):
			fromT++
		}
	}
	if rc.Source != "t" || fromA != 2 || fromT != 2 || len(rc.Segments) != 4 {
		t.Fatalf("recovery from %s hydrated %v; want t's set naming a's 2 files and t's 2", rc.Source, rc.Segments)
	}
}
