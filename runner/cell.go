package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/sim"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
	"github.com/fencebench/fencebench/writers"
)

// Rejudge judges a stored cell again with the current checker: res must hold the events and
// ledger read back from its folder. A cell that ended in a harness error stays an error.
func Rejudge(res *outcome.CellResult) {
	if res.Input == nil || res.Verdict == checker.Error && res.Error != "" {
		return
	}
	res.Result = checker.Check(checker.Input{Events: res.Events, Ledger: res.Ledger, Final: res.Input.Final, Expect: res.Input.Expect})
	res.Verdict = res.Result.Verdict
}

type runner struct {
	opts Options
	env  env.Env
	dir  string
	log  *slog.Logger
	ca   *netpath.CA // signs the fault paths' certificates when the store speaks HTTPS
	// down says why the store is unreachable, "" while it answers; once set, no further
	// cell starts. Cells running side by side share it.
	down *downState
	// ephemeral cells are judged and not persisted (an exploration's schedules).
	ephemeral bool
}

// storeTimeout bounds every store call of a writer: a blackholed request fails at this
// deadline, as it would against a real store.
const storeTimeout = 2 * time.Second

// newResult is the result of cell c before it runs: what it is, where it is stored and how
// to run it again.
func (r *runner) newResult(c Cell) *outcome.CellResult {
	sc := c.Scenario
	res := &outcome.CellResult{ID: c.ID(), Scenario: sc.Name, Description: sc.Description, Source: sc.Source,
		Variant: c.Variant, Kill: c.Kill != nil, Seed: c.Seed, Started: time.Now()}
	if c.Kill != nil {
		res.Violates = c.Kill.Violates
	}
	res.Client = firstNonEmpty(r.opts.Client, sc.Client, string(store.ClientMinio))
	res.Dir = filepath.Join(r.dir, c.ID())
	res.Rerun = r.rerun(c, res.Client)
	for _, p := range Plan(sc, c.Seed) {
		res.Schedule = append(res.Schedule, p.String())
	}
	return res
}

func (r *runner) cell(ctx context.Context, c Cell) (res *outcome.CellResult) {
	if rr, stop := r.forStore(ctx, c.Scenario); rr != r {
		defer stop()
		res = rr.cell(ctx, c)
		if rr.env.(*storeEnv).shared && rr.down.get() != "" {
			r.down.set(rr.down.get())
		}
		return res
	}
	res = r.newResult(c)
	logStart := fileSize(r.env.LogPath())
	// Every goroutine of the cell reports its panic to the cell's sink, which ends the cell.
	ctx, sink := guard.New(ctx)
	cr := &cellRun{r: r, c: c, res: res, log: r.log.With("cell", c.ID()), guard: sink}
	defer func() {
		if p := recover(); p != nil {
			res.Verdict = checker.Error
			res.Error = fmt.Sprintf("harness panic: %v\n%s", p, debug.Stack())
		}
		if err := sink.Err(); err != nil {
			res.Verdict, res.Result.Verdict = checker.Error, checker.Error
			res.Error = "harness " + err.Error()
		}
		res.Duration = time.Since(res.Started)
		if r.ephemeral {
			return
		}
		if err := r.persist(c, res, logStart); err != nil && res.Error == "" {
			res.Verdict, res.Error = checker.Error, err.Error()
		}
	}()
	cctx, stopWatch := r.watchStore(ctx)
	err := cr.run(cctx)
	// An unreachable store wins over whatever the cell concluded: what it saw proves nothing.
	if down := stopWatch(); down != nil {
		r.down.set(down.Error())
		err = down
	}
	if err != nil {
		res.Verdict = checker.Error
		res.Error = err.Error()
		res.Result.Verdict = checker.Error
		res.Result.Error = err.Error()
	}
	return res
}

func (r *runner) rerun(c Cell, client string) string {
	target := c.Scenario.Name
	if c.Scenario.Source != "" && !strings.HasPrefix(c.Scenario.Source, scenarios.CatalogueDir+"/") {
		target = c.Scenario.Source
	}
	args := []string{"fencebench", "run", "--seed", strconv.FormatUint(c.Seed, 10), "--client", client}
	if c.Variant != "" && c.Variant != string(fence.Correct) {
		args = append(args, "--variant", c.Variant)
	}
	return strings.Join(append(args, target), " ")
}

