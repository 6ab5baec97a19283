package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/explore"
	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
)

// confirmTries is how many runs on the confirming stack a shrunk failure gets to reproduce.
const confirmTries = 3

// failures shrinks, replays and confirms the first failure of each group of failures that
// violated the same invariants, up to o.Shrink groups; the others are listed as found. Only
// failures found since the last call are grouped: a resumed exploration's new failures get
// their own groups, numbered on from the earlier ones.
func (e *exploration) failures(ctx context.Context) {
	var keys []string
	groups := map[string][]found{}
	fresh := e.found[e.shrunk:]
	e.shrunk = len(e.found)
	done := len(e.x.Failures)
	for _, f := range sortedFound(fresh) {
		k := strings.Join(f.violated, ",")
		if _, ok := groups[k]; !ok {
			keys = append(keys, k)
		}
		groups[k] = append(groups[k], f)
	}
	cf := &confirmer{e: e}
	defer cf.close()
	for i, k := range keys {
		n, f := done+i, groups[k][0]
		ef := outcome.ExploredFailure{Invariants: f.violated, Target: target(f.violated), Seed: f.seed, Index: f.index,
			Steps: len(f.sc.Steps), Narrative: f.res.Result.Narrative, Confirmed: "not tried", Writers: len(f.sc.Writers),
			Rate: f.sc.Traffic.Rate}
		ef.Original = e.save(fmt.Sprintf("%d-original.yaml", n+1), f.sc.Raw)
		ef.FoundCell = e.keep(n+1, f)
		if i < e.o.Shrink && ctx.Err() == nil {
			e.shrink(ctx, n+1, f, &ef, cf)
		}
		e.x.Failures = append(e.x.Failures, ef)
	}
}

func sortedFound(fs []found) []found {
	out := slices.Clone(fs)
	slices.SortFunc(out, func(a, b found) int { return cmp.Compare(a.index, b.index) })
	return out
}

// save writes a file under failures/ and returns its path relative to the exploration.
func (e *exploration) save(name string, b []byte) string {
	rel := filepath.Join("failures", name)
	if err := os.MkdirAll(filepath.Join(e.dir, "failures"), 0o755); err == nil {
		if err := os.WriteFile(filepath.Join(e.dir, rel), b, 0o644); err != nil {
			e.log.Warn("explore: cannot save", "file", rel, "err", err)
		}
	}
	return filepath.ToSlash(rel)
}

// keep persists a failing schedule's run as it happened, with its report, as
// found-<n>/<cell>/, and returns that cell folder relative to the exploration ("" when it
// could not be written).
func (e *exploration) keep(n int, f found) string {
	id := fmt.Sprintf("found-%d", n)
	dir := filepath.Join(e.dir, id)
	c := Cell{Scenario: f.sc, Variant: e.cellVariant(), Seed: f.seed}
	r := &runner{opts: Options{RunID: id}, env: e.o.Env, dir: dir, log: e.log, down: &downState{}}
	f.res.Dir = filepath.Join(dir, c.ID())
	sum := &outcome.Summary{RunID: id, Dir: dir, Started: f.res.Started, Duration: f.res.Duration, Store: e.o.Env.Info(),
		Command: e.o.Command, Preflight: &outcome.Preflight{}, Cells: []*outcome.CellResult{f.res}}
	err := r.persist(c, f.res, 0)
	if err == nil {
		err = writeJSON(filepath.Join(dir, "run.json"), sum)
	}
	if err == nil {
		err = reports.Write(dir, sum)
	}
	if err != nil {
		e.log.Warn("explore: keeping a failing run", "run", id, "err", err)
		return ""
	}
	return id + "/" + c.ID()
}

// judge runs a candidate schedule on the exploring stack and names what it violated.
func (e *exploration) judge(seed uint64) explore.Judge {
	return func(ctx context.Context, sc *scenarios.Scenario) ([]string, error) {
		res := e.run(ctx, e.o.Env, sc, seed)
		if res.Verdict == checker.Error {
			return nil, errors.New(res.Error)
		}
		return violatedBy(res), nil
	}
}

