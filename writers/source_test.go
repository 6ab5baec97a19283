package writers

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/fence"
)

// The choice of a recovery's source and the checks that it is still the one to follow, on
// copies put in each state directly: the recovery's own end-of-attempt check masks a wrong
// choice in a run (it only costs an attempt), so these rules are held here one case at a time.

// shape puts w in state st at term t with grant g, synced at seq (white-box: the source
// choice reads only these fields and the fence's token).
func shape(w *Writer, st State, t, g int64, synced bool, seq int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.role.state, w.role.term, w.role.grant, w.role.synced, w.role.seq = st, t, g, synced, seq
}

func idOf(w *Writer) string {
	if w == nil {
		return "<none>"
	}
	return w.ID()
}

// TestCurrentPrimaryChoosesByTermChainAndGrant: the highest term among active copies, then
// the copy that holds its fence chain, then the later grant; never a copy that is not active.
func TestCurrentPrimaryChoosesByTermChainAndGrant(t *testing.T) {
	r := memRig(t, nil)
	owner := r.add("owner", nil)
	r.promote(owner, 2) // active at term 2, grant 1
	r.submit(owner, 1)
	r.waitAcked(owner, 1) // its first sync took the term's key: it holds its chain
	if owner.f == nil || owner.f.Token() == "" {
		t.Fatal("a promoted copy holds no fence token")
	}
	x, y := r.add("x", nil), r.add("y", nil)

	cases := []struct {
		name         string
		x, y         func()
		owner        State
		want         string
		ownerAtTerm  int64
		ownerAtGrant int64
	}{
		{name: "no copy active", owner: StateFenced, x: func() { shape(x, StateStandby, 3, 2, false, 0) },
			y: func() { shape(y, StateRecovering, 3, 3, false, 0) }, want: "<none>"},
		{name: "only the owner is active", owner: StateActive, x: func() { shape(x, StateStandby, 5, 2, false, 0) },
			y: func() { shape(y, StatePromoting, 5, 3, false, 0) }, want: "owner"},
		{name: "a higher term listed after", owner: StateActive, x: func() { shape(x, StateActive, 3, 2, false, 0) },
			y: func() { shape(y, StateStandby, 9, 3, false, 0) }, want: "x"},
		{name: "a lower term listed after", owner: StateFenced, x: func() { shape(x, StateActive, 4, 2, false, 0) },
			y: func() { shape(y, StateActive, 3, 3, false, 0) }, want: "x"},
		{name: "the chain's holder over a later grant at its term", owner: StateActive,
			x: func() { shape(x, StateActive, 2, 7, false, 0) }, y: func() { shape(y, StateActive, 2, 8, false, 0) }, want: "owner"},
		{name: "the chain's holder listed after a later grant", owner: StateActive, ownerAtGrant: 9,
			x: func() { shape(x, StateActive, 2, 3, false, 0) }, y: func() { shape(y, StateStandby, 2, 4, false, 0) }, want: "owner"},
		{name: "a higher term over the chain's holder", owner: StateActive,
			x: func() { shape(x, StateActive, 3, 2, false, 0) }, y: func() { shape(y, StateStandby, 0, 0, false, 0) }, want: "x"},
		{name: "without a chain, the later grant", owner: StateFenced,
			x: func() { shape(x, StateActive, 4, 3, false, 0) }, y: func() { shape(y, StateActive, 4, 5, false, 0) }, want: "y"},
		{name: "without a chain, the later grant listed first", owner: StateFenced,
			x: func() { shape(x, StateActive, 4, 5, false, 0) }, y: func() { shape(y, StateActive, 4, 3, false, 0) }, want: "x"},
		{name: "equal grants: the first listed", owner: StateFenced,
			x: func() { shape(x, StateActive, 4, 5, false, 0) }, y: func() { shape(y, StateActive, 4, 5, false, 0) }, want: "x"},
		{name: "the chain's holder at a lower term loses", owner: StateActive, ownerAtTerm: 1,
			x: func() { shape(x, StateActive, 2, 3, false, 0) }, y: func() { shape(y, StateStandby, 0, 0, false, 0) }, want: "x"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			term, grant := int64(2), int64(1)
			if tc.ownerAtTerm != 0 {
				term = tc.ownerAtTerm
			}
			if tc.ownerAtGrant != 0 {
				grant = tc.ownerAtGrant
			}
			shape(owner, tc.owner, term, grant, true, 1)
			tc.x()
			tc.y()
			if got := idOf(r.c.currentPrimary()); got != tc.want {
				t.Fatalf("currentPrimary = %s, want %s", got, tc.want)
			}
		})
	}
	// A fence instance that holds no token (nothing claimed, or its chain taken) is not a
	// chain held: the later grant is chosen over it.
	unclaimed, err := fence.New(fence.Options{Store: r.st, Prefix: "p/", IndexUUID: "idx", Term: 4})
	if err != nil {
		t.Fatal(err)
	}
	shape(owner, StateFenced, 2, 1, true, 1)
	shape(x, StateActive, 4, 3, false, 0)
	x.f = unclaimed
	shape(y, StateActive, 4, 9, false, 0)
	if got := idOf(r.c.currentPrimary()); got != "y" {
		t.Fatalf("currentPrimary with x holding an unclaimed fence = %s, want y", got)
	}
	x.f = nil

	// A copy that holds a chain at a lower term, listed after one at a higher term, is not
	// chosen for its chain.
	shape(x, StateActive, 5, 2, false, 0)
	shape(y, StateActive, 4, 3, false, 0)
	y.f = owner.f
	if got := idOf(r.c.currentPrimary()); got != "x" {
		t.Fatalf("currentPrimary with y holding a chain at a lower term = %s, want x", got)
	}
	y.f = nil
}

