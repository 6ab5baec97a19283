package writers

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// A relocation whose target prehydrates hands off like any other.
func TestPrehydratedRelocationHandsOff(t *testing.T) {
	_, _, tg, res := relocateWith(t, fence.Correct, nil, true, RelocateOptions{Prehydrate: true})
	if res != RelocationHandedOff || !tg.BelievesPrimary() {
		t.Fatalf("prehydrated relocation %+v, target %s; want handed off", res, tg.State())
	}
}

// A prehydration that fails gives the handoff up at the source's term: the target records
// its stand-down and is a standby again, refused that term but granted a higher one;
// the source never stopped serving.
func TestFailedPrehydrationGivesUp(t *testing.T) {
	r, a, tg, _, err := relocateRaw(t, fence.Correct, func(s store.Store) store.Store { return listFailing{s} }, true, RelocateOptions{Prehydrate: true})
	if err == nil || !strings.Contains(err.Error(), "hydration") {
		t.Fatalf("relocation with a failing prehydration: %v; want its hydration's error", err)
	}
	if sd := r.events(history.StandDown, "t"); len(sd) != 1 || sd[0].Term != 3 || sd[0].Detail != "relocation-target" {
		t.Fatalf("target stand-downs %+v; want one at term 3", sd)
	}
	if tg.State() != StateStandby || a.State() != StateActive {
		t.Fatalf("target %s, source %s; want standby and active", tg.State(), a.State())
	}
	r.submit(a, 2)
	r.waitAcked(a, 12)
	if err := tg.Promote(ctx(t), 3); !errors.Is(err, ErrNotServing) {
		t.Fatalf("promoting the target at the term it gave up: %v; want refused", err)
	}
	// Its store still fails the listing, so the promotion fails, but not as a refused grant.
	if err := tg.Promote(ctx(t), 4); errors.Is(err, ErrNotServing) {
		t.Fatalf("promoting the target at a higher term: %v; want the grant taken", err)
	}
}

// A transfer the store refuses for a reason that is no fencing verdict ends the relocation
// with that error: the source serves again, unfenced, and the target is a standby.
func TestRefusedTransferUnblocksTheSource(t *testing.T) {
	r := memRig(t, nil)
	st := newFailStore(r.st, "put-if-match", func(key string) bool { return strings.Contains(key, "/fence__") }, 0, forbidden)
	a, tg := r.add("a", st), r.add("t", nil)
	r.promote(a, 3)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	st.n.Store(1)
	_, err := a.Relocate(ctx(t), tg, RelocateOptions{AnswerTimeout: 2 * time.Second})
	if err == nil || !errors.Is(err, store.ErrConfig) {
		t.Fatalf("relocation whose transfer is refused: %v; want the store's error", err)
	}
	if a.State() != StateActive || tg.State() != StateStandby || len(r.events(history.Fenced, "")) != 0 {
		t.Fatalf("source %s, target %s, fenced %v; want active, standby, none", a.State(), tg.State(), r.events(history.Fenced, ""))
	}
	r.submit(a, 5)
	r.waitAcked(a, 15)
}

// The handoff's failure says what went wrong: a lost message, a lost answer.
func TestHandoffFailureSaysWhy(t *testing.T) {
	for _, tc := range []struct {
		fault faults.Handoff
		why   string
	}{
		{faults.Handoff{LoseMessage: true}, "handoff message lost"},
		{faults.Handoff{LoseAnswer: true}, "handoff answer lost"},
	} {
		r, _, _, _ := relocateWith(t, fence.Correct, nil, false, RelocateOptions{AnswerTimeout: 20 * time.Millisecond}, tc.fault)
		hs := r.events(history.Handoff, "a")
		if len(hs) != 1 || hs[0].Outcome != history.Fail || !strings.Contains(hs[0].Err, tc.why) {
			t.Errorf("%+v: handoff events %+v; want one failed, saying %q", tc.fault, hs, tc.why)
		}
		// The fault is in the history like every other: its start, by the source, before
		// the handoff it hit.
		if fs := r.events(history.FaultStart, "a"); len(fs) != 1 || fs[0].Detail != "handoff:a" || len(hs) == 1 && fs[0].ID > hs[0].ID {
			t.Errorf("%+v: fault starts %+v; want the handoff fault's, before the handoff", tc.fault, fs)
		}
	}
}

// A relocation to the source itself, or to a copy of another cluster, is refused before it
// does anything: the source keeps serving.
func TestRelocationRefusesAnInvalidTarget(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	r.promote(a, 3)
	other := memRig(t, nil)
	stranger := other.add("s", nil)
	for name, tg := range map[string]*Writer{"itself": a, "another cluster's copy": stranger} {
		_, err := a.Relocate(ctx(t), tg, RelocateOptions{AnswerTimeout: 2 * time.Second})
		if err == nil || !strings.Contains(err.Error(), "invalid target") {
			t.Fatalf("relocation to %s: %v; want it refused as an invalid target", name, err)
		}
		if a.State() != StateActive {
			t.Fatalf("after the refused relocation to %s, a is %s; want it serving", name, a.State())
		}
	}
}