// shrink minimises failure f while it still violates its target, writes the result as a
// scenario, replays it, records one run of it with its reports and confirms it.
func (e *exploration) shrink(ctx context.Context, n int, f found, ef *outcome.ExploredFailure, cf *confirmer) {
	// Settled on as many runs in a row as the replays that follow will make: a shrunk
	// scenario is only worth its size when it replays.
	start := f.sc
	if p := explore.Pin(f.sc, f.res.Trace); p != nil && e.reproduces(ctx, p, f.seed, ef.Target, 3) {
		start, ef.Pinned = p, true
	}
	small, stats, err := explore.Shrink(ctx, start, ef.Target, e.judge(f.seed), explore.ShrinkOptions{Settle: e.o.Replays, MaxRuns: e.shrinkRuns()})
	ef.ShrinkRuns = stats.Runs + stats.SettleRuns
	e.log.Info("explore: shrunk", "seed", f.seed, "steps", stats.StepsAfter, "settled", stats.SettleHits, "backtracked", stats.Backtracked)
	if err != nil || small == nil {
		e.log.Warn("explore: shrinking failed", "seed", f.seed, "err", err)
		small = start
	}
	small.Description = fmt.Sprintf("Found by exploration %s (schedule %d, seed %d, %s), shrunk from %d steps to %d "+
		"while it still violated %s. As found: %s", e.o.ID, f.index, f.seed, e.subject(), len(f.sc.Steps), len(small.Steps),
		ef.Target, firstLine(ef.Narrative))
	raw, err := scenarios.Marshal(small)
	if err == nil {
		small, err = scenarios.Parse(fmt.Sprintf("failures/%d.yaml", n), raw, scenarios.Options{})
	}
	if err != nil {
		e.log.Warn("explore: the shrunk scenario does not load", "seed", f.seed, "err", err)
		return
	}
	ef.YAML, ef.ShrunkSteps, ef.Writers, ef.Rate = string(raw), len(small.Steps), len(small.Writers), small.Traffic.Rate
	ef.Scenario = e.save(fmt.Sprintf("%d.yaml", n), raw)
	if file := filepath.Join(e.dir, filepath.FromSlash(ef.Scenario)); e.sys != nil {
		ef.Rerun = e.systemRerun(f.seed, file)
	} else {
		ef.Rerun = rerunCommand(e.o, f.seed, file)
	}
	ef.Replays, ef.ReplayHits = e.replay(ctx, small, f.seed, ef.Target)
	var rec *outcome.CellResult
	ef.Cell, rec = e.record(ctx, fmt.Sprintf("failure-%d", n), e.o.Env, small, f.seed)
	if rec != nil && slices.Contains(violatedBy(rec), ef.Target) {
		// The shrunk run's own account, without its first line: that line reads the verdict
		// against the scenario's expectation (the violation was expected there).
		_, rest, _ := strings.Cut(rec.Result.Narrative, "\n")
		ef.Narrative = "violated " + strings.Join(violatedBy(rec), ", ") + ".\n" + rest
	}
	cf.confirm(ctx, n, small, f.seed, ef)
}

// reproduces says whether sc violates target on each of n runs in a row.
func (e *exploration) reproduces(ctx context.Context, sc *scenarios.Scenario, seed uint64, target string, n int) bool {
	judge := e.judge(seed)
	for range n {
		v, err := judge(ctx, sc)
		if err != nil || !slices.Contains(v, target) {
			return false
		}
	}
	return true
}

// replay runs sc o.Replays times on the exploring stack, one after another, as the shrinker
// judged its candidates (replays run side by side reproduce some races more often and others
// less), and counts the runs that violated target.
func (e *exploration) replay(ctx context.Context, sc *scenarios.Scenario, seed uint64, target string) (runs, hits int) {
	judge := e.judge(seed)
	for range e.o.Replays {
		v, err := judge(ctx, sc)
		if ctx.Err() != nil {
			break
		}
		runs++
		if err == nil && slices.Contains(v, target) {
			hits++
		}
	}
	return runs, hits
}

