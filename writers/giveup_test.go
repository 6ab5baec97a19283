package writers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// listFailing fails every listing of the segment reference sets with an unknown outcome.
type listFailing struct{ store.Store }

func (l listFailing) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	if strings.Contains(prefix, "/segments/metadata/") {
		return nil, fmt.Errorf("injected listing failure: %w", store.ErrAmbiguous)
	}
	return l.Store.List(ctx, prefix)
}

// relocateTo relocates a (term 3, 10 ops acknowledged, a reference set published when
// refresh is set) to t, whose store path wrap builds from the shared store (nil: the shared
// store itself), and returns the result with the two writers.
func relocateTo(t *testing.T, variant fence.Variant, wrap func(store.Store) store.Store, refresh bool) (*rig, *Writer, *Writer, RelocationResult) {
	t.Helper()
	return relocateWith(t, variant, wrap, refresh, RelocateOptions{AnswerTimeout: 2 * time.Second})
}

// relocateWith is relocateTo with the relocation's options.
// relocateWith relocates a's primary to t with opts, after opening the handoff faults hf on
// a's link.
func relocateWith(t *testing.T, variant fence.Variant, wrap func(store.Store) store.Store, refresh bool, opts RelocateOptions,
	hf ...faults.Handoff) (*rig, *Writer, *Writer, RelocationResult) {
	t.Helper()
	r, a, tg, res, err := relocateRaw(t, variant, wrap, refresh, opts, hf...)
	if err != nil {
		t.Fatalf("relocate: %v", err)
	}
	return r, a, tg, res
}

// relocateRaw is relocateWith returning the relocation's error instead of failing on it.
func relocateRaw(t *testing.T, variant fence.Variant, wrap func(store.Store) store.Store, refresh bool, opts RelocateOptions,
	hf ...faults.Handoff) (*rig, *Writer, *Writer, RelocationResult, error) {
	t.Helper()
	r := memRig(t, func(c *Config) { c.Variant = variant })
	var tstore store.Store
	if wrap != nil {
		tstore = wrap(r.st)
	}
	a, tg := r.add("a", nil), r.add("t", tstore)
	r.promote(a, 3)
	if refresh {
		if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
			t.Fatalf("refresh: %v %v", ok, err)
		}
	}
	r.submit(a, 10)
	r.waitAcked(a, 10)
	for _, h := range hf {
		r.faultHandoffs(a, h)
	}
	res, err := a.Relocate(ctx(t), tg, opts)
	return r, a, tg, res, err
}

// TestTargetGivesUpAFailedHydration: a target whose hydration cannot complete gives the
// handoff up without touching the fence: it records a StandDown marked relocation-target
// with the reason, answers its source, which reverts and serves again, and it takes no grant
// at that term again.
func TestTargetGivesUpAFailedHydration(t *testing.T) {
	r, a, tg, res := relocateTo(t, fence.Correct,
		func(s store.Store) store.Store { return listFailing{s} }, true)
	if res != RelocationResumed {
		t.Fatalf("relocation %+v; want the source resumed", res)
	}
	sd := r.events(history.StandDown, "t")
	if len(sd) != 1 || sd[0].Detail != "relocation-target" || sd[0].Term != 3 || !strings.Contains(sd[0].Err, "hydration") {
		t.Fatalf("target stand-downs %+v; want one at term 3 marked relocation-target, naming the hydration", sd)
	}
	if n := len(r.events(history.Adopt, "t")); n != 0 {
		t.Fatalf("%d adoptions by a target that gave up", n)
	}
	if tg.State() != StateStandby {
		t.Fatalf("target is %s, want standby", tg.State())
	}
	r.submit(a, 5)
	r.waitAcked(a, 15)
	if err := tg.Promote(ctx(t), 3); !errors.Is(err, ErrNotServing) {
		t.Fatalf("promoting the target at the term it gave up: %v; want refused", err)
	}
	if _, err := a.Relocate(ctx(t), tg, RelocateOptions{}); !errors.Is(err, ErrNotServing) {
		t.Fatalf("relocating to it again at that term: %v; want refused", err)
	}
	if a.State() != StateActive {
		t.Fatalf("source is %s after a refused relocation, want active", a.State())
	}
	r.requireDurable(r.audit())
}

// TestRelocationVariantsThatStopServing: with resume-stays-blocked a source whose revert
// succeeded holds the chain but stays blocked; with target-refuses-empty-shard a target
// gives up a handoff whose store has no published reference set, and the source resumes.
// The correct protocol resumes the source, and hands off to a target of a shard that never
// refreshed.
func TestRelocationVariantsThatStopServing(t *testing.T) {
	blocked := func(v fence.Variant) State {
		r := memRig(t, func(c *Config) { c.Variant = v })
		a, tg := r.add("a", nil), r.add("t", nil)
		r.promote(a, 3)
		r.submit(a, 10)
		r.waitAcked(a, 10)
		res, err := a.Relocate(ctx(t), tg, RelocateOptions{Abort: history.AbortBeforeTargetWrites, AnswerTimeout: 20 * time.Millisecond})
		if err != nil || res != RelocationResumed {
			t.Fatalf("%s: relocate %+v, %v; want resumed", v, res, err)
		}
		return a.State()
	}
	if st := blocked(fence.Correct); st != StateActive {
		t.Fatalf("correct: the resumed source is %s, want active", st)
	}
	if st := blocked(fence.ResumeStaysBlocked); st != StateRelocating {
		t.Fatalf("resume-stays-blocked: the resumed source is %s, want still relocating", st)
	}

	r, _, tg, res := relocateTo(t, fence.Correct, nil, false)
	if res != RelocationHandedOff || len(r.events(history.StandDown, "")) != 0 {
		t.Fatalf("correct, nothing published: %+v, stand-downs %v; want handed off", res, r.events(history.StandDown, ""))
	}
	r.submit(tg, 3)
	r.waitAcked(tg, 3)
	r, _, _, res = relocateTo(t, fence.TargetRefusesEmptyShard, nil, false)
	if sd := r.events(history.StandDown, "t"); res != RelocationResumed || len(sd) != 1 || sd[0].Detail != "relocation-target" {
		t.Fatalf("target-refuses-empty-shard: %+v, stand-downs %v; want the target given up, the source resumed", res, sd)
	}
}

// A relocation abandoned while its target prehydrates (the caller's context ends) releases
// the target: a standby again, not stood down, so a later promotion may take it; the source
// never stopped serving.
func TestAbandonedPrehydrationReleasesTheTarget(t *testing.T) {
	r := memRig(t, nil)
	hold := newHold(r.st, func(op, key string) bool { return op == "list" && strings.Contains(key, "/segments/metadata/") })
	a, tg := r.add("a", nil), r.add("t", hold)
	r.promote(a, 3)
	if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("refresh: %v %v", ok, err)
	}
	hold.arm()
	rctx, cancel := context.WithCancel(ctx(t))
	done := make(chan error, 1)
	go func() {
		_, err := a.Relocate(rctx, tg, RelocateOptions{Prehydrate: true})
		done <- err
	}()
	hold.waitHit(t)
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned relocation: %v, want the context's end", err)
	}
	if tg.State() != StateStandby || a.State() != StateActive {
		t.Fatalf("target %s, source %s; want a standby target and an active source", tg.State(), a.State())
	}
	if n := len(r.events(history.StandDown, "t")); n != 0 {
		t.Fatalf("the released target recorded %d stand-downs", n)
	}
	r.submit(a, 3)
	r.waitAcked(a, 3)
	r.promote(tg, 4)
}
