package runner

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/scenarios"
)

// Cell is one scenario run with one protocol variant.
type Cell struct {
	Scenario *scenarios.Scenario
	Variant  string
	// Expect says what this cell must show: the scenario's own expectation for the correct
	// protocol, or "the variant is killed" for a broken one.
	Kill *scenarios.Kill
	Seed uint64
}

// ID names the cell's folder: the scenario name, plus the variant when it is not correct.
func (c Cell) ID() string {
	if c.Variant == "" || c.Variant == string(fence.Correct) {
		return c.Scenario.Name
	}
	return c.Scenario.Name + "--" + c.Variant
}

// Cells expands scenarios into the cells a run executes. variant, when set, replaces every
// scenario's protocol; matrix adds a cell per variant each scenario declares it kills.
// seed, when non-zero, overrides every scenario's seed; a zero seed everywhere is drawn from
// draw (once per scenario) so it can be recorded and printed.
func Cells(scs []*scenarios.Scenario, variant fence.Variant, matrix bool, seed uint64, draw func() uint64) []Cell {
	var out []Cell
	for _, s := range scs {
		sd := seed
		if sd == 0 {
			sd = s.Seed
		}
		if sd == 0 {
			sd = draw()
		}
		base := s.Protocol
		if variant != "" {
			base = string(variant)
		}
		cell := Cell{Scenario: s, Variant: base, Seed: sd}
		// A scenario run with a variant it declares it kills is judged as that kill cell, so
		// the rerun command of a kill-matrix cell reproduces its verdict.
		for i := range s.Kills {
			if s.Kills[i].Variant == base {
				cell.Kill = &s.Kills[i]
			}
		}
		out = append(out, cell)
		if matrix && variant == "" {
			for i := range s.Kills {
				out = append(out, Cell{Scenario: s, Variant: s.Kills[i].Variant, Kill: &s.Kills[i], Seed: sd})
			}
		}
	}
	return out
}

// Planned is one resolved action of a cell's schedule.
type Planned struct {
	Step   int           // index into Scenario.Steps
	At     time.Duration // for time-triggered actions; -1 for event-triggered ones
	Action string        // the step's action, or one of the plan's own: planWindowEnd, planFlapOn, planFlapOff
	Writer string
}

// The plan's own actions, beside the steps' (they show in a cell's schedule as they are).
const (
	planWindowEnd = "heal-window" // a time-triggered step's window ends: its fault heals
	planFlapOn    = "flap-on"     // a flap's partitioned phase starts
	planFlapOff   = "flap-off"    // a flap's healthy phase starts
	planDone      = "done"        // already executed before the plan is followed
)

func (p Planned) String() string {
	at := "on event"
	if p.At >= 0 {
		at = p.At.String()
	}
	return fmt.Sprintf("%s step%d %s %s", at, p.Step, p.Action, p.Writer)
}

// Plan resolves the time-triggered part of a cell's schedule: every `at` step, the end of
// every `for` window of a time-triggered step, and every toggle of every flap, drawn from the
// seed. Event-triggered steps are listed with At -1 (their time depends on the run). The
// executor follows exactly this plan, so the same seed gives the same schedule. The plan never
// holds more than the schedule bound of scenarios.Bounds (plus a step's window end), and flap
// phases are held in their range, even for a scenario that skipped validation.
func Plan(s *scenarios.Scenario, seed uint64) []Planned {
	rng := rand.New(rand.NewPCG(seed, 0x5eed))
	limit := int(scenarios.Limit("schedule").Max)
	var out []Planned
	for i, st := range s.Steps {
		if len(out) >= limit {
			break
		}
		if st.Trigger != scenarios.TriggerAt {
			out = append(out, Planned{Step: i, At: -1, Action: string(st.Action), Writer: st.Params.Writer})
			continue
		}
		out = append(out, Planned{Step: i, At: st.At, Action: string(st.Action), Writer: st.Params.Writer})
		end := st.End(s.Duration)
		if st.For > 0 {
			out = append(out, Planned{Step: i, At: end, Action: planWindowEnd, Writer: st.Params.Writer})
		}
		if st.Spec().Rhythm {
			out = append(out, flapToggles(rng, i, st, end, limit-len(out))...)
		}
	}
	sort.SliceStable(out, func(a, b int) bool {
		if (out[a].At < 0) != (out[b].At < 0) {
			return out[b].At < 0
		}
		return out[a].At < out[b].At
	})
	return out
}

// flapToggles draws the on/off rhythm of a flap, at most room toggles: each phase lasts its
// nominal length (held in the flap's range) scaled by a factor in [0.5, 1.5) from the seeded
// RNG, so flaps are irregular but reproducible.
func flapToggles(rng *rand.Rand, i int, st scenarios.Step, end time.Duration, room int) []Planned {
	b := scenarios.Limit("steps[].flap.on")
	clamp := func(d time.Duration) time.Duration {
		return time.Duration(max(b.Min, min(int64(d), b.Max)))
	}
	var out []Planned
	t, on := st.At, true
	for t < end && len(out) < room {
		phase := clamp(st.Params.On)
		action := planFlapOn
		if !on {
			phase, action = clamp(st.Params.Off), planFlapOff
		}
		out = append(out, Planned{Step: i, At: t, Action: action, Writer: st.Params.Writer})
		t += time.Duration(float64(phase) * (0.5 + rng.Float64()))
		on = !on
	}
	return out
}

// admit refuses a cell whose scenario is out of bounds. Validation enforces the same ranges
// (scenarios.Bounds) with positions; admit holds them for a Scenario that never went through
// it, so a cell never divides by a zero traffic interval, starts unbounded clients or fault
// paths, or plans without limit.
func admit(sc *scenarios.Scenario) error {
	planned := int64(0)
	for _, st := range sc.Steps {
		planned = min(planned+scenarios.PlannedActions(sc, st), math.MaxInt64/2)
	}
	hold := func(field string, v int64) bool { return scenarios.Limit(field).Holds(v) }
	checks := []struct {
		field string
		ok    bool
		got   any
	}{
		{"duration", hold("duration", int64(sc.Duration)), sc.Duration},
		{"writers", hold("writers", int64(len(sc.WriterIDs()))), len(sc.WriterIDs())},
		{"traffic.clients", hold("traffic.clients", int64(sc.Traffic.Clients)), sc.Traffic.Clients},
		{"traffic.rate", sc.Traffic.Clients == 0 || scenarios.Limit("traffic.rate").HoldsRate(sc.Traffic.Rate), sc.Traffic.Rate},
		{"traffic.rate × duration", sc.TrafficOps() <= float64(scenarios.Limit("traffic.rate × duration").Max), sc.TrafficOps()},
		{"steps", hold("steps", int64(len(sc.Steps))), len(sc.Steps)},
		{"schedule", hold("schedule", planned), planned},
	}
	var bad []string
	for _, c := range checks {
		if !c.ok {
			bad = append(bad, fmt.Sprintf("%s is %v, allowed %s", c.field, c.got, scenarios.Limit(c.field).Range()))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("scenario %s is out of bounds: %s", sc.Name, strings.Join(bad, "; "))
	}
	return nil
}
