package runner

import (
	"context"
	"testing"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
)

// TestJobsRunCellsSideBySide: with Jobs 2 on a real MinIO, the cells of three scenarios and a
// kill run two at a time, and the summary lists every cell once, in plan order, each with the
// verdict it earns alone (pass, killed); a scenario that acts on the store (drive-offline)
// runs alone, after the others, and keeps its place in the plan.
func TestJobsRunCellsSideBySide(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	if testing.Short() {
		t.Skip("starts MinIO")
	}
	var scs []*scenarios.Scenario
	for _, n := range []string{"steady-state", "stale-grant", "contended-cas"} {
		s, err := scenarios.Resolve([]string{n}, scenarios.Options{Variants: variants()})
		if err != nil {
			t.Fatal(err)
		}
		scs = append(scs, s...)
	}
	store, err := scenarios.Parse("store.yaml", []byte(`
name: drive-away
duration: 1500ms
store: {drives: 4}
traffic: {clients: 2, rate: 100/s, sync_every: 10ops, sync_interval: 50ms}
writers:
  - {id: a, role: primary, term: 1}
steps:
  - after: {writer: a, event: acked, count: 2}
    drive-offline: {drive: 1}
    for: 300ms
expect:
  verdict: pass
  min_acked: 10
`), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	scs = append(scs[:1], append([]*scenarios.Scenario{store}, scs[1:]...)...)
	srv := testenv.MinIO(t)
	sum, err := Run(context.Background(), scs, Options{Out: t.TempDir(), Env: env.Local{Local: srv},
		Prefix: testenv.Prefix(t), Seed: 3, Matrix: true, Jobs: 2, Cleanup: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"steady-state", "drive-away", "stale-grant", "stale-grant--no-term-floor", "contended-cas"}
	if len(sum.Cells) != len(want) {
		t.Fatalf("%d cells, want %d", len(sum.Cells), len(want))
	}
	for i, c := range sum.Cells {
		if c.ID != want[i] {
			t.Errorf("cell %d is %s, want %s", i, c.ID, want[i])
		}
		if c.Verdict != "pass" {
			t.Errorf("%s: %s %s %v", c.ID, c.Verdict, c.Error, c.Result.Reasons)
		}
	}
	// Two cells ran at the same time: the first two cells of the pool start together.
	a, b := sum.Cells[0], sum.Cells[2]
	if !a.Started.Before(b.Started.Add(b.Duration)) || !b.Started.Before(a.Started.Add(a.Duration)) {
		t.Errorf("%s (%v + %v) and %s (%v + %v) did not overlap", a.ID, a.Started, a.Duration, b.ID, b.Started, b.Duration)
	}
	drive := sum.Cells[1]
	for _, c := range sum.Cells {
		if c != drive && c.Started.Add(c.Duration).After(drive.Started) {
			t.Errorf("%s ended at %v, after the store cell started at %v", c.ID, c.Started.Add(c.Duration), drive.Started)
		}
	}
}