// cellRun is the state of one executing cell.
type cellRun struct {
	r   *runner
	c   Cell
	res *outcome.CellResult
	log *slog.Logger

	guard   *guard.Sink // the cell's goroutines report their panics here
	rec     *history.Recorder
	clock   *wait.Clock // scenario time; nil is real time
	fb      paths
	cluster *writers.Cluster
	paths   map[string]route
	stores  map[string]store.Store
	// preflight is the prefix the conditional-write probe wrote under, through the first
	// writer's path (Expect.Preflight).
	preflight string
	variant   fence.Variant

	mu       sync.Mutex
	harness  []error
	held     map[string]*faults.Set // writer -> its protocol faults (network ones live on its path)
	bg       sync.WaitGroup
	stopping bool
	overtime bool      // the traffic runs past the scheduled end (awaitServing): no step starts
	lag      *wait.Lag // how far the run fell behind its schedule
	// trafficEnd is when the clients stopped, on the recorder's clock (0 while they run).
	trafficEnd time.Duration
	arrived    map[int]bool // event-triggered steps whose event came
	gates      gates        // http rules' holds until an event
	trace      outcome.Trace
	// starting holds the primaries whose initial promotion is under way, startHeld is closed
	// when one of them is paused (promoteInitial).
	starting  map[string]bool
	startHeld chan struct{}
	startLate bool // the plan started before the initial promotions ended
	// startMark releases the clock's busy mark that holds scenario time still from the cell's
	// set-up to its first promotion (run); idempotent.
	startMark func()
}

func (cr *cellRun) fail(err error) {
	cr.mu.Lock()
	cr.harness = append(cr.harness, err)
	cr.mu.Unlock()
	cr.log.Error("harness problem", "err", err)
}

func (cr *cellRun) run(ctx context.Context) error {
	sc := cr.c.Scenario
	if err := admit(sc); err != nil {
		return harnessf("%v", err)
	}
	if err := cr.storeReady(); err != nil {
		return err
	}
	v, err := fence.LookupVariant(cr.c.Variant)
	if err != nil {
		return harnessf("%v", err)
	}
	cr.variant = v
	// The action context ends with the cell: every background action is bounded by it.
	ctx, cancel := context.WithTimeout(ctx, cr.r.clock().Real(sc.Duration)+cr.cellTimeout())
	defer cancel()

	defer cr.close()
	shard, err := cr.start()
	if err != nil {
		return err
	}
	if cr.clock.IsVirtual() && cr.r.opts.CellTimeout == 0 {
		// The same bound on the cell's own time line: a copy that retries for ever (a
		// promotion whose claim never succeeds) moves scenario time on, so the cell ends
		// there, at once, rather than at the real deadline a minute later.
		var vcancel context.CancelFunc
		ctx, vcancel = cr.clock.WithTimeout(ctx, sc.Duration+60*time.Second)
		defer vcancel()
	}

	plan := Plan(sc, cr.c.Seed)
	// Request-level rules due at time zero are in place before anything talks to the store,
	// the conditional-write probe included: that is how a store ignoring preconditions is
	// emulated.
	for i := range plan {
		if p := plan[i]; p.At == 0 && sc.Steps[p.Step].Spec().Layer == faults.L7 {
			cr.exec(ctx, sc.Steps[p.Step])
			plan[i].Action = planDone
		}
	}
	if refused, err := cr.probe(ctx, shard); err != nil {
		return err
	} else if refused {
		return nil
	}

	// From here until the first initial promotion is under way nothing waits on the clock:
	// scenario time stands still meanwhile, even when the Go scheduler's counts miss this
	// goroutine (a GC assist parks it; on a loaded machine under the race detector, often
	// enough for the lag watcher's ticks to carry a cell to its end before its primary was
	// promoted). promoteInitial releases the mark as the promotion starts.
	cr.startMark = cr.clock.Busy()
	defer cr.startMark()
	cr.lag = cr.clock.WatchLag(lagTick)
	defer cr.lag.Stop()

	cancelSub := cr.cluster.Bus().Subscribe(func(s writers.Signal) { cr.onSignal(ctx, s) })
	defer cancelSub()

	if err := cr.promoteInitial(ctx); err != nil {
		return err
	}
	var traffic *writers.Traffic
	if sc.Traffic.Clients > 0 && sc.Traffic.Rate > 0 {
		traffic, err = cr.cluster.StartTraffic(ctx, writers.TrafficConfig{Clients: sc.Traffic.Clients,
			Rate: sc.Traffic.Rate, Seed: cr.c.Seed})
		if err != nil {
			return harnessf("traffic: %v", err)
		}
	}

	cr.follow(ctx, plan)

	return cr.finish(ctx, cancel, traffic)
}