func rerunCommand(o ExploreOptions, seed uint64, file string) string {
	args := []string{"fencebench", "run", "--stack", "sim", "--seed", strconv.FormatUint(seed, 10)}
	if o.Variant != "" && o.Variant != string(fence.Correct) {
		args = append(args, "--variant", o.Variant)
	}
	return strings.Join(append(args, file), " ")
}

// record runs sc once as a persisted run named id (its cell folder, report.html and all) on
// stack, and returns the cell's folder relative to the exploration, "" when it failed.
func (e *exploration) record(ctx context.Context, id string, stack env.Env, sc *scenarios.Scenario, seed uint64) (string, *outcome.CellResult) {
	res, err := e.recordRun(ctx, id, stack, sc, seed)
	if err != nil {
		e.log.Warn("explore: recording a failure", "run", id, "err", err)
		return "", nil
	}
	return id + "/" + res.ID, res
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func (e *exploration) recordRun(ctx context.Context, id string, stack env.Env, sc *scenarios.Scenario, seed uint64) (*outcome.CellResult, error) {
	if s, ok := stack.(*env.Sim); ok {
		stack = &env.Sim{Mem: store.NewMem(), Speed: s.Speed}
	}
	// A prefix beside the exploration's own (a store may hold both), deleted at the end.
	prefix := strings.TrimSuffix(e.o.Prefix, "/") + "." + id + "/"
	opts := Options{Out: e.dir, RunID: id, Seed: seed, Variant: fence.Variant(e.o.Variant),
		Client: e.o.Client, Env: stack, Command: e.o.Command, noTrend: true, Prefix: prefix, Cleanup: true}
	var sum *outcome.Summary
	var err error
	if e.sys != nil {
		opts.Variant, opts.Client = "", ""
		sum, err = RunSystem(ctx, []*scenarios.Scenario{sc}, opts, e.sys.so)
	} else {
		sum, err = Run(ctx, []*scenarios.Scenario{sc}, opts)
	}
	if err != nil {
		return nil, err
	}
	if len(sum.Cells) != 1 {
		return nil, fmt.Errorf("run %s has %d cells", id, len(sum.Cells))
	}
	return sum.Cells[0], nil
}

// confirmer re-runs shrunk failures on the confirming stack, opened at the first need.
type confirmer struct {
	e      *exploration
	stack  env.Env
	stop   func()
	broken string
}

func (c *confirmer) close() {
	if c.stop != nil {
		c.stop()
	}
}

func (c *confirmer) confirm(ctx context.Context, n int, sc *scenarios.Scenario, seed uint64, ef *outcome.ExploredFailure) {
	if c.e.o.Confirm == nil || ctx.Err() != nil {
		return
	}
	if misdirects(sc) {
		ef.Confirmed = "not tried: the scenario misdirects reads, which only the simulated stack carries"
		return
	}
	if c.stack == nil && c.broken == "" {
		s, stop, err := c.e.o.Confirm(ctx)
		if err != nil {
			c.broken = err.Error()
		} else {
			c.stack, c.stop = s, stop
		}
	}
	if c.broken != "" {
		ef.Confirmed = "error: " + c.broken
		return
	}
	ef.Confirmed = "not reproduced"
	for try := 1; try <= confirmTries && ctx.Err() == nil; try++ {
		id := fmt.Sprintf("confirm-%d-%d", n, try)
		res, err := c.e.recordRun(ctx, id, c.stack, sc, seed)
		if err != nil {
			ef.Confirmed = "error: " + err.Error()
			return
		}
		ef.ConfirmCell = id + "/" + res.ID
		if res.Verdict == checker.Error {
			ef.Confirmed = "error: " + res.Error
			continue
		}
		if slices.Contains(violatedBy(res), ef.Target) {
			ef.Confirmed = "reproduced"
			return
		}
	}
}

// misdirects reports whether a step of sc sets a faults.Misdirect rule, which only the
// simulated stack carries.
func misdirects(sc *scenarios.Scenario) bool {
	for _, st := range sc.Steps {
		if st.Action == scenarios.HTTP && st.Params.Rule.Action == faults.Misdirect {
			return true
		}
	}
	return false
}
