package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/explore"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
)

// ExploreOptions configure [Explore].
type ExploreOptions struct {
	// Out is the results folder; the exploration writes Out/<ID>/. "" means "results".
	Out string
	ID  string
	// Env is the stack the schedules run on. On the simulated stack (*env.Sim) every
	// schedule gets a fresh in-memory store; on another stack the exploration claims Prefix
	// and runs each schedule under a sub-prefix of its own.
	Env    env.Env
	Prefix string
	// Confirm, when set, opens the stack a shrunk failure is re-run on (once, at the first
	// failure); ConfirmStack names it. The returned func releases it.
	Confirm      func(ctx context.Context) (env.Env, func(), error)
	ConfirmStack string
	Variant      string // the protocol variant explored; "" means correct
	Client       string // the store client on network stacks; "" means minio-go
	Seed         uint64 // schedule i (from 0) uses Seed+i
	// Schedules and For bound the exploration; at least one must be set.
	Schedules int
	For       time.Duration
	// Shard, when set, runs only the schedules whose index i has i mod N = K (K from 0, as
	// for run): N shards with the same Seed and Schedules run exactly the schedules of one
	// unsharded exploration between them, each once.
	Shard *ShardSpec
	// Jobs is how many schedules run at once; 0 means 8 per CPU on the simulated stack, 1
	// elsewhere.
	Jobs int
	// Replays is how many times a shrunk failure is replayed on Env; 0 means 20.
	Replays int
	// Shrink is how many distinct failures (by violated invariants) are shrunk, replayed and
	// confirmed; 0 means 3, a negative value none. The others are listed as found.
	Shrink int
	// StopAtFirst ends the exploration at the first failing schedule. When failures are
	// shrunk, that is the first failure whose shrunk scenario replays its violation on every
	// one of Replays replays: a failure that replays less is kept and listed, and the
	// exploration goes on from the next schedule, within the same budget, until a failure
	// replays fully or the budget ends. A kill nobody can replay is weak evidence.
	StopAtFirst bool
	// Guided makes the exploration coverage-guided: about half the schedules, once some
	// reached features no earlier one had, are mutations of those (explore.Corpus) instead of
	// fresh draws. The schedules then depend on what earlier ones reached, so a guided
	// exploration's shards are not the parts of one guided exploration.
	Guided bool
	// System, when set, explores a system under test (docs/bring-your-own.md) instead of the
	// bench's own protocol: schedules are drawn only from the steps its capabilities allow
	// and run through RunSystem's cells; Variant must be empty.
	System *SystemOptions
	// ShrinkRuns is how many judge runs one shrink may spend; 0 means the shrinker's 400, or
	// 60 against a system (each of its runs takes real seconds).
	ShrinkRuns int
	Logger     *slog.Logger
	// Progress, when set, is called after every schedule.
	Progress func(done, total, failed int)
	Command  string
}

// found is one failing schedule as the loop saw it.
type found struct {
	index    int
	seed     uint64
	sc       *scenarios.Scenario
	violated []string
	res      *outcome.CellResult
}

// exploration is the state of one Explore call.
type exploration struct {
	o      ExploreOptions
	dir    string
	log    *slog.Logger
	x      *outcome.Exploration
	runs   atomic.Int64 // schedule runs, for fresh sub-prefixes
	mu     sync.Mutex
	found  []found
	errors []string
	next   int             // the next schedule index the loop hands out, across resumed loops
	cut    []int           // schedule indices a loop's end cut short, run first by the next loop
	looped time.Duration   // wall time spent running schedules, shrinking excluded
	shrunk int             // e.found[:shrunk] were grouped and shrunk by an earlier failures call
	corpus *explore.Corpus // what the schedules reached; guided exploration mutates its schedules
	sys    *sysExplore     // the system under test, nil for the bench's own protocol
	// hopeless is set once the first hopelessErrors schedules all ended in harness errors.
	hopeless bool
}

// hopelessErrors is how many schedules ending in harness errors, with none judged, stop an
// exploration: whatever keeps the bench from judging (a store it cannot use, a protocol that
// never claims, so its auditor cannot recover the shard) will not go away with more seeds.
const hopelessErrors = 32