// promoteInitial promotes the scenario's primaries, one after another, and returns once they
// are promoted or once a step fired by their promotion's own events paused one of them: its
// promotion then waits at the writer's gate for the step that resumes it, which only the
// plan can run, so the plan starts while the promotions go on in the background (a harness
// error found there ends the cell as one). Before, such a schedule stood still until the
// cell's deadline.
func (cr *cellRun) promoteInitial(ctx context.Context) error {
	sc := cr.c.Scenario
	held := make(chan struct{})
	cr.mu.Lock()
	cr.starting, cr.startHeld = map[string]bool{}, held
	for _, w := range sc.Writers {
		cr.starting[w.ID] = w.Role == "primary"
	}
	cr.mu.Unlock()
	defer func() {
		cr.mu.Lock()
		cr.starting = nil
		cr.mu.Unlock()
	}()
	done := make(chan error, 1)
	ended := false
	cr.bg.Add(1)
	cr.guard.Go("the initial promotions", func() {
		defer cr.startMark() // no primary: the plan's own steps start the cell
		var first error
		for _, w := range sc.Writers {
			if w.Role != "primary" {
				continue
			}
			wr := cr.cluster.Writer(w.ID)
			cr.startMark() // the promotion waits on the clock (its retries): time moves again
			if err := wr.Promote(ctx, w.Term); err != nil {
				// A step that crashed the writer mid-promotion, a rival that fenced it, a
				// fault that kept the store from answering, or an answer a rule gave in the
				// store's place (a 403, a misdirected read, from a rule armed early) makes the failure an
				// outcome the checker judges; anything else is the bench's.
				if st := wr.State(); st != writers.StateCrashed && st != writers.StateFenced && !fence.IsFenced(err) &&
					!fence.IsRetryable(err) && !errors.Is(err, store.ErrAmbiguous) && !errors.Is(err, store.ErrConflict) &&
					!cr.answeredByFault(w.ID) && ctx.Err() == nil && first == nil {
					first = harnessf("initial promotion of %s at term %d: %v", w.ID, w.Term, err)
				}
				cr.log.Debug("initial promotion ended by a step", "writer", w.ID, "err", err)
			}
			cr.mu.Lock()
			delete(cr.starting, w.ID)
			cr.mu.Unlock()
		}
		ended = true
		cr.mu.Lock()
		late := cr.startLate
		if !late {
			done <- first
		}
		cr.mu.Unlock()
		if late && first != nil {
			cr.fail(first) // the plan already started: the cell ends as a harness error
		}
	}, cr.bg.Done, func() {
		if !ended {
			// A panic ended the promotions (the guard reports it): the wait below ends too,
			// or it would hold the cell until the exploration gave up on it.
			done <- harnessf("the initial promotions ended in a panic")
		}
	})
	select {
	case err := <-done:
		return err
	case <-held:
		cr.log.Debug("an initial promotion is held by a paused writer; the plan starts beside it")
		cr.mu.Lock()
		cr.startLate = true
		cr.mu.Unlock()
		select {
		case err := <-done: // the promotions ended meanwhile
			return err
		default:
			return nil
		}
	}
}

// pausedAtStart notes that writer id was paused; a pause of a primary still in its initial
// promotion lets the plan start (promoteInitial).
func (cr *cellRun) pausedAtStart(id string) {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.starting[id] && cr.startHeld != nil {
		close(cr.startHeld)
		cr.startHeld = nil
	}
}

