package writers

import (
	"testing"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// A copy whose seal an equal-term twin takes over before the copy reads its restore point
// must not serve from there: its restore point is the twin's lineage, and the generations it
// would write next are the twin's next ones, so its first metadata upload (made before its
// fence step refuses it) would share the twin's (term, generation) and, sorting first by
// allocation, hide the twin's acknowledged ops from every later restore read. Its promotion
// verifies the seal after the restore read and is fenced; the twin's acks survive.
func TestACopySupersededBetweenItsSealAndItsRestoreReadIsFenced(t *testing.T) {
	r := memRig(t, nil)
	r.acking("a", 5, 4)
	r.settle()
	meta := r.c.cfg.Shard.MetadataListPrefix()
	hold := newHold(r.st, func(op, key string) bool { return op == "list" && key == meta })
	b, c := r.add("b", hold), r.add("c", nil)
	hold.arm()
	done := make(chan error, 1)
	go func() { done <- b.Promote(ctx(t), 6) }()
	hold.waitHit(t) // b has sealed term 6 and is listing its restore point
	r.promote(c, 6) // c's seal takes b's key over by arbitration
	r.submit(c, 6)
	r.waitAcked(c, 6)
	close(hold.release)
	if err := <-done; !fence.IsFenced(err) || b.State() != StateFenced {
		t.Fatalf("b's promotion, superseded before its restore read: %v, b %s; want it fenced", err, b.State())
	}
	if rr := r.events(history.RestoreRead, "b"); len(rr) != 1 || rr[0].Term != 6 {
		t.Fatalf("b's restore reads %+v; want the one that found c's lineage", rr)
	}
	_ = b.Submit(100) // refused: b serves nothing
	r.submit(c, 6)
	r.waitAcked(c, 12)
	r.requireDurable(r.audit())
}

// A promotion whose restore point is at its own term (its equal-term predecessor synced)
// verifies its seal; a verify read that goes unanswered is tried again, and the copy serves.
func TestASealVerifyThatGoesUnansweredIsRetried(t *testing.T) {
	r := memRig(t, nil)
	r.acking("b", 6, 4)
	r.settle()
	key := r.c.cfg.Shard.FenceKey(6)
	st := newFailStore(r.st, "get", func(k string) bool { return k == key }, 0, unanswered)
	c := r.add("c", st)
	cancel := r.c.Bus().Subscribe(func(s Signal) {
		if s.Writer == "c" && s.Kind == history.SigClaimed {
			st.n.Store(1) // c's next read of its key is the verify
		}
	})
	defer cancel()
	if err := c.Promote(ctx(t), 6); err != nil || c.State() != StateActive {
		t.Fatalf("c's promotion over b's term-6 lineage, its verify read unanswered once: %v, c %s; want c active", err, c.State())
	}
	if n := st.n.Load(); n != -1 {
		t.Fatalf("the unanswered verify read was not met (%d left)", n+1)
	}
	if rr := r.events(history.RestoreRead, "c"); len(rr) != 1 || len(rr[0].Ops) != 4 {
		t.Fatalf("c's restore reads %+v; want one restoring b's 4 ops", rr)
	}
}