// Explore generates schedules from seeds, runs each on o.Env, judges it with the checker,
// and shrinks, replays and confirms the failures it finds. It writes explore.json and
// explore.html into its folder, one folder per shrunk failure's recorded run, and the shrunk
// scenarios under failures/.
func Explore(ctx context.Context, o ExploreOptions) (*outcome.Exploration, error) {
	if s := o.Shard; s != nil && (s.N < 1 || s.K < 0 || s.K >= s.N) {
		return nil, outcome.BadInput(fmt.Errorf("explore: shard %d/%d: want 0 <= K < N", s.K, s.N))
	}
	if o.Schedules <= 0 && o.For <= 0 {
		return nil, outcome.BadInput(errors.New("explore: give a budget: --schedules N or --for DURATION"))
	}
	if o.System != nil && o.Variant != "" {
		return nil, outcome.BadInput(errors.New("explore: --variant chooses the bench's own protocol; a system's variant is its command's business"))
	}
	if _, err := explore.Generate(o.Seed, explore.GenOptions{Variant: fence.Variant(o.Variant)}); err != nil {
		return nil, outcome.BadInput(fmt.Errorf("explore: %w", err))
	}
	o.defaults()
	e := &exploration{o: o, dir: filepath.Join(o.Out, o.ID), log: o.Logger}
	if err := os.MkdirAll(e.dir, 0o755); err != nil {
		return nil, fmt.Errorf("explore: results folder: %w", err)
	}
	e.x = &outcome.Exploration{ID: o.ID, Started: time.Now(), Stack: o.Env.Info().Stack, Confirm: o.ConfirmStack,
		Variant: o.Variant, Client: o.Client, Seed: o.Seed, Budget: budget(o),
		Coverage: outcome.Coverage{Faults: explore.Kinds(), Phases: explore.Phases()}}
	if _, sim := o.Env.(*env.Sim); !sim {
		release, err := e.claim(ctx)
		if err != nil {
			return nil, err
		}
		defer release()
	}
	if o.System != nil {
		if err := e.probeForExplore(ctx); err != nil {
			return nil, err
		}
	}
	if s := o.Shard; s != nil {
		e.x.ShardK, e.x.ShardN = s.K, s.N
	}
	e.corpus = explore.NewCorpus()
	e.x.Reach = &outcome.Reach{Guided: o.Guided}
	e.loop(ctx)
	e.failures(ctx)
	for e.o.StopAtFirst && e.o.Shrink > 0 && e.x.Stopped == "first failure" && !e.replayed() && ctx.Err() == nil {
		e.x.Resumed++
		e.log.Info("explore: the first failure does not replay every time; going on", "from", e.next)
		e.loop(ctx)
		e.failures(ctx)
	}
	e.x.Duration = time.Since(e.x.Started)
	if secs := e.looped.Seconds(); secs > 0 {
		e.x.Rate = float64(e.x.Schedules) / secs
	}
	e.x.ErrorSamples = e.errors
	if err := reports.WriteExploration(e.dir, e.x); err != nil {
		return e.x, fmt.Errorf("explore: report: %w", err)
	}
	return e.x, nil
}