// start builds the cell's recorder, fault paths and writers (with their clients over their
// paths); close stops what it built.
func (cr *cellRun) start() (writers.Shard, error) {
	sc := cr.c.Scenario
	cr.clock = cr.r.clock()
	cr.rec = history.NewRecorderOn(cr.clock.Stopwatch())
	rng := rand.New(rand.NewPCG(cr.c.Seed, 0xfa017))
	// The cell's prefix: the fault paths refuse any request of a writer that reaches outside it.
	prefix := cr.r.opts.Prefix + cr.c.ID() + "/"
	if err := cr.openPaths(prefix, rng); err != nil {
		return writers.Shard{}, err
	}
	cr.paths, cr.stores = map[string]route{}, map[string]store.Store{}
	cr.held = map[string]*faults.Set{}

	shard := writers.Shard{Prefix: prefix,
		IndexUUID: fmt.Sprintf("idx%016x", rng.Uint64()), ID: 0}
	var err error
	cr.cluster, err = writers.NewCluster(writers.Config{Shard: shard, Recorder: cr.rec, Variant: cr.variant,
		SyncEvery: sc.Traffic.SyncEvery, SyncInterval: sc.Traffic.SyncInterval, Guard: cr.guard, Clock: cr.clock})
	if err != nil {
		return writers.Shard{}, harnessf("writers: %v", err)
	}
	for _, w := range sc.Writers {
		st, err := cr.storeFor(w.ID)
		if err != nil {
			return writers.Shard{}, err
		}
		if _, err := cr.cluster.AddWriter(writers.WriterSpec{ID: w.ID, Store: st}); err != nil {
			return writers.Shard{}, harnessf("writer %s: %v", w.ID, err)
		}
	}

	return shard, nil
}

func (cr *cellRun) close() {
	if cr.cluster != nil {
		cr.cluster.Close()
	}
	if cr.fb != nil {
		_ = cr.fb.Close()
	}
}

// finish winds the cell down (traffic stopped, every fault healed, in-flight work settled,
// background actions ended), audits the store directly and judges the history.
func (cr *cellRun) finish(ctx context.Context, cancel context.CancelFunc, traffic *writers.Traffic) error {
	// Wind down: stop traffic (once the copy that must end serving had its chance to show it
	// does), heal every fault, let in-flight work finish (bounded).
	cr.awaitServing(ctx, traffic)
	if traffic != nil {
		cr.res.Traffic = trafficCounts(traffic.Stop())
	}
	cr.mu.Lock()
	cr.trafficEnd = cr.rec.Now()
	cr.stopping = true
	cr.mu.Unlock()
	cr.gates.openAll()
	cr.healAll()
	if cr.c.Scenario.Expect.ServesAfterHeal {
		cr.healProbe(ctx)
	}
	settle, cancelSettle := cr.clock.WithTimeout(ctx, settleTimeout)
	if err := cr.cluster.Settle(settle); err != nil {
		cr.log.Warn("writers did not settle", "err", err)
	}
	cancelSettle()
	cancel() // ends background actions still blocked (a promotion stuck behind a fault)
	cr.bg.Wait()
	cr.cluster.Close()
	// A request held by a delay rule still lands: the auditor reads the store after it did,
	// so its own sweep cannot race a writer's late write.
	dctx, cancelDrain := context.WithTimeout(context.Background(), cr.clock.Real(settleTimeout)+5*time.Second)
	if err := cr.fb.Drain(dctx); err != nil {
		cr.fail(err)
	}
	cancelDrain()

	// The auditor reads the store directly, not through any fault path.
	direct, err := env.Client(cr.r.env, store.Client(cr.res.Client))
	if err != nil {
		return harnessf("auditor client: %v", err)
	}
	actx, cancelAudit := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancelAudit()
	if cr.clock.IsVirtual() {
		// An auditor whose claim never succeeds retries on the clock: bound it in scenario
		// time too, or it drives the virtual clock for the whole real bound.
		var vcancel context.CancelFunc
		actx, vcancel = cr.clock.WithTimeout(actx, 5*time.Minute)
		defer vcancel()
	}
	audit, err := cr.cluster.Audit(actx, direct, 0)
	if err != nil {
		if actx.Err() != nil {
			return harnessf("auditor: its recovery did not finish within 30s (5m of scenario time on a virtual clock): %v", err)
		}
		return harnessf("auditor: %v", err)
	}

	cr.res.Events = cr.rec.Events()
	cr.res.Ledger = cr.fb.Ledger()
	if cr.res.Traffic != nil {
		if err := trafficAgrees(cr.res.Traffic, cr.res.Events); err != nil {
			cr.fail(fmt.Errorf("traffic: %w", err))
		}
	}
	cr.mu.Lock()
	harness := errors.Join(cr.harness...)
	cr.mu.Unlock()
	if harness != nil {
		return harnessf("%v", harness)
	}
	in := checker.Input{Events: cr.res.Events, Ledger: cr.res.Ledger, Final: finalState(audit), Expect: cr.expect()}
	cr.res.Input = &outcome.StoredInput{Final: in.Final, Expect: in.Expect}
	cr.res.Result = checker.Check(in)
	cr.mu.Lock()
	tr := cr.trace
	cr.res.Trace = &tr
	cr.mu.Unlock()
	cr.res.Verdict = cr.res.Result.Verdict
	return nil
}

