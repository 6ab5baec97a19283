package explore

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// Judge runs a scenario and returns the invariants it violated. Runs are nondeterministic
// (goroutine scheduling), so the same scenario may answer differently. An error is a
// harness problem, not a verdict.
type Judge func(ctx context.Context, sc *scenarios.Scenario) (violated []history.Invariant, err error)

// ShrinkOptions tune Shrink.
type ShrinkOptions struct {
	// Tries is how many judge runs in a row a candidate must fail (violate the target) to be
	// kept; 0 means 3.
	Tries int
	// MaxRuns is the budget of judge runs; 0 means 400.
	MaxRuns int
	// Describe tells what the shrunk scenario shows, for its description; nil describes its
	// steps.
	Describe func(sc *scenarios.Scenario) string
	// Settle, when above 0, asks the result to fail Settle runs in a row: a candidate that
	// failed Tries times may still miss now and then (a race the schedule does not pin), so
	// the shrunk scenario is replayed Settle times and, when it misses, the shrink walks back
	// through the candidates it kept, from the smallest, to the first that fails every one
	// of Settle runs (or, when none does, the one with the longest run of failures). At most
	// 10*Settle runs are spent on it, beside MaxRuns.
	Settle int
}

// ShrinkStats say what a shrink cost and achieved.
type ShrinkStats struct {
	Runs                    int // judge runs spent
	StepsBefore, StepsAfter int
	// SettleRuns and SettleHits are the runs spent settling the result and how many of the
	// chosen candidate's failed in a row; Backtracked how many kept candidates the settling
	// walked back past (0: the smallest one replays).
	SettleRuns, SettleHits, Backtracked int
}

// errBudget ends a shrink whose judge runs are spent; Shrink itself reports no error then.
var errBudget = errors.New("explore: shrink budget spent")

// Shrink reduces a scenario that violates target to a smaller one that still does: it drops
// steps (ddmin), weakens the faults that remain (a lost answer becomes a delay, a blackhole a
// refusal, windows and delays halve, times come earlier) and lowers counts (idle writers,
// clients, rate, duration), to a fixpoint or until MaxRuns judge runs are spent. A candidate
// is kept only when the loader accepts it and every one of Tries runs violates target; a
// judge error counts as a run that did not. The result, parsed by the loader, expects
// verdict fail with target violated and says in its description what it shows. When ctx
// ends, Shrink returns the smallest scenario found so far with ctx's error.
func Shrink(ctx context.Context, sc *scenarios.Scenario, target history.Invariant, judge Judge, o ShrinkOptions) (*scenarios.Scenario, ShrinkStats, error) {
	if o.Tries <= 0 {
		o.Tries = 3
	}
	if o.MaxRuns <= 0 {
		o.MaxRuns = 400
	}
	start, err := reparse(sc)
	if err != nil {
		return nil, ShrinkStats{}, fmt.Errorf("explore: the scenario to shrink does not load: %w", err)
	}
	s := &shrinker{ctx: ctx, target: target, judge: judge, o: o, best: start, tried: map[string]bool{}, kept: []*scenarios.Scenario{start}}
	for s.stop == nil {
		dropped := s.ddmin()
		weakened := s.weaken()
		lowered := s.lower()
		if !dropped && !weakened && !lowered {
			break
		}
	}
	stats := ShrinkStats{Runs: s.runs, StepsBefore: len(sc.Steps)}
	if s.stop == nil || errors.Is(s.stop, errBudget) {
		s.settle(&stats)
	}
	stats.StepsAfter = len(s.best.Steps)
	out, err := s.result(sc)
	if err != nil {
		return nil, stats, err
	}
	if s.stop != nil && !errors.Is(s.stop, errBudget) {
		return out, stats, s.stop
	}
	return out, stats, nil
}

// shrinker is the state of one shrink: the smallest failing scenario so far, the runs spent,
// the candidates already tried, and why it stopped early (nil while it goes on).
type shrinker struct {
	ctx    context.Context
	target history.Invariant
	judge  Judge
	o      ShrinkOptions
	best   *scenarios.Scenario
	kept   []*scenarios.Scenario // every candidate kept, the start first, best last
	runs   int
	tried  map[string]bool
	stop   error
}

// settle makes best a candidate that fails o.Settle runs in a row, walking back through the
// kept candidates from the smallest; see ShrinkOptions.Settle.
func (s *shrinker) settle(st *ShrinkStats) {
	if s.o.Settle <= 0 {
		return
	}
	budget := 10 * s.o.Settle
	bestRun, pick := -1, len(s.kept)-1
	for i := len(s.kept) - 1; i >= 0 && st.SettleRuns < budget; i-- {
		run := 0
		for run < s.o.Settle && st.SettleRuns < budget && s.ctx.Err() == nil {
			st.SettleRuns++
			violated, err := s.judge(s.ctx, s.kept[i])
			if err != nil || !slices.Contains(violated, s.target) {
				break
			}
			run++
		}
		if run > bestRun {
			bestRun, pick = run, i
		}
		if run == s.o.Settle || s.ctx.Err() != nil {
			break
		}
	}
	s.best, st.SettleHits, st.Backtracked = s.kept[pick], bestRun, len(s.kept)-1-pick
}

