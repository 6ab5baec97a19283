package writers

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

func TestRecoverSeesAckedOps(t *testing.T) {
	r := memRig(t, nil)
	a, c := r.add("a", nil), r.add("c", nil)
	r.promote(a, 1)
	if _, err := a.Refresh(ctx(t)); err != nil {
		t.Fatal(err)
	}
	r.submit(a, 10)
	r.waitAcked(a, 10)
	rc, err := c.Recover(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if rc.Source != "a" || rc.Attempts != 1 || !slices.Equal(rc.Ops, r.acked("a")) || len(rc.Segments) != 2 {
		t.Fatalf("recovery %+v; want from a at once, ops %v and 2 files", rc, r.acked("a"))
	}
	for _, e := range r.events(history.Hydrate, "c") {
		if e.Detail != "recovery" {
			t.Fatalf("hydrate %v", e)
		}
	}
	// A finished recovery is a standby replica again, and its primary keeps replicating to it.
	if c.State() != StateStandby || !slices.Contains(a.repl.recoveries, c) {
		t.Fatalf("c is %s, a replicates to %v", c.State(), a.repl.recoveries)
	}
}

// relocateDuringRecovery runs a recovery of r from primary a whose phase (phase 1, the
// segment fetch, or phase 2, the snapshot's .tlog fetch) is held while a relocates to t and
// t acknowledges ops, and returns the recovery and the ops acknowledged before it finished
// that it misses.
func relocateDuringRecovery(t *testing.T, variant fence.Variant, heldKey string) (Recovery, []int64) {
	t.Helper()
	rg := memRig(t, func(c *Config) { c.Variant = variant })
	hold := newHold(rg.st, func(op, key string) bool { return op == "get" && strings.Contains(key, heldKey) })
	a, tg, r := rg.add("a", nil), rg.add("t", nil), rg.add("r", hold)
	rg.promote(a, 1)
	if _, err := a.Refresh(ctx(t)); err != nil {
		t.Fatal(err)
	}
	rg.submit(a, 10)
	rg.waitAcked(a, 10)

	hold.arm()
	type result struct {
		rc  Recovery
		err error
	}
	done := make(chan result, 1)
	go func() { rc, err := r.Recover(ctx(t), a); done <- result{rc, err} }()
	hold.waitHit(t)
	if res, err := a.Relocate(ctx(t), tg, RelocateOptions{}); err != nil || res != RelocationHandedOff {
		t.Fatalf("relocate: %+v %v", res, err)
	}
	rg.submit(tg, 10)
	rg.waitAcked(tg, 10)
	close(hold.release)
	res := <-done
	if res.err != nil {
		t.Fatal(res.err)
	}
	reads := rg.events(history.RestoreRead, "r")
	last := reads[len(reads)-1]
	if last.Term != 0 || last.Outcome != history.OK || !slices.Equal(last.Ops, res.rc.Ops) {
		t.Fatalf("the recovery's record %v; want term 0, ok, ops %v", last, res.rc.Ops)
	}
	var missed []int64
	for _, e := range rg.events(history.Ack, "") {
		for _, op := range e.Ops {
			if _, ok := slices.BinarySearch(res.rc.Ops, op); !ok && e.Complete < last.Complete {
				missed = append(missed, op)
			}
		}
	}
	return res.rc, missed
}

// TestRelocationDuringPhase1FailsTheRecovery: the target's first writes reach r before its
// engine opened and are in no snapshot of a; r's check after opening its engine sees that a
// relocated, fails the attempt and recovers again from t. Without the check r finishes
// without them.
func TestRelocationDuringPhase1FailsTheRecovery(t *testing.T) {
	rc, missed := relocateDuringRecovery(t, fence.Correct, "/segments/data/")
	if rc.Attempts != 2 || rc.Source != "t" || len(missed) > 0 {
		t.Fatalf("recovery %+v missed %v; want a second attempt from t missing nothing", rc, missed)
	}
	rc, missed = relocateDuringRecovery(t, fence.RecoveryNoRelocationCheck, "/segments/data/")
	if rc.Attempts != 1 || len(missed) != 10 {
		t.Fatalf("recovery-no-relocation-check: recovery %+v missed %v; want one attempt missing t's 10 ops", rc, missed)
	}
}

// TestRelocationCarriesRecoveries: r opened its engine before a relocated; t replicates to it
// because the handoff named r's recovery. A target that ignores its source's recoveries
// leaves r without t's writes.
func TestRelocationCarriesRecoveries(t *testing.T) {
	rc, missed := relocateDuringRecovery(t, fence.Correct, "/translog/data/")
	if rc.Attempts != 1 || rc.Source != "a" || len(missed) > 0 {
		t.Fatalf("recovery %+v missed %v; want one attempt from a missing nothing", rc, missed)
	}
	rc, missed = relocateDuringRecovery(t, fence.TargetIgnoresRecoveries, "/translog/data/")
	if rc.Attempts != 1 || len(missed) != 10 {
		t.Fatalf("target-ignores-recoveries: recovery %+v missed %v; want t's 10 ops missed", rc, missed)
	}
}

// TestRecoveryFollowsTheTwin: a twin b promoted at a's own term supersedes a, which has not
// noticed (it holds its stale token and is still active). A recovery that names no source
// follows b, the copy promoted last, and sees b's acknowledged ops; one that starts from a
// fails its check and starts over from b.
func TestRecoveryFollowsTheTwin(t *testing.T) {
	for _, from := range []string{"", "a"} {
		t.Run("from="+from, func(t *testing.T) {
			r := memRig(t, nil)
			a, b, c := r.add("a", nil), r.add("b", nil), r.add("c", nil)
			r.promote(a, 4)
			r.submit(a, 3)
			r.waitAcked(a, 3)
			r.promote(b, 4)
			r.submit(b, 5)
			r.waitAcked(b, 5)
			if a.State() != StateActive {
				t.Fatalf("a is %s; the test needs it unaware of its twin", a.State())
			}
			var src *Writer
			if from == "a" {
				src = a
			}
			rc, err := c.Recover(ctx(t), src)
			if err != nil {
				t.Fatal(err)
			}
			if rc.Source != "b" {
				t.Fatalf("recovered from %s after %d attempts; want b", rc.Source, rc.Attempts)
			}
			for _, op := range r.acked("b") {
				if !slices.Contains(rc.Ops, op) {
					t.Fatalf("op %d acknowledged by b is missing from the recovery %v", op, rc.Ops)
				}
			}
		})
	}
}

// A recovery named no source starts from the copy holding the highest term, wherever it
// stands among the writers: a superseded copy that still believes it is primary (paused
// before it learned) is passed over, so the first attempt succeeds.
func TestRecoveryStartsFromTheHighestTerm(t *testing.T) {
	r := memRig(t, nil)
	a, b, c := r.add("a", nil), r.add("b", nil), r.add("c", nil)
	r.promote(a, 3)
	r.submit(a, 5)
	r.waitAcked(a, 5)
	a.Pause()
	defer a.Resume()
	r.promote(b, 4)
	r.submit(b, 5)
	r.waitAcked(b, 5)
	rctx, cancel := context.WithTimeout(ctx(t), 5*time.Second)
	defer cancel()
	rc, err := c.Recover(rctx, nil)
	if err != nil {
		t.Fatalf("recovery beside a paused, superseded a: %v", err)
	}
	if rc.Source != "b" || rc.Attempts != 1 {
		t.Fatalf("recovery from %s in %d attempts; want from b (term 4) at once", rc.Source, rc.Attempts)
	}
}

// A recovery's snapshot read retries a .tlog read the store did not answer, within the
// same attempt.
func TestRecoverySnapshotRetriesARead(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	st := newFailStore(r.st, "get", func(key string) bool { return strings.HasSuffix(key, ".tlog") }, 1, unanswered)
	c := r.add("c", st)
	r.promote(a, 1)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	rc, err := c.Recover(ctx(t), nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.n.Load() >= 0 || rc.Attempts != 1 || !slices.Equal(rc.Ops, r.acked("a")) {
		t.Fatalf("recovery %+v (injected failures left %d); want every op at the first attempt, past its failed read", rc, st.n.Load()+1)
	}
}