// lagTick is how often, in scenario time, the run checks how far it fell behind its schedule.
const lagTick = 100 * time.Millisecond

// settleTimeout bounds, in scenario time, how long in-flight work may take to finish once the
// schedule ended.
const settleTimeout = 10 * time.Second

// cellTimeout bounds a cell beyond its scenario duration: 60 seconds of scenario time, never
// less than 5 real seconds (a compressed run's goroutines still need the CPU).
func (cr *cellRun) cellTimeout() time.Duration {
	if cr.r.opts.CellTimeout > 0 {
		return cr.r.opts.CellTimeout
	}
	return max(cr.r.clock().Real(60*time.Second), 5*time.Second)
}

// storeFor builds a writer's client over its own fault path: the endpoint stays the real
// one, only the dialer goes through the path, and the client signs with the path's own
// credential (the path verifies it and re-signs with the store's).
func (cr *cellRun) storeFor(id string) (store.Store, error) {
	if sb, ok := cr.fb.(simPaths); ok {
		p := sb.Path(id)
		var st store.Store = p
		if cr.variant == fence.SDKRetries {
			st = sim.Retrying(p, 3)
		}
		cr.paths[id], cr.stores[id] = p, st
		return st, nil
	}
	p, err := cr.fb.(netPaths).Path(id)
	if err != nil {
		return nil, harnessf("fault path for %s: %v", id, err)
	}
	cfg := cr.r.env.Config()
	cfg.AccessKey, cfg.SecretKey = p.Credentials()
	cfg.SessionToken = ""
	cfg.DialContext = p.DialContext
	if ca := cr.fb.(netPaths).RootCAs(); ca != nil {
		// The path's TLS listener speaks for the endpoint with a run-local certificate: the
		// writer trusts that CA and nothing else.
		cfg.RootCAs = ca
	}
	cfg.Timeout = storeTimeout
	if cr.variant == fence.SDKRetries {
		cfg.MaxAttempts = 3
	}
	st, err := s3store.New(store.Client(cr.res.Client), cfg)
	if err != nil {
		return nil, harnessf("store client for %s: %v", id, err)
	}
	cr.paths[id], cr.stores[id] = p, st
	return st, nil
}