// try judges a candidate and keeps it when it loads and fails on every try.
func (s *shrinker) try(c *scenarios.Scenario) bool {
	if s.stop != nil {
		return false
	}
	parsed, err := reparse(c)
	if err != nil || s.tried[string(parsed.Raw)] {
		return false
	}
	s.tried[string(parsed.Raw)] = true
	for i := 0; i < s.o.Tries; i++ {
		if err := s.ctx.Err(); err != nil {
			s.stop = err
			return false
		}
		if s.runs >= s.o.MaxRuns {
			s.stop = errBudget
			return false
		}
		s.runs++
		violated, err := s.judge(s.ctx, parsed)
		if err != nil || !slices.Contains(violated, s.target) {
			return false
		}
	}
	s.best = parsed
	s.kept = append(s.kept, parsed)
	return true
}

// ddmin drops chunks of steps, halving the chunks when no chunk can go, down to single
// steps.
func (s *shrinker) ddmin() bool {
	changed := false
	for n := 2; s.stop == nil && len(s.best.Steps) > 0; {
		steps := len(s.best.Steps)
		n = min(n, steps)
		size := (steps + n - 1) / n
		reduced := false
		for lo := 0; lo < steps && s.stop == nil; lo += size {
			if s.try(withoutSteps(s.best, lo, min(lo+size, steps))) {
				reduced, changed = true, true
				n = max(n-1, 2)
				break
			}
		}
		if !reduced {
			if n >= steps {
				break
			}
			n = min(2*n, steps)
		}
	}
	return changed
}

// weaken replaces each step by a weaker form of it for as long as the failure persists.
func (s *shrinker) weaken() bool {
	changed := false
	for i := 0; i < len(s.best.Steps) && s.stop == nil; i++ {
		for progress := true; progress && s.stop == nil; {
			progress = false
			for _, w := range weaker(s.best.Steps[i]) {
				c := clone(s.best)
				c.Steps[i] = w
				if s.try(c) {
					progress, changed = true, true
					break
				}
			}
		}
	}
	return changed
}

// result is the shrunk scenario as a regression case: expecting the target violated, with a
// description of what it shows.
func (s *shrinker) result(orig *scenarios.Scenario) (*scenarios.Scenario, error) {
	out := clone(s.best)
	narrative := describeSteps(out, s.target)
	if s.o.Describe != nil {
		narrative = s.o.Describe(out)
	}
	variant := out.Protocol
	if variant == "" {
		variant = string(fence.Correct)
	}
	out.Description = fmt.Sprintf("Found by exploration (seed %d, variant %s): %s", orig.Seed, variant, narrative)
	// The judged bounds stay: the violation was found against them (a liveness bound dropped
	// here once made every TimeToFence kill replay as a pass).
	out.Expect = scenarios.Expect{Verdict: "fail", Violated: []history.Invariant{s.target}, FaultsMustFire: s.best.Expect.FaultsMustFire,
		Serving: s.best.Expect.Serving, MaxTimeToFence: s.best.Expect.MaxTimeToFence, MaxTimeToAck: s.best.Expect.MaxTimeToAck,
		ServesAfterHeal: s.best.Expect.ServesAfterHeal}
	parsed, err := reparse(out)
	if err != nil {
		return nil, fmt.Errorf("explore: the shrunk scenario does not load: %w", err)
	}
	return parsed, nil
}

// describeSteps is the default narrative: the target and the steps that break it.
func describeSteps(sc *scenarios.Scenario, target history.Invariant) string {
	var parts []string
	for _, st := range sc.Steps {
		what := string(st.Action)
		if st.Action == "http" {
			what = httpKind(st.Params.Rule) + " on " + st.Params.Rule.Key
		}
		if st.Params.Writer != "" {
			what += " (" + st.Params.Writer + ")"
		}
		parts = append(parts, what)
	}
	if len(parts) == 0 {
		return target + " fails with no fault at all."
	}
	return fmt.Sprintf("%s fails after %s.", target, strings.Join(parts, ", then "))
}

// reparse marshals a scenario and loads the text back, as `fencebench validate` would.
func reparse(sc *scenarios.Scenario) (*scenarios.Scenario, error) {
	data, err := scenarios.Marshal(sc)
	if err != nil {
		return nil, err
	}
	return scenarios.Parse(sc.Name+".yaml", data, scenarios.Options{Variants: variantNames()})
}

// clone copies a scenario deeply enough that changing the copy's writers, steps (their
// triggers included) and expectations leaves the original alone.
func clone(sc *scenarios.Scenario) *scenarios.Scenario {
	c := *sc
	c.Writers = slices.Clone(sc.Writers)
	c.Kills = slices.Clone(sc.Kills)
	c.Steps = slices.Clone(sc.Steps)
	for i := range c.Steps {
		if t := c.Steps[i].After; t != nil {
			cp := *t
			c.Steps[i].After = &cp
		}
	}
	c.Expect.Violated = slices.Clone(sc.Expect.Violated)
	c.Expect.Fenced = slices.Clone(sc.Expect.Fenced)
	c.Raw = nil
	return &c
}

// withoutSteps is sc without steps [lo, hi).
func withoutSteps(sc *scenarios.Scenario, lo, hi int) *scenarios.Scenario {
	c := clone(sc)
	c.Steps = slices.Delete(c.Steps, lo, hi)
	for i := range c.Steps {
		c.Steps[i].Index = i
	}
	return c
}