// TestSupersedesNamesOnlyACopyPromotedAfter: a copy taking or holding src's place (promoting
// or active at a higher term or at src's term with a later grant, or stopped after it synced
// past src's chain), never src itself, a standby, a copy never granted, or an older grant.
func TestSupersedesNamesOnlyACopyPromotedAfter(t *testing.T) {
	r := memRig(t, nil)
	src, b := r.add("src", nil), r.add("b", nil)
	const term, own, ownSeq = 2, 3, 4
	cases := []struct {
		name   string
		st     State
		t, g   int64
		synced bool
		seq    int64
		want   string
	}{
		{"standby at a higher term", StateStandby, 3, 5, false, 0, ""},
		{"standby at a higher term that synced once", StateStandby, 3, 5, true, 9, ""},
		{"recovering at a higher term", StateRecovering, 3, 5, true, 9, ""},
		{"promoting at a higher term", StatePromoting, 3, 5, false, 0, "b"},
		{"active at a higher term", StateActive, 3, 5, false, 0, "b"},
		{"active at a higher term, never granted", StateActive, 3, 0, false, 0, ""},
		{"promoting, never granted", StatePromoting, 5, 0, false, 0, ""},
		{"active at src's term, a later grant", StateActive, term, own + 1, false, 0, "b"},
		{"active at src's term, the same grant", StateActive, term, own, false, 0, ""},
		{"active at src's term, an earlier grant", StateActive, term, own - 1, false, 0, ""},
		{"active at a lower term, a later grant", StateActive, term - 1, own + 5, false, 0, ""},
		{"crashed at src's term after syncing past src", StateCrashed, term, own + 1, true, ownSeq + 1, "b"},
		{"crashed at src's term after syncing to src's seq", StateCrashed, term, own + 1, true, ownSeq, "b"},
		{"crashed at src's term, src synced past it", StateCrashed, term, own + 1, true, ownSeq - 1, ""},
		{"crashed before syncing", StateCrashed, 3, own + 1, false, 0, ""},
		{"fenced at a higher term after syncing", StateFenced, 3, own + 1, true, 0, "b"},
		{"fenced at src's term, an earlier grant", StateFenced, term, own - 1, true, ownSeq + 1, ""},
		{"closed at a higher term after syncing", StateClosed, 3, own + 1, true, 9, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			shape(src, StateActive, term, own, true, ownSeq)
			shape(b, tc.st, tc.t, tc.g, tc.synced, tc.seq)
			if got := r.c.supersedes(src, term); got != tc.want {
				t.Fatalf("supersedes = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestSourceLostAndPrimaryMoved: a source is lost once it stopped, another copy was promoted
// (the grants moved or a higher term exists) or a copy supersedes it; it moved once its
// relocation epoch changed. A source that did none of these is followed.
func TestSourceLostAndPrimaryMoved(t *testing.T) {
	r := memRig(t, nil)
	src, b := r.add("src", nil), r.add("b", nil)
	const term = 2
	r.c.noteTerm(term)
	grants := r.c.grants.Add(3)
	shape(src, StateActive, term, grants, true, 4)
	shape(b, StateStandby, 0, 0, false, 0)

	check := func(what, got, want string) {
		t.Helper()
		if (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Fatalf("%s = %q, want %q", what, got, want)
		}
	}
	check("sourceLost of a healthy source", r.c.sourceLost(src, term, grants), "")
	check("primaryMoved of a healthy source", r.c.primaryMoved(src, term, 0, grants), "")
	for _, st := range []State{StateFenced, StateCrashed, StateClosed} {
		shape(src, st, term, grants, true, 4)
		check("sourceLost of a "+string(st)+" source", r.c.sourceLost(src, term, grants), "primary src is "+string(st))
	}
	shape(src, StateActive, term, grants, true, 4)
	check("sourceLost after another grant", r.c.sourceLost(src, term, grants-1), "another copy was promoted")
	r.c.noteTerm(term + 1)
	check("sourceLost under a higher term", r.c.sourceLost(src, term, grants), "another copy was promoted")
	check("sourceLost of a source at the highest term", r.c.sourceLost(src, term+1, grants), "")

	shape(b, StateActive, term+1, grants+1, false, 0)
	check("sourceLost with a copy promoted after it", r.c.sourceLost(src, term+1, grants), "b was promoted after src")
	shape(b, StateStandby, 0, 0, false, 0)

	src.mu.Lock()
	src.repl.epoch = 7
	src.mu.Unlock()
	check("primaryMoved after a relocation", r.c.primaryMoved(src, term+1, 6, grants), "primary src relocated")
	check("primaryMoved at its epoch", r.c.primaryMoved(src, term+1, 7, grants), "")
	shape(src, StateCrashed, term+1, grants, true, 4)
	check("primaryMoved of a crashed source", r.c.primaryMoved(src, term+1, 7, grants), "primary src is crashed")
}
