package runner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/env"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
)

// faultEvents runs one scenario as a cell against a real store and returns its fault-start
// and fault-end events as "start|end writer name", in the order they were recorded.
func faultEvents(t *testing.T, yaml string, seed uint64) (*scenarios.Scenario, []string) {
	t.Helper()
	s, err := scenarios.Parse("events.yaml", []byte(yaml), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.MinIO(t)
	sum, err := Run(context.Background(), []*scenarios.Scenario{s},
		Options{Out: t.TempDir(), Env: env.Local{Local: srv}, Prefix: testenv.Prefix(t), Seed: seed, Cleanup: true, NoReports: true})
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Cells[0]
	if c.Error != "" {
		t.Fatalf("cell error: %s", c.Error)
	}
	var out []string
	for _, e := range c.Events {
		switch e.Kind {
		case history.FaultStart:
			out = append(out, "start "+e.Writer+" "+e.Detail)
		case history.FaultEnd:
			out = append(out, "end "+e.Writer+" "+e.Detail)
		}
	}
	return s, out
}

// TestFaultEventsOfAStepSequence: every kind of fault step, its window, a heal and the wind
// down record the fault-start and fault-end events the reports and the checker read: one
// start when a fault opens, one end when it closes, flap phases one pair each.
func TestFaultEventsOfAStepSequence(t *testing.T) {
	t.Parallel() // a cell of its own on its own prefix, waiting on scenario time
	const seed = 7
	s, got := faultEvents(t, `
name: fault-events
duration: 1300ms
traffic: {clients: 0}
writers:
  - {id: a, role: primary, term: 1}
  - {id: b, role: standby}
steps:
  - at: 0ms
    latency: {writer: a, delay: 5ms}
  - at: 100ms
    bandwidth: {writer: a, kbps: 100000}
  - at: 200ms
    flap: {writer: a, on: 60ms, off: 60ms}
    for: 300ms
  - at: 550ms
    for: 100ms
    http: {writer: a, name: r1, match: {method: HEAD}, action: status, status: 503}
  - at: 560ms
    pause: b
    for: 100ms
  - at: 700ms
    partition: {writer: b, mode: blackhole}
  - at: 800ms
    heal: b
  - at: 850ms
    slow-close: {writer: a, delay: 10ms}
  - at: 900ms
    crash: b
  - at: 1000ms
    pause: a
  - at: 1000ms
    http: {writer: a, name: r2, match: {method: HEAD}, action: status, status: 503}
`, seed)
	name := func(i int) string { return s.Steps[i].FaultName() }
	want := []string{"start a " + name(0), "start a " + name(1)}
	on := false
	for _, p := range Plan(s, seed) {
		if p.Step != 2 {
			continue
		}
		switch {
		case strings.HasSuffix(p.String(), "flap-on a"):
			want, on = append(want, "start a "+name(2)), true
		case strings.HasSuffix(p.String(), "flap-off a"), strings.HasSuffix(p.String(), "heal-window a") && on:
			want, on = append(want, "end a "+name(2)), false
		}
	}
	want = append(want,
		"start a r1", "start b "+name(4), "end a r1", "end b "+name(4),
		"start b "+name(5), "end b "+name(5),
		"start a "+name(7), "start b "+name(8), "start a "+name(9), "start a r2",
		// wind down: rules, then network faults in the order they opened, then pauses
		"end a r2", "end a "+name(0), "end a "+name(1), "end a "+name(7), "end a "+name(9))
	sameEvents(t, got, want)
	if n := len(want); n < 20 {
		t.Fatalf("the flap produced too few phases to test: %d events", n)
	}
}

// TestWindowHealsItsFaultAlone: when the window of one network fault ends, only that fault
// heals; a latency opened before it on the same path stays until the wind down.
func TestWindowHealsItsFaultAlone(t *testing.T) {
	t.Parallel() // a cell of its own on its own prefix, waiting on scenario time
	s, got := faultEvents(t, `
name: window-alone
duration: 600ms
traffic: {clients: 0}
writers:
  - {id: a, role: primary, term: 1}
steps:
  - at: 0ms
    latency: {writer: a, delay: 5ms}
  - at: 100ms
    for: 100ms
    reset: a
`, 1)
	a, b := s.Steps[0].FaultName(), s.Steps[1].FaultName()
	want := []string{"start a " + a, "start a " + b, "end a " + b, "end a " + a}
	sameEvents(t, got, want)
}

func sameEvents(t *testing.T, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("fault events differ\ngot:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

// TestRaceThatWentTheOtherWay: a fault waiting for an event its writer never reaches (b is
// never fenced: nobody supersedes it) does not turn a correct run inconclusive; the verdict
// stays pass and says which race went the other way. A fault waiting on a clock that never
// came would still gate the run.
func TestRaceThatWentTheOtherWay(t *testing.T) {
	t.Parallel() // a cell of its own on its own prefix, waiting on scenario time
	s, err := scenarios.Parse("other-way.yaml", []byte(`
name: other-way
duration: 1200ms
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 50ms}
writers:
  - {id: a, role: primary, term: 1}
  - {id: b, role: standby}
steps:
  - after: {writer: a, event: fenced}
    pause: a
    for: 100ms
expect:
  verdict: pass
  min_acked: 20
`), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	srv := testenv.MinIO(t)
	sum, err := Run(context.Background(), []*scenarios.Scenario{s},
		Options{Out: t.TempDir(), Env: env.Local{Local: srv}, Prefix: testenv.Prefix(t), Seed: 1, Cleanup: true, NoReports: true})
	if err != nil {
		t.Fatal(err)
	}
	c := sum.Cells[0]
	if c.Verdict != "pass" {
		t.Fatalf("verdict %s, want pass: %v", c.Verdict, c.Result.Reasons)
	}
	want := `the race went the other way: a never reached its fenced event, so declared fault`
	if !slices.ContainsFunc(c.Result.Reasons, func(r string) bool { return strings.Contains(r, want) }) {
		t.Fatalf("reasons %q do not say the race went the other way", c.Result.Reasons)
	}
	if len(c.Result.Attestation) != 1 || c.Result.Attestation[0].Missed == "" || c.Result.Attestation[0].Fired {
		t.Fatalf("attestation %+v: want one unfired fault with its missed event", c.Result.Attestation)
	}
}