func (o *ExploreOptions) defaults() {
	if o.Out == "" {
		o.Out = "results"
	}
	if o.ID == "" {
		o.ID = "explore-" + NewRunID(time.Now())
	}
	if o.Variant == "" {
		o.Variant = string(fence.Correct)
	}
	if o.Client == "" {
		o.Client = string(store.ClientMinio)
	}
	if o.Prefix == "" {
		o.Prefix = o.ID + "/"
	}
	if o.Jobs <= 0 {
		o.Jobs = 1
		if _, sim := o.Env.(*env.Sim); sim {
			o.Jobs = 8 * runtime.GOMAXPROCS(0)
		}
	}
	if o.Replays <= 0 {
		o.Replays = 20
	}
	switch {
	case o.Shrink == 0:
		o.Shrink = 3
	case o.Shrink < 0:
		o.Shrink = 0 // failures are listed as found, none shrunk
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
}

func budget(o ExploreOptions) string {
	switch {
	case o.Schedules > 0 && o.For > 0:
		return fmt.Sprintf("%d schedules or %v", o.Schedules, o.For)
	case o.Schedules > 0:
		return fmt.Sprintf("%d schedules", o.Schedules)
	}
	return o.For.String()
}

// claim takes the exploration's prefix on a shared store; the returned func deletes what the
// exploration wrote and the claim.
func (e *exploration) claim(ctx context.Context) (func(), error) {
	admin, err := env.Client(e.o.Env, store.ClientMinio)
	if err != nil {
		return nil, fmt.Errorf("explore: store client: %w", err)
	}
	c, err := store.ClaimPrefix(ctx, admin, e.o.Prefix, store.NewOwner(e.o.ID))
	if err != nil {
		return nil, fmt.Errorf("explore: refusing to run: %w", err)
	}
	return func() { release(ctx, c, e.log) }, nil
}

// take hands out the next schedule index: first one an earlier loop cut short, then the next
// not handed out (of this shard); false when the budget's schedules are all handed out.
func (e *exploration) take() (int, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if n := len(e.cut); n > 0 {
		i := e.cut[n-1]
		e.cut = e.cut[:n-1]
		return i, true
	}
	i := e.next
	e.next++
	if s := e.o.Shard; s != nil {
		i = i*s.N + s.K
	}
	return i, e.o.Schedules <= 0 || i < e.o.Schedules
}

// replayed says whether a shrunk failure replayed its violation on every replay.
func (e *exploration) replayed() bool {
	return slices.ContainsFunc(e.x.Failures, func(f outcome.ExploredFailure) bool {
		return f.Replays > 0 && f.ReplayHits == f.Replays
	})
}

// loop runs schedules on o.Jobs workers, from the next index not handed out, until the
// budget, the clock or ctx ends it.
func (e *exploration) loop(ctx context.Context) {
	began, failedBefore := time.Now(), e.x.Failed
	defer func() { e.looped += time.Since(began) }()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if e.o.For > 0 {
		var stop context.CancelFunc
		ctx, stop = context.WithDeadline(ctx, e.x.Started.Add(e.o.For))
		defer stop()
	}
	var wg sync.WaitGroup
	for range e.o.Jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				i, ok := e.take()
				if !ok {
					return
				}
				if e.schedule(ctx, i) && e.o.StopAtFirst || e.isHopeless() {
					cancel()
				}
			}
		}()
	}
	wg.Wait()
	e.x.Stopped = "budget"
	switch {
	case e.isHopeless():
		e.x.Stopped = fmt.Sprintf("the first %d schedules all ended in harness errors", hopelessErrors)
	case e.o.StopAtFirst && e.x.Failed > failedBefore:
		e.x.Stopped = "first failure"
	case e.o.For > 0 && (e.o.Schedules == 0 || e.x.Schedules < e.o.Schedules) && ctx.Err() != nil:
		e.x.Stopped = "time"
	}
}

// schedule generates, runs and judges schedule i; true when it failed.
func (e *exploration) schedule(ctx context.Context, i int) bool {
	seed := e.o.Seed + uint64(i)
	gen := e.gen()
	var sc *scenarios.Scenario
	var err error
	if e.o.Guided {
		sc, err = e.corpus.Next(seed, gen)
	} else {
		sc, err = explore.Generate(seed, gen)
	}
	if err != nil {
		e.note(i, seed, "generate: "+err.Error())
		return false
	}
	res, hung := e.watched(ctx, sc, seed)
	if hung {
		e.note(i, seed, fmt.Sprintf("the schedule did not finish within %v: abandoned (a bench bug: please report it with the seed)", hangLimit))
		return false
	}
	if ctx.Err() != nil {
		// Cut short: it proves nothing and is not counted; a resumed loop runs it again.
		e.mu.Lock()
		e.cut = append(e.cut, i)
		e.mu.Unlock()
		return false
	}
	cov := explore.CoverageOf(sc, res.Events, res.Ledger)
	violated := violatedBy(res)
	if res.Verdict != checker.Error {
		e.corpus.Add(sc, explore.Features(sc, res.Events, res.Ledger))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	e.x.Schedules++
	e.x.Coverage.Merge(cov)
	if g := e.x.Reach; g != nil {
		g.Features, g.Kept, g.Mutated = e.corpus.Seen(), e.corpus.Kept(), e.corpus.Mutated()
		g.ByClass, g.FirstOf = e.corpus.Classes()
		if tenth := max(1, e.o.Schedules/10); e.o.Schedules > 0 && e.x.Schedules%tenth == 0 {
			g.Curve = append(g.Curve, g.Features)
		}
	}
	failed := false
	switch res.Verdict {
	case checker.Pass:
		e.x.Passed++
	case checker.Fail:
		if len(violated) == 0 {
			e.x.Inconclusive++ // a floor or an attestation, not an invariant
			e.why(res)
			break
		}
		e.x.Failed++
		failed = true
		if e.x.FirstFailure == 0 || i+1 < e.x.FirstFailure {
			e.x.FirstFailure = i + 1
		}
		e.found = append(e.found, found{index: i + 1, seed: seed, sc: sc, violated: violated, res: res})
	case checker.Inconclusive:
		e.x.Inconclusive++
		e.why(res)
	default:
		e.x.Errors++
		e.noteLocked(i, seed, res.Error)
	}
	if e.o.Progress != nil {
		e.o.Progress(e.x.Schedules, e.o.Schedules, e.x.Failed)
	}
	return failed
}

// isHopeless says whether the exploration stops for harness errors alone (hopelessErrors).
func (e *exploration) isHopeless() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.hopeless
}

