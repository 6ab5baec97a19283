package runner

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/fencebench/fencebench/adapters/fencelog"
	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/system"
)

// handoffOf checks that the cell's source a handed over to t (a Handoff ok) and that
// HandoffResolves was judged on the copy named, not trivially.
func handoffOf(t *testing.T, c *outcome.CellResult) {
	t.Helper()
	handed := false
	for _, e := range c.Events {
		handed = handed || e.Kind == history.Handoff && e.Writer == "a" && e.Detail == "t" && e.Outcome == history.OK
	}
	if !handed {
		t.Errorf("%s: no handoff of a to t in the history", c.ID)
	}
	for _, r := range c.Result.Invariants {
		if r.Name == history.HandoffResolves && (r.Status != checker.Pass || strings.Contains(r.Explanation, "no copy was named")) {
			t.Errorf("%s: HandoffResolves %s: %s", c.ID, r.Status, r.Explanation)
		}
	}
}

// TestSystemRelocationOnSim: the catalogue's clean relocation, unchanged, runs against the
// bench's own protocol in process on the simulated stack: a is asked to relocate, stands down
// once its sync in flight ended, and t is promoted at the next term; every acknowledged op
// survives and t ends serving. A node that answers relocate and then acknowledges the writes a
// stale client still sends it without making them durable (ackAfterHandoff) is caught by
// NoAckedWriteLoss: the checker sees a relocation bug through the same path.
func TestSystemRelocationOnSim(t *testing.T) {
	sc := catalogueScenario(t, "relocation")
	if err := ValidateForSystem(sc, fencelogHello, false); err != nil {
		t.Fatal(err)
	}
	sum, _ := runSysSim(t, SystemOptions{Launcher: system.InProcess("fencelog", fencelog.System{})}, sc)
	c := sum.Cells[0]
	if c.Verdict != checker.Pass {
		t.Fatalf("correct relocation on sim: %s %s %v\n%s", c.Verdict, c.Error, c.Result.Reasons, c.Result.Narrative)
	}
	handoffOf(t, c)
	t.Logf("correct: %d acked, %s", c.Result.Acked, c.Result.Narrative)
	var late atomic.Int64
	sum, _ = runSysSim(t, SystemOptions{Launcher: system.InProcess("ack-after-handoff", ackAfterHandoff{&late}),
		Kill: true, Violates: []history.Invariant{history.NoAckedWriteLoss}}, sc)
	if c := sum.Cells[0]; c.Verdict != checker.Pass || late.Load() == 0 {
		t.Errorf("a node that acknowledges after its handoff survived (%d late acks): %s %s %v", late.Load(), c.Verdict, c.Error, c.Result.Reasons)
	} else {
		t.Logf("ack-after-handoff: %d late acks, %v", late.Load(), c.Result.Reasons)
	}
}

// TestSystemRelocationThroughTheBoundary: the same relocation with the nodes as processes on
// MinIO: relocate crosses the process protocol and t ends serving.
func TestSystemRelocationThroughTheBoundary(t *testing.T) {
	sc := catalogueScenario(t, "relocation")
	sum, err := runSys(t, SystemOptions{Launcher: procSystem(t)}, sc)
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		t.Fatalf("%s %s %v\n%s", c.Verdict, c.Error, c.Result.Reasons, c.Result.Narrative)
	}
	handoffOf(t, c)
}

// TestSystemRelocationRefusals: a relocation step needs the relocate and promote capabilities,
// and the simulated copies' own handoff parameters (abort, lose_handoff, prehydrate) are
// refused for a system, naming the step's line.
func TestSystemRelocationRefusals(t *testing.T) {
	noReloc := system.Hello{Name: "static", Capabilities: []string{system.CapPromote, system.CapRead}}
	if err := ValidateForSystem(catalogueScenario(t, "relocation"), noReloc, true); err == nil || !strings.Contains(err.Error(), `capability "relocate"`) {
		t.Fatalf("want relocate refused without the capability, got %v", err)
	}
	for _, name := range []string{"relocation-aborted", "equal-term-hydration"} {
		err := ValidateForSystem(catalogueScenario(t, name), fencelogHello, true)
		if err == nil || !strings.Contains(err.Error(), "lose_handoff and prehydrate") || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%s: want its handoff parameters refused, got %v", name, err)
		}
	}
}

// ackAfterHandoff is the bench's own protocol with a relocation bug: once it handed the shard
// over, it acknowledges every write it is still sent at its old term without writing it.
type ackAfterHandoff struct{ late *atomic.Int64 }

func (s ackAfterHandoff) Start(ctx context.Context, cfg system.Config, emit func(system.Event)) (system.Node, system.Hello, error) {
	n, h, err := fencelog.System{}.Start(ctx, cfg, emit)
	if err != nil {
		return nil, h, err
	}
	return &lateAcker{Node: n, late: s.late}, h, nil
}

type lateAcker struct {
	system.Node
	late   *atomic.Int64
	term   atomic.Int64
	handed atomic.Bool
}

func (n *lateAcker) Promote(ctx context.Context, term int64) error {
	err := n.Node.Promote(ctx, term)
	if err == nil {
		n.term.Store(term)
	}
	return err
}

func (n *lateAcker) Relocate(ctx context.Context, term int64, target string) error {
	err := n.Node.(system.Relocator).Relocate(ctx, term, target)
	if err == nil {
		n.handed.Store(true)
	}
	return err
}

func (n *lateAcker) Write(ctx context.Context, op int64, payload string) (int64, error) {
	if n.handed.Load() {
		n.late.Add(1)
		return n.term.Load(), nil
	}
	return n.Node.Write(ctx, op, payload)
}
