package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
)

// TestQuorumLossPasses runs the quorum-loss scenario on the run's single-drive local MinIO:
// the cell gets its own MinIO over four drives, two of them go away below the write quorum
// and come back, and the correct protocol passes (the checker finds every invariant held).
// Both drive faults are in the history, and the ledger shows PUTs answered with a 5xx while
// the drives were away.
func TestQuorumLossPasses(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	if testing.Short() {
		t.Skip("starts a MinIO over four drives")
	}
	sum, err := Run(context.Background(), pick(t, "quorum-loss"),
		Options{Out: t.TempDir(), Env: env.Local{Local: testenv.MinIO(t)}, Seed: 1, NoReports: true})
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Cells[0]
	if c.Verdict != checker.Pass {
		t.Fatalf("verdict %s (%s%s)", c.Verdict, c.Error, strings.Join(c.Result.Reasons, "; "))
	}
	var starts, ends, failed, conditional int
	for _, e := range c.Events {
		if strings.HasPrefix(e.Detail, string(scenarios.DriveOffline)) {
			switch e.Kind {
			case history.FaultStart:
				starts++
			case history.FaultEnd:
				ends++
			}
		}
	}
	for _, l := range c.Ledger {
		if l.Forwarded && l.Status >= 500 && l.Method == "PUT" {
			failed++
			if l.IfMatch != "" || l.IfNoneMatch != "" {
				conditional++
			}
		}
	}
	if starts != 2 || ends != 2 {
		t.Errorf("drive faults: %d started, %d ended; want 2 and 2", starts, ends)
	}
	if failed == 0 {
		t.Errorf("no PUT answered with a 5xx while two of four drives were away")
	}
	t.Logf("PUTs answered 5xx while the drives were away: %d (%d conditional)", failed, conditional)
}

// TestStoreStepsNeedTheLocalStack: on a store the bench does not run, a scenario that acts on
// the store is a harness error that names the requirement, not a verdict.
func TestStoreStepsNeedTheLocalStack(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	prefix := testenv.Prefix(t) + "run/"
	_, ext := testenv.ExternalMinIO(t, prefix)
	sum, err := Run(context.Background(), pick(t, "steady-state", "quorum-loss"),
		Options{Out: t.TempDir(), Env: ext, Prefix: prefix, Seed: 1, NoReports: true, Cleanup: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) != 1 || sum.Cells[0].Scenario != "steady-state" || sum.Cells[0].Verdict != checker.Pass {
		t.Fatalf("cells %+v; want steady-state alone, passing", sum.Cells)
	}
	if len(sum.NotApplicable) != 1 || !strings.HasPrefix(sum.NotApplicable[0], "quorum-loss:") ||
		!strings.Contains(sum.NotApplicable[0], "--stack local") {
		t.Fatalf("not applicable %q; want quorum-loss, naming the local stack", sum.NotApplicable)
	}
	if sum.ExitCode() != outcome.ExitPass {
		t.Fatalf("exit %d; a scenario the stack cannot run must not turn the run red", sum.ExitCode())
	}
}

const restartDoc = `name: store-restart
duration: 6s
writers:
  - {id: a, role: primary, term: 1}
  - {id: b, role: standby}
traffic: {clients: 2, rate: 100/s, sync_every: 10ops, sync_interval: 50ms}
steps:
  - at: 1s
    store-restart: {down: 2500ms}
  - at: 5s
    promote: {writer: b, term: 2}
expect:
  verdict: pass
  fenced: [a]
  min_acked: 20
`

// TestStoreRestartMidRun restarts the run's MinIO mid-cell: the liveness watch holds off for
// the declared restart (no harness error, the run goes on), the writers meet the outage, and
// the correct protocol passes on the same data after it.
func TestStoreRestartMidRun(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	if testing.Short() {
		t.Skip("restarts a MinIO")
	}
	var scs []*scenarios.Scenario
	for _, name := range []string{"store-restart", "after-store-restart"} {
		doc := strings.Replace(restartDoc, "name: store-restart", "name: "+name, 1)
		sc, err := scenarios.Parse(name+".yaml", []byte(doc), scenarios.Options{Variants: variants()})
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, sc)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	srv, err := compose.StartLocal(ctx, compose.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	sum, err := Run(ctx, scs, Options{Out: t.TempDir(), Env: env.Local{Local: srv}, Seed: 1, NoReports: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Cells {
		if c.Verdict != checker.Pass {
			t.Fatalf("%s: verdict %s (%s%s)", c.ID, c.Verdict, c.Error, strings.Join(c.Result.Reasons, "; "))
		}
	}
	if len(sum.Cells) != 2 || !srv.Alive() {
		t.Fatalf("%d cells ran, store alive %v; want both cells on a live store", len(sum.Cells), srv.Alive())
	}
}