// probe checks the store enforces conditional writes, through the first writer's path (so a
// scenario's request-level emulation of a lying store is what gets probed). A refusal ends
// the cell: as an error, unless the scenario allows an unenforcing store, in which case the
// refusal is the correct protocol's behaviour (pass) and the accept-unenforced-store variant
// runs on regardless.
func (cr *cellRun) probe(ctx context.Context, shard writers.Shard) (refused bool, err error) {
	sc := cr.c.Scenario
	first := sc.Writers[0].ID
	pctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	cr.preflight = shard.Base() + "probe/"
	perr := fence.Probe(pctx, cr.stores[first], cr.preflight)
	switch {
	case perr == nil:
		cr.res.Probe = "the store enforces If-None-Match and If-Match"
		return false, nil
	case !errors.Is(perr, fence.ErrUnenforced):
		return false, harnessf("conditional-write probe: %v", perr)
	case cr.variant == fence.AcceptUnenforcedStore:
		cr.res.Probe = "the store does not enforce conditional writes (" + perr.Error() + "); accepted by the variant under test"
		return false, nil
	case sc.Store.AllowUnenforced:
		cr.res.Probe = "refused up front: " + perr.Error()
		cr.res.Events = cr.rec.Events()
		cr.res.Ledger = cr.fb.Ledger()
		cr.res.Verdict = checker.Pass
		cr.res.Result = checker.Result{Verdict: checker.Pass, Raw: checker.Pass,
			Reasons:   []string{"the store failed the conditional-write probe and was refused before any writer started"},
			Narrative: "The bench refused the store: " + perr.Error() + ". Fencing on such a store would let two writers each believe they hold the fence."}
		return true, nil
	default:
		return false, harnessf("the store does not enforce conditional writes, so no fencing protocol can be tested on it: %v", perr)
	}
}

func (cr *cellRun) expect() checker.Expect {
	sc := cr.c.Scenario
	// Serving is judged in kill cells too: a variant may be expected to break HandoffResolves.
	e := checker.Expect{MinAcked: sc.Expect.MinAcked, MaxTimeToFence: sc.Expect.MaxTimeToFence, MaxTimeToAck: sc.Expect.MaxTimeToAck, Serving: sc.Expect.Serving,
		ServesAfterHeal: sc.Expect.ServesAfterHeal, Retain: writers.DefaultRetain, Preflight: cr.preflight}
	cr.mu.Lock()
	e.TrafficEnd = cr.trafficEnd
	cr.mu.Unlock()
	if cr.lag != nil {
		e.Lag = cr.lag.Max()
	}
	for _, st := range sc.Steps {
		if m := cr.missed(st); m != "" && st.Spec().Moves {
			e.Unrun = append(e.Unrun, fmt.Sprintf("steps[%d] (%s): %s", st.Index, st.Action, m))
		}
	}
	if sc.Expect.FaultsMustFire != "none" {
		for _, st := range sc.Steps {
			if spec := st.Spec(); spec.Fault {
				e.Faults = append(e.Faults, checker.Fault{Name: st.FaultName(), Layer: string(spec.Layer), Missed: cr.missed(st)})
			}
			// A relocation's handoff fault is declared like every fault the schedule opens.
			if f := st.HandoffFault(); f != nil {
				e.Faults = append(e.Faults, checker.Fault{Name: f.Name(), Layer: string(f.Layer()), Missed: cr.missed(st)})
			}
		}
	}
	if k := cr.c.Kill; k != nil {
		e.Verdict = checker.Fail
		e.Violated = k.Violates
		return e
	}
	e.Verdict = checker.Verdict(sc.Expect.Verdict)
	e.Violated = sc.Expect.Violated
	e.Fenced = sc.Expect.Fenced
	return e
}

func finalState(a writers.AuditResult) checker.Final {
	f := checker.Final{Recovered: a.Ops, AuditTerm: a.Term, SegmentKeys: a.SegmentFiles}
	for _, o := range a.Fences {
		f.FenceKeys = append(f.FenceKeys, checker.Object{Key: o.Key, ETag: o.ETag, Body: o.Body})
	}
	return f
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func fileSize(path string) int64 {
	if path == "" {
		return 0
	}
	st, err := os.Stat(path)
	if err != nil {
		return 0
	}
	return st.Size()
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// answeredByFault reports whether a request rule on w's path answered one of its requests
// in the store's place (the ledger's Injected: a status; or a misdirected read, another
// object's body): the failure of its initial promotion may be that rule's doing, not the
// bench's.
func (cr *cellRun) answeredByFault(w string) bool {
	for _, l := range cr.fb.Ledger() {
		if l.Writer == w && (l.Injected != 0 || l.Action == string(faults.Misdirect)) {
			return true
		}
	}
	return false
}
