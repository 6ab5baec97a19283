package writers

import "fmt"

// role is where a writer is in its life and what it was granted. Guarded by the writer's mu.
type role struct {
	state  State
	term   int64
	target bool // became active as a relocation target: its first fence step is an adoption
	// gaveUp is the term of a handoff this copy gave up as a relocation target (0 when none):
	// it stood down at that term and takes no grant at it again.
	gaveUp int64
	// grant is the cluster's promotion count when this copy was promoted (0: never): of two
	// copies at one term (an equal-term twin), the later grant is the primary.
	grant int64
	// synced is true once a sync at this grant was durable: the copy's chain moved past
	// whatever it superseded, even if it crashed or was fenced since. seq is the fence seq
	// of its latest such sync: a copy at the same term whose chain is past it holds it.
	synced  bool
	seq     int64
	changed chan struct{} // closed and replaced on every change Settle cares about
}

// notify wakes Settle waiters.
func (r *role) notify() {
	close(r.changed)
	r.changed = make(chan struct{})
}

// become moves to state s and wakes Settle waiters.
func (r *role) become(s State) {
	r.state = s
	r.notify()
}

// leave moves from state from to state to, and reports whether it did: a copy no longer in
// from (crashed, closed, moved on) stays where it is.
func (r *role) leave(from, to State) bool {
	if r.state != from {
		return false
	}
	r.become(to)
	return true
}

// serving reports whether the writer syncs: active, or a relocation source draining.
func (r *role) serving() bool { return r.state == StateActive || r.state == StateRelocating }

// grantable says whether a standby copy may take a grant at term: a promotion, or a
// relocation's reservation. A copy that gave up a handoff at term stood down there and
// takes no grant at it again.
func (r *role) grantable(term int64) error {
	switch {
	case r.state != StateStandby:
		return fmt.Errorf("it is %s: %w", r.state, ErrNotServing)
	case r.gaveUp != 0 && r.gaveUp == term:
		return fmt.Errorf("it gave up a handoff at term %d: %w", term, ErrNotServing)
	}
	return nil
}

// reserve makes a grantable copy a relocation target at term.
func (r *role) reserve(term int64) error {
	if err := r.grantable(term); err != nil {
		return err
	}
	r.term = term
	r.become(StateTarget)
	return nil
}