// why counts an inconclusive schedule under its first reason, numbers blanked.
func (e *exploration) why(res *outcome.CellResult) {
	reason := "no reason given"
	if len(res.Result.Reasons) > 0 {
		reason = digits.ReplaceAllString(res.Result.Reasons[0], "#")
	}
	if e.x.InconclusiveWhy == nil {
		e.x.InconclusiveWhy = map[string]int{}
	}
	e.x.InconclusiveWhy[reason]++
}

var digits = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)

func (e *exploration) note(i int, seed uint64, msg string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.x.Schedules++
	e.x.Errors++
	e.noteLocked(i, seed, msg)
}

func (e *exploration) noteLocked(i int, seed uint64, msg string) {
	if e.x.Errors >= hopelessErrors && e.x.Passed+e.x.Failed+e.x.Inconclusive == 0 {
		e.hopeless = true
	}
	if len(e.errors) < 10 {
		e.errors = append(e.errors, fmt.Sprintf("schedule %d (seed %d): %s", i+1, seed, msg))
	}
}

// hangLimit bounds one schedule's run: far beyond any cell's own timeout, so only a run that
// ignores its context (a bug of the bench) reaches it.
const hangLimit = 3 * time.Minute

// watched runs schedule sc and gives up on it after hangLimit, so one stuck schedule is an
// error with its seed instead of the end of the exploration.
func (e *exploration) watched(ctx context.Context, sc *scenarios.Scenario, seed uint64) (*outcome.CellResult, bool) {
	done := make(chan *outcome.CellResult, 1)
	go func() { done <- e.run(ctx, e.o.Env, sc, seed) }()
	t := time.NewTimer(hangLimit)
	defer t.Stop()
	select {
	case res := <-done:
		return res, false
	case <-t.C:
		return nil, true
	}
}

// run runs one schedule on stack, unpersisted: a fresh store on the simulated stack, a fresh
// sub-prefix elsewhere.
func (e *exploration) run(ctx context.Context, stack env.Env, sc *scenarios.Scenario, seed uint64) *outcome.CellResult {
	prefix := e.o.Prefix + fmt.Sprintf("r%07d/", e.runs.Add(1))
	if s, ok := stack.(*env.Sim); ok {
		stack, prefix = &env.Sim{Mem: store.NewMem(), Speed: s.Speed}, "x/"
	}
	if e.sys != nil {
		return e.systemRun(ctx, stack, sc, seed, prefix)
	}
	r := &runner{opts: Options{Prefix: prefix, Client: e.o.Client, Variant: fence.Variant(e.o.Variant)}, env: stack, down: &downState{},
		dir: filepath.Join(e.dir, "scratch"), log: slog.New(slog.DiscardHandler), ephemeral: true}
	return r.cell(ctx, Cell{Scenario: sc, Variant: e.o.Variant, Seed: seed})
}

// violatedBy lists the invariants that failed, in the checker's order.
func violatedBy(res *outcome.CellResult) []string {
	var out []string
	for _, ir := range res.Result.Invariants {
		if ir.Status == checker.Fail {
			out = append(out, ir.Name)
		}
	}
	return out
}

// target is the invariant a shrink preserves: the first violated one in the catalogue's
// order of importance.
func target(violated []string) string {
	for _, name := range scenarios.Invariants {
		if slices.Contains(violated, name) {
			return name
		}
	}
	if len(violated) > 0 {
		return violated[0]
	}
	return ""
}
