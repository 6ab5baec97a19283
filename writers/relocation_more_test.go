package writers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
)

func isSegmentList(op, key string) bool {
	return op == "list" && strings.Contains(key, "/segments/metadata/")
}

type relocationEnd struct {
	res RelocationResult
	err error
}

// relocateAsync starts w's relocation to target and returns where its result arrives.
func relocateAsync(ctx context.Context, w, target *Writer, opts RelocateOptions) <-chan relocationEnd {
	done := make(chan relocationEnd, 1)
	go func() {
		res, err := w.Relocate(ctx, target, opts)
		done <- relocationEnd{res, err}
	}()
	return done
}

// A source that stopped serving while its target prehydrated (it learned at a sync that a
// higher term superseded it) refuses to relocate, and releases the target it reserved: a
// standby copy again, with no stand-down recorded, that a later promotion takes.
func TestSourceFencedDuringPrehydrationReleasesTheTarget(t *testing.T) {
	r := memRig(t, nil)
	hs := newHold(r.st, isSegmentList)
	a := r.acking("a", 3, 5)
	b, tg := r.add("b", nil), r.add("t", hs)
	hs.arm()
	done := relocateAsync(ctx(t), a, tg, RelocateOptions{Prehydrate: true})
	hs.waitHit(t) // the target's prehydration lists the reference sets
	if tg.State() != StateTarget {
		close(hs.release)
		t.Fatalf("the prehydrating target is %s; want reserved", tg.State())
	}
	r.promote(b, 4)
	r.submit(a, 5) // a's next sync meets term 4
	r.wait(a, history.SigFenced, 1)
	close(hs.release)
	got := <-done
	if !errors.Is(got.err, ErrNotServing) || got.res != RelocationUnfinished {
		t.Fatalf("relocation of a source fenced while its target prehydrated: %+v, %v; want refused as not serving", got.res, got.err)
	}
	if a.State() != StateFenced || tg.State() != StateStandby {
		t.Fatalf("source %s, target %s; want fenced and standby", a.State(), tg.State())
	}
	if n := len(r.events(history.StandDown, "t")); n != 0 {
		t.Fatalf("the released target recorded %d stand-downs", n)
	}
	if n := len(r.events(history.Transfer, "a")); n != 0 {
		t.Fatalf("the fenced source recorded %d transfers", n)
	}
	r.promote(tg, 5)
}

// A copy that is not serving refuses to relocate and leaves its would-be target alone: a
// target another relocation reserved stays reserved, and that relocation hands off.
func TestRelocationFromACopyNotServingLeavesAReservedTargetAlone(t *testing.T) {
	r := memRig(t, nil)
	hs := newHold(r.st, isSegmentList)
	a := r.acking("a", 3, 10)
	s, tg := r.add("s", nil), r.add("t", hs)
	hs.arm()
	done := relocateAsync(ctx(t), a, tg, RelocateOptions{AnswerTimeout: time.Hour})
	hs.waitHit(t) // the target received the handoff and hydrates
	released := false
	release := func() {
		if !released {
			released = true
			close(hs.release)
		}
	}
	defer release()
	res, err := s.Relocate(ctx(t), tg, RelocateOptions{})
	if !errors.Is(err, ErrNotServing) || res != RelocationUnfinished {
		t.Fatalf("relocation from a standby copy: %+v, %v; want refused as not serving", res, err)
	}
	if tg.State() != StateTarget || s.State() != StateStandby {
		t.Fatalf("target %s, refused source %s; want still reserved and standby", tg.State(), s.State())
	}
	release()
	got := <-done
	if got.err != nil || got.res != RelocationHandedOff || !tg.BelievesPrimary() || a.State() != StateRelocated {
		t.Fatalf("the first relocation: %+v, %v, target %s, source %s; want handed off", got.res, got.err, tg.State(), a.State())
	}
	r.submit(tg, 5)
	r.waitAcked(tg, 5)
	r.requireDurable(r.audit())
}

// A copy whose node id a fence body cannot hold is refused when it is added: it could
// never promote nor take a handoff, and a target that met that only at its handoff would
// stay reserved.
func TestAWriterWhoseNodeIDAFenceBodyCannotHoldIsRefused(t *testing.T) {
	r := memRig(t, nil)
	if _, err := r.c.AddWriter(WriterSpec{ID: "t", NodeID: "node|t", Store: r.st}); err == nil ||
		!strings.Contains(err.Error(), `invalid node id "node|t"`) {
		t.Fatalf("adding a writer on node %q: %v; want it refused", "node|t", err)
	}
	if len(r.c.Writers()) != 0 {
		t.Fatalf("writers %v after a refused add; want none", r.c.Writers())
	}
	tg, err := r.c.AddWriter(WriterSpec{ID: "t", NodeID: "node-t", Store: r.st})
	if err != nil {
		t.Fatalf("the id of a refused writer stays free: %v", err)
	}
	r.promote(tg, 1)
}

// A writer id names the copy in every key and history event it leaves, and allocation ids
// are built from it: an empty id, or one holding '|', '/' or a space, is refused.
func TestWriterIDsThatCannotNameACopyAreRefused(t *testing.T) {
	r := memRig(t, nil)
	for _, id := range []string{"", "a|b", "a/b", "a b"} {
		if _, err := r.c.AddWriter(WriterSpec{ID: id, Store: r.st}); err == nil ||
			!strings.Contains(err.Error(), fmt.Sprintf("invalid writer id %q", id)) {
			t.Errorf("adding writer %q: %v; want it refused", id, err)
		}
	}
	if len(r.c.Writers()) != 0 {
		t.Fatalf("writers %v after refused adds; want none", r.c.Writers())
	}
}
