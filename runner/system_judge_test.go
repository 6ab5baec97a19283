package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/adapters/fencelog"
	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/system"
)

// phantomSystem is the bench's own protocol with a read that also returns an op nobody sent,
// under a name that is markup.
type phantomSystem struct{ fencelog.System }

const hostileName = `<script>alert("sys")</script>`

func (p phantomSystem) Start(ctx context.Context, cfg system.Config, emit func(system.Event)) (system.Node, system.Hello, error) {
	n, h, err := p.System.Start(ctx, cfg, emit)
	h.Name = hostileName
	return phantomNode{n}, h, err
}

type phantomNode struct{ system.Node }

func (p phantomNode) Read(ctx context.Context, term int64) ([]int64, error) {
	ops, err := p.Node.Read(ctx, term)
	return append(ops, 987654321), err
}

// TestSystemPhantomOpFails: a final read holding an op no client sent fails NoPhantomOp (a
// safety verdict about the system, not a harness error), and the system's name, which is
// the system's to choose, is escaped in the pages.
func TestSystemPhantomOpFails(t *testing.T) {
	sc := sysScenario(t, `name: sys-steady
duration: 2s
writers:
  - {id: a, role: primary, term: 1}
traffic: {clients: 2, rate: 60/s}
`)
	out := t.TempDir()
	sum, err := RunSystem(context.Background(), []*scenarios.Scenario{sc}, Options{Out: out, Env: env.Local{Local: testenv.MinIO(t)},
		Prefix: testenv.Prefix(t), Seed: 1, noTrend: true}, SystemOptions{Launcher: system.InProcess("phantom", phantomSystem{})})
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Fail {
		t.Fatalf("verdict %s %s %v, want fail", c.Verdict, c.Error, c.Result.Reasons)
	}
	if ir := invariant(c, NoPhantomOp); ir.Status != checker.Fail || !strings.Contains(ir.Narrative, "987654321") {
		t.Fatalf("NoPhantomOp %s: %s", ir.Status, ir.Narrative)
	}
	if ir := invariant(c, checker.NoAckedWriteLoss); ir.Status != checker.Pass {
		t.Fatalf("NoAckedWriteLoss %s: an extra op is no loss", ir.Status)
	}
	for _, page := range []string{filepath.Join(sum.Dir, "index.html"), filepath.Join(c.Dir, "report.html")} {
		b, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), hostileName) {
			t.Errorf("%s carries the system's name unescaped", page)
		}
	}
}

func TestOneAckerPerTerm(t *testing.T) {
	ack := func(w string, term int64, at time.Duration) history.Event {
		return history.Event{Kind: history.Ack, Writer: w, Term: term, Invoke: at, Complete: at, Ops: []int64{int64(at)}}
	}
	// a then b at term 3 (a takeover): fine; a again at 3 afterwards: two owners.
	if n, _ := oneAckerPerTerm([]history.Event{ack("a", 3, 1), ack("b", 3, 2), ack("b", 3, 3)}); n != 0 {
		t.Errorf("a handover at one term counted %d violations", n)
	}
	n, why := oneAckerPerTerm([]history.Event{ack("a", 3, 1), ack("b", 3, 2), ack("a", 3, 4), ack("b", 4, 5)})
	if n != 1 || !strings.Contains(why, "a acknowledged") {
		t.Errorf("two copies taking turns at term 3: %d violations (%s)", n, why)
	}
	if n, _ := oneAckerPerTerm([]history.Event{ack("a", 0, 1), ack("b", 0, 2), ack("a", 0, 3)}); n != 0 {
		t.Errorf("acks without terms were judged: %d", n)
	}
}
