package runner

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
)

// unvalidated builds a scenario the way a caller skipping validation could: one primary,
// and whatever change makes it out of bounds.
func unvalidated(name string, change func(*scenarios.Scenario)) *scenarios.Scenario {
	s := &scenarios.Scenario{Name: name, Duration: time.Second, Protocol: "correct",
		Writers: []scenarios.Writer{{ID: "a", Role: "primary", Term: 1}},
		Traffic: scenarios.Traffic{Clients: 2, Rate: 100, SyncEvery: 20, SyncInterval: 50 * time.Millisecond},
		Expect:  scenarios.Expect{Verdict: "pass", FaultsMustFire: "all"}}
	change(s)
	return s
}

func flapStep(at, forWin, on, off time.Duration) scenarios.Step {
	return scenarios.Step{Trigger: scenarios.TriggerAt, At: at, For: forWin, Action: "flap",
		Params: scenarios.Params{Writer: "a", On: on, Off: off}}
}

// TestPlanBoundedWithoutValidation: a flap of 1us phases (a million toggles a second) and
// windows reaching past any time still plan a bounded schedule, quickly.
func TestPlanBoundedWithoutValidation(t *testing.T) {
	limit := int(scenarios.Limit("schedule").Max)
	cases := map[string]*scenarios.Scenario{
		"1us flap": unvalidated("flap", func(s *scenarios.Scenario) {
			s.Steps = []scenarios.Step{flapStep(0, 0, time.Microsecond, time.Microsecond)}
		}),
		"zero phases": unvalidated("zero", func(s *scenarios.Scenario) {
			s.Steps = []scenarios.Step{flapStep(0, time.Second, 0, 0)}
		}),
		"endless window": unvalidated("endless", func(s *scenarios.Scenario) {
			s.Duration = math.MaxInt64
			s.Steps = []scenarios.Step{flapStep(time.Second, math.MaxInt64, time.Hour*1e6, time.Hour*1e6)}
		}),
		"many flaps": unvalidated("many", func(s *scenarios.Scenario) {
			for range 100 {
				s.Steps = append(s.Steps, flapStep(0, 0, 10*time.Millisecond, 10*time.Millisecond))
			}
		}),
	}
	for name, s := range cases {
		start := time.Now()
		plan := Plan(s, 1)
		if len(plan) > limit+1 {
			t.Errorf("%s: %d planned actions, bound %d", name, len(plan), limit)
		}
		for i := 1; i < len(plan); i++ {
			if plan[i].At >= 0 && plan[i].At < plan[i-1].At {
				t.Errorf("%s: plan out of order at %d: %v after %v", name, i, plan[i], plan[i-1])
				break
			}
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: planning took %v", name, d)
		}
	}
}

// TestPlannedActionsBoundThePlan: the count validation checks is an upper bound on what the
// runner plans, step by step, for every shipped scenario and for tight flaps, over many seeds.
func TestPlannedActionsBoundThePlan(t *testing.T) {
	scs := catalogue(t)
	scs = append(scs, unvalidated("tight", func(s *scenarios.Scenario) {
		s.Duration = 3 * time.Second
		s.Steps = []scenarios.Step{flapStep(0, 0, 10*time.Millisecond, 10*time.Millisecond),
			flapStep(time.Second, 500*time.Millisecond, 10*time.Millisecond, 37*time.Millisecond),
			flapStep(2999*time.Millisecond, 0, 10*time.Millisecond, 10*time.Millisecond)}
	}))
	for _, s := range scs {
		for seed := range uint64(50) {
			per := map[int]int64{}
			for _, p := range Plan(s, seed) {
				per[p.Step]++
			}
			for i, st := range s.Steps {
				if bound := scenarios.PlannedActions(s, st); per[i] > bound {
					t.Fatalf("%s seed %d step %d: planned %d actions, bound %d", s.Name, seed, i, per[i], bound)
				}
			}
		}
	}
}

// TestAdmitRefusesOutOfBounds: each quantity the runner's resources depend on is refused out
// of its range, naming the field and the range; an in-bounds scenario is admitted.
func TestAdmitRefusesOutOfBounds(t *testing.T) {
	if err := admit(unvalidated("fine", func(*scenarios.Scenario) {})); err != nil {
		t.Fatalf("an in-bounds scenario was refused: %v", err)
	}
	cases := map[string]func(*scenarios.Scenario){
		"duration":                func(s *scenarios.Scenario) { s.Duration = 0 },
		"writers":                 func(s *scenarios.Scenario) { s.Writers = make([]scenarios.Writer, 5001) },
		"traffic.clients":         func(s *scenarios.Scenario) { s.Traffic.Clients = 10_000_000 },
		"traffic.rate":            func(s *scenarios.Scenario) { s.Traffic.Rate = 1e10 },
		"traffic.rate × duration": func(s *scenarios.Scenario) { s.Duration, s.Traffic.Rate = 9*time.Minute, 5000 },
		"steps":                   func(s *scenarios.Scenario) { s.Steps = make([]scenarios.Step, 257) },
		"schedule": func(s *scenarios.Scenario) {
			s.Steps = []scenarios.Step{flapStep(0, 0, time.Microsecond, time.Microsecond)}
		},
	}
	for field, change := range cases {
		err := admit(unvalidated("bad", change))
		want := fmt.Sprintf("%s is ", field)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), scenarios.Limit(field).Range()) {
			t.Errorf("%s: got %v, want a refusal naming %q and %s", field, err, field, scenarios.Limit(field).Range())
		}
	}
	low := unvalidated("slow", func(s *scenarios.Scenario) { s.Traffic.Rate = 1e-300 })
	if err := admit(low); err == nil || !strings.Contains(err.Error(), "traffic.rate is 1e-300") {
		t.Errorf("rate 1e-300: got %v", err)
	}
}

// TestUnboundedCellIsAHarnessError runs cells that skipped validation against a real store:
// a rate whose client interval is zero and a flap of 1us phases end as harness errors (exit
// 255) with the rest of the run intact, never as a crash of the process.
func TestUnboundedCellIsAHarnessError(t *testing.T) {
	srv := testenv.MinIO(t)
	fast := unvalidated("too-fast", func(s *scenarios.Scenario) { s.Traffic.Clients, s.Traffic.Rate = 4, 1e10 })
	flap := unvalidated("too-flappy", func(s *scenarios.Scenario) {
		s.Steps = []scenarios.Step{flapStep(0, 0, time.Microsecond, time.Microsecond)}
	})
	sum, err := Run(context.Background(), []*scenarios.Scenario{fast, flap},
		Options{Out: t.TempDir(), Env: env.Local{Local: srv}, Prefix: testenv.Prefix(t), Seed: 1, Cleanup: true, NoReports: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) != 2 {
		t.Fatalf("%d cells, want 2", len(sum.Cells))
	}
	for _, c := range sum.Cells {
		if c.Verdict != checker.Error || !strings.Contains(c.Error, "out of bounds") {
			t.Errorf("%s: verdict %s (%s), want a harness error naming the bound", c.ID, c.Verdict, c.Error)
		}
	}
	if sum.ExitCode() != outcome.ExitHarness {
		t.Fatalf("exit code %d, want %d", sum.ExitCode(), outcome.ExitHarness)
	}
}
