package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/system"
)

// SystemOptions say which system a run tests in place of the simulated copies: every
// writer of a scenario is a node the Launcher starts, over its own fault path.
type SystemOptions struct {
	// Launcher starts the nodes (system.Command for a process, system.InProcess for Go).
	Launcher system.Launcher
	// Kill judges every cell as a broken system's: it passes when Violates fail (any safety
	// invariant when empty), as a kill cell of the catalogue does.
	Kill     bool
	Violates []history.Invariant
}

// FinalReader is the id of the fresh node that reads the store once a cell's schedule ended.
const FinalReader = "final-read"

// NoPhantomOp is the invariant a system run adds to the checker's: every op id the final read
// returns was sent by a client.
const NoPhantomOp = "NoPhantomOp"

// RunSystem runs scs against the system of so, persisting the run as Run does (one cell per
// scenario, one at a time). Before any cell it starts one node to learn the system's
// capabilities and refuses, wrapping outcome.ErrBadInput, every scenario with a step the
// system cannot take, naming the capability.
func RunSystem(ctx context.Context, scs []*scenarios.Scenario, opts Options, so SystemOptions) (*outcome.Summary, error) {
	if so.Launcher == nil {
		return nil, fmt.Errorf("%w: no system to run", outcome.ErrBadInput)
	}
	started, log, dir, err := opts.begin()
	if err != nil {
		return nil, err
	}
	e := opts.Env
	if e == nil {
		srv, err := compose.StartLocal(ctx, compose.LocalOptions{LogPath: filepath.Join(dir, "store.log")})
		if err != nil {
			return nil, fmt.Errorf("runner: start the embedded MinIO: %w", err)
		}
		defer srv.Stop()
		e = env.Local{Local: srv}
	}
	if err := systemStack(e, so.Launcher); err != nil {
		return nil, err
	}
	admin, err := env.Client(e, store.ClientMinio)
	if err != nil {
		return nil, fmt.Errorf("runner: store client: %w", err)
	}
	claim, err := store.ClaimPrefix(ctx, admin, opts.Prefix, store.NewOwner(opts.RunID))
	if err != nil {
		return nil, fmt.Errorf("runner: refusing to run: %w", err)
	}
	if opts.Cleanup {
		defer release(ctx, claim, log)
	}
	r := &runner{opts: opts, env: e, dir: dir, log: log, down: &downState{}}
	hello, err := r.probeSystem(ctx, so.Launcher)
	if err != nil {
		return nil, err
	}
	var bad []error
	for _, sc := range scs {
		if err := ValidateForSystem(sc, hello, so.Launcher.Pausable()); err != nil {
			bad = append(bad, err)
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%w: %w", outcome.ErrBadInput, errors.Join(bad...))
	}
	sum := &outcome.Summary{RunID: opts.RunID, Dir: dir, Started: started, Store: e.Info(), Prefix: opts.Prefix,
		Command: opts.Command, Version: opts.BenchVersion, Preflight: &outcome.Preflight{}}
	// Cells run Options.Jobs at a time, each with its own nodes, fault paths and prefix (a
	// system cannot take a step on the store itself, so none has to run alone).
	cells := Cells(scs, "", false, opts.Seed, DrawSeed)
	results := make([]*outcome.CellResult, len(cells))
	p := &progress{fn: opts.Progress, total: len(cells)}
	sem := make(chan struct{}, max(opts.Jobs, 1))
	var wg sync.WaitGroup
	for i, c := range cells {
		c.Variant = ""
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if ctx.Err() != nil {
				results[i] = &outcome.CellResult{ID: c.ID(), Scenario: c.Scenario.Name, Seed: c.Seed,
					Verdict: checker.Error, Error: "run interrupted before this cell started"}
				return
			}
			p.report(c.ID(), "")
			results[i] = r.systemCell(ctx, c, so, hello)
			p.report(c.ID(), results[i].Verdict)
		})
	}
	wg.Wait()
	sum.Cells = append(sum.Cells, results...)
	sum.Duration = time.Since(started)
	if err := writeJSON(filepath.Join(dir, "run.json"), sum); err != nil {
		return sum, err
	}
	if !opts.NoReports {
		if err := writeReports(dir, sum, !opts.noTrend); err != nil {
			return sum, fmt.Errorf("runner: reports: %w", err)
		}
	}
	return sum, nil
}

// probeSystem starts one node over a path of its own, reads its handshake and stops it.
func (r *runner) probeSystem(ctx context.Context, l system.Launcher) (system.Hello, error) {
	b, err := r.openSysPaths(r.opts.Prefix+"system-probe/", sysPathOptions{})
	if err != nil {
		return system.Hello{}, fmt.Errorf("runner: fault path for the system probe: %w", err)
	}
	defer b.close()
	ncfg, err := b.config("probe")
	if err != nil {
		return system.Hello{}, err
	}
	h, err := l.Launch(ctx, ncfg, filepath.Join(r.dir, "system-probe"), nil)
	if err != nil {
		return system.Hello{}, fmt.Errorf("runner: the system did not start: %w", err)
	}
	h.Kill()
	return h.Hello(), nil
}

// systemEvents are the events a step may wait for on a system's node.
var systemEvents = []history.SignalKind{history.SigClaimed, history.SigPromoted, history.SigAcked, history.SigFenced}

// ValidateForSystem refuses a scenario with a step the system cannot take: each refusal names
// the step, its line and the capability (or the bench feature) it needs.
func ValidateForSystem(sc *scenarios.Scenario, h system.Hello, pausable bool) error {
	var errs []string
	need := func(pos scenarios.Pos, what, capability string) {
		if !h.Has(capability) {
			errs = append(errs, fmt.Sprintf("line %d: %s needs capability %q, which system %s does not declare (it declares %s)",
				pos.Line, what, capability, h.Name, capList(h)))
		}
	}
	if msg := readRefusal(h); msg != "" {
		errs = append(errs, msg)
	}
	for _, w := range sc.Writers {
		if w.Role == "primary" && !h.Has(system.CapSelfElect) {
			// A system that elects itself has its primary started first instead.
			need(w.Pos, "writer "+w.ID+" (a primary at term "+strconv.FormatInt(w.Term, 10)+")", system.CapPromote)
		}
	}
	if sc.Store.AllowUnenforced {
		errs = append(errs, "store.allow_unenforced: the scenario emulates a store the bench refuses before any writer starts; a system run has no such pre-flight of its own")
	}
	for _, st := range sc.Steps {
		what := fmt.Sprintf("steps[%d] (%s)", st.Index, st.Action)
		spec := st.Spec()
		switch {
		case st.Action == scenarios.Promote:
			need(st.Pos, what, system.CapPromote)
			if st.Params.Twin {
				need(st.Pos, what+" at a term another copy holds", system.CapTakeover)
			}
		case st.Action == scenarios.Restart:
			need(st.Pos, what+", which promotes the new incarnation", system.CapPromote)
		case st.Action == scenarios.Relocate:
			need(st.Pos, what, system.CapRelocate)
			need(st.Pos, what+", which promotes its target", system.CapPromote)
			if pr := st.Params; pr.AbortAt != history.AbortNone || pr.LoseHandoff || pr.LoseMessage || pr.Prehydrate {
				errs = append(errs, fmt.Sprintf("line %d: %s: abort, lose_handoff and prehydrate act on the simulated copies' own handoff; "+
					"a system's relocation is relocate to the source, then promote of the target", st.Pos.Line, what))
			}
		case st.Action == scenarios.Pause || st.Action == scenarios.Resume:
			if !pausable {
				errs = append(errs, fmt.Sprintf("line %d: %s needs a node the bench can pause (a process: SIGSTOP); in-process nodes cannot be paused", st.Pos.Line, what))
			}
		case st.Action == scenarios.Crash || st.Action == scenarios.Heal:
		case spec.Rhythm:
			errs = append(errs, fmt.Sprintf("line %d: %s: a flapping path is not driven for a system yet; use partition steps", st.Pos.Line, what))
		case spec.Build != nil:
			// Network and request faults act on the node's path: every system takes them.
		case spec.Store:
			errs = append(errs, fmt.Sprintf("line %d: %s acts on the store itself; a system run does not drive it", st.Pos.Line, what))
		default:
			errs = append(errs, fmt.Sprintf("line %d: %s acts on the simulated copies' segments or recoveries, which a system does not have", st.Pos.Line, what))
		}
		if st.Trigger == scenarios.TriggerAfter && st.After != nil && !slices.Contains(systemEvents, st.After.Event) {
			errs = append(errs, fmt.Sprintf("line %d: %s waits for event %q; a system's node reports only %v", st.Pos.Line, what, st.After.Event, systemEvents))
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("scenario %s cannot run on system %s:\n  %s", sc.Name, h.Name, strings.Join(errs, "\n  "))
}

// readRefusal says why a system without the final read cannot be tested, "" when it has it.
func readRefusal(h system.Hello) string {
	if h.Has(system.CapRead) {
		return ""
	}
	return fmt.Sprintf("system %s does not declare capability %q: the final read is how the bench learns what the store holds", h.Name, system.CapRead)
}

func capList(h system.Hello) string {
	if len(h.Capabilities) == 0 {
		return "none"
	}
	return strings.Join(h.Capabilities, ", ")
}

// sysCell is one executing cell of a system run.
type sysCell struct {
	r     *runner
	c     Cell
	so    SystemOptions
	res   *outcome.CellResult
	log   *slog.Logger
	guard *guard.Sink
	rec   *history.Recorder
	fb    *sysPaths
	clock *wait.Clock // the scenario's time: the simulated stack's, nil (real time) elsewhere
	hello system.Hello
	zero  time.Duration // when the schedule started, on the recorder's clock

	mu      sync.Mutex
	harness []error
	nodes   map[string]*sysNode // by writer id (a restart's incarnation has its own)
	node    map[string]string   // writer id -> node id (its path and its process's id)
	held    map[string]*faults.Set
	primary string
	owner   string // the writer that reported owner last (self-elect routing)
	counts  map[string]map[history.SignalKind]int
	arrived map[int]bool
	gates   gates // http rules' holds until an event
	sent    map[int64]bool
	maxTerm int64
	// promoting is, per writer, the promotion in flight: its term and when it was sent (the
	// claim an owner event reports started then).
	promoting map[string]promotion
	// failed is closed at the first harness problem: the cell ends then.
	failed chan struct{}
	// stale is the writer client 0 keeps writing to (a client with a stale routing table),
	// "" once it learned to look again.
	stale    string
	stopping bool
	bg       sync.WaitGroup
	nextOp   int64
}

type promotion struct {
	term   int64
	invoke time.Duration
}

type sysNode struct {
	writer  string
	h       system.Handle
	crashed bool
	fenced  bool
	ownerAt map[int64]bool // terms it reported owner at
}

func (r *runner) systemCell(ctx context.Context, c Cell, so SystemOptions, hello system.Hello) (res *outcome.CellResult) {
	res = r.newResult(c)
	res.Variant = ""
	res.Kill = so.Kill
	res.Violates = so.Violates
	res.Client = "system " + hello.Name + " " + hello.Version
	res.Probe = fmt.Sprintf("system %s %s (%s), capabilities: %s", hello.Name, hello.Version, so.Launcher.Describe(), capList(hello))
	target := c.Scenario.Name
	if src := c.Scenario.Source; src != "" && !strings.HasPrefix(src, scenarios.CatalogueDir+"/") {
		target = src
	}
	kill := ""
	if so.Kill {
		kill = " --expect-broken"
		if len(so.Violates) > 0 {
			names := make([]string, len(so.Violates))
			for i, v := range so.Violates {
				names[i] = string(v)
			}
			kill += " --expect-violated " + strings.Join(names, ",")
		}
	}
	res.Rerun = fmt.Sprintf("fencebench run --system %s%s --seed %d %s", strconv.Quote(so.Launcher.Describe()), kill, c.Seed, target)
	logStart := fileSize(r.env.LogPath())
	ctx, sink := guard.New(ctx)
	sc := &sysCell{r: r, c: c, so: so, res: res, log: r.log.With("cell", c.ID()), guard: sink, hello: hello,
		nodes: map[string]*sysNode{}, node: map[string]string{}, held: map[string]*faults.Set{},
		counts: map[string]map[history.SignalKind]int{}, arrived: map[int]bool{}, sent: map[int64]bool{},
		promoting: map[string]promotion{}, failed: make(chan struct{})}
	defer func() {
		if p := recover(); p != nil {
			res.Verdict = checker.Error
			res.Error = fmt.Sprintf("harness panic: %v", p)
		}
		if err := sink.Err(); err != nil {
			res.Verdict, res.Result.Verdict = checker.Error, checker.Error
			res.Error = "harness " + err.Error()
		}
		res.Duration = time.Since(res.Started)
		if r.ephemeral {
			// An exploration's schedule: judged, not kept (its nodes' stderr goes with it).
			_ = os.RemoveAll(res.Dir)
			return
		}
		if err := r.persist(c, res, logStart); err != nil && res.Error == "" {
			res.Verdict, res.Error = checker.Error, err.Error()
		}
		if es, err := filepath.Glob(filepath.Join(res.Dir, "node-*.stderr")); err == nil && len(es) > 0 {
			for _, e := range es {
				res.Files = append(res.Files, filepath.Base(e))
			}
			_ = writeJSON(filepath.Join(res.Dir, "result.json"), res)
		}
	}()
	if err := sc.run(ctx); err != nil {
		res.Verdict, res.Error = checker.Error, err.Error()
		res.Result.Verdict, res.Result.Error = checker.Error, err.Error()
		res.Result.Reasons = []string{err.Error()}
	}
	return res
}

// cellTimeout bounds a cell beyond its scenario duration (Options.CellTimeout, 60s by default).
func (sc *sysCell) cellTimeout() time.Duration {
	if sc.r.opts.CellTimeout > 0 {
		return sc.r.opts.CellTimeout
	}
	return 60 * time.Second
}

func (sc *sysCell) fail(err error) {
	sc.mu.Lock()
	sc.harness = append(sc.harness, err)
	if len(sc.harness) == 1 {
		close(sc.failed)
	}
	sc.mu.Unlock()
	sc.log.Error("harness problem", "err", err)
}

func (sc *sysCell) harnessErr() error {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return errors.Join(sc.harness...)
}

func (sc *sysCell) record(e history.Event) { sc.rec.Record(e) }

func (sc *sysCell) run(ctx context.Context) error {
	s := sc.c.Scenario
	if err := admit(s); err != nil {
		return harnessf("%v", err)
	}
	if err := ValidateForSystem(s, sc.hello, sc.so.Launcher.Pausable()); err != nil {
		return err
	}
	sc.clock = sc.r.clock()
	ctx, cancel := context.WithTimeout(ctx, sc.clock.Real(s.Duration)+sc.cellTimeout())
	defer cancel()
	sc.rec = history.NewRecorderOn(sc.clock.Stopwatch())
	rng := rand.New(rand.NewPCG(sc.c.Seed, 0xfa017))
	prefix := sc.r.opts.Prefix + sc.c.ID() + "/"
	b, err := sc.r.openSysPaths(prefix, sysPathOptions{clock: sc.clock, now: sc.rec.Now, rng: rng, record: sc.record, guard: sc.guard})
	if err != nil {
		return harnessf("fault paths: %v", err)
	}
	sc.fb = b
	defer b.close()
	defer sc.killAll()

	// The nodes start side by side, and the schedule's clock starts once they all answered
	// init: a system's start-up (an interpreter importing its SDK) does not eat the schedule.
	// A system that elects itself has its primaries started first, and the others once
	// each primary reported owner, so that the scenario's primary is the first owner.
	selfElect := !sc.hello.Has(system.CapPromote) && sc.hello.Has(system.CapSelfElect)
	var first, rest []scenarios.Writer
	for _, w := range s.Writers {
		if selfElect && w.Role == "primary" {
			first = append(first, w)
		} else {
			rest = append(rest, w)
		}
	}
	if err := sc.launchAll(ctx, first); err != nil {
		return err
	}
	for _, w := range first {
		if !sc.awaitOwner(ctx, w.ID, 20*time.Second) {
			return harnessf("node %s (the scenario's primary) never reported owner within 20s of its start", w.ID)
		}
	}
	if err := sc.launchAll(ctx, rest); err != nil {
		return err
	}
	sc.zero = sc.rec.Now()
	for _, w := range s.Writers {
		if w.Role == "primary" && !selfElect {
			sc.promote(ctx, w.ID, w.Term)
		}
	}
	tctx, stopTraffic := context.WithCancel(ctx)
	var traffic sync.WaitGroup
	if s.Traffic.Clients > 0 && s.Traffic.Rate > 0 {
		every := time.Duration(float64(time.Second) * float64(s.Traffic.Clients) / s.Traffic.Rate)
		for i := 0; i < s.Traffic.Clients; i++ {
			traffic.Add(1)
			sc.guard.Go("a client of the system", func() { sc.client(tctx, every, i) }, traffic.Done)
		}
	}
	for _, st := range s.Steps {
		if st.Trigger == scenarios.TriggerAt {
			sc.background(func() {
				if sc.sleepUntil(ctx, sc.zero+st.At) {
					sc.exec(ctx, st)
				}
			})
		}
	}
	// The schedule runs its course, unless the harness broke (a node broke the protocol).
	sctx, stopSleep := context.WithCancel(ctx)
	go func() {
		select {
		case <-sc.failed:
			stopSleep()
		case <-sctx.Done():
		}
	}()
	sc.sleepUntil(sctx, sc.zero+s.Duration)
	stopSleep()
	if err := sc.harnessErr(); err != nil {
		stopTraffic()
		sc.killAll() // writes in flight end (unknown) so the clients stop
		traffic.Wait()
		return harnessf("%v", err)
	}

	// Wind down: no step starts, clients stop, every fault heals (paused nodes continue),
	// answers in flight arrive (each bounded by the answer timeout), then every node goes.
	sc.mu.Lock()
	sc.stopping = true
	sc.mu.Unlock()
	sc.gates.openAll()
	stopTraffic()
	trafficEnd := sc.rec.Now()
	sc.healAll()
	traffic.Wait()
	sc.bg.Wait()
	sc.killAll()
	dctx, cancelDrain := context.WithTimeout(context.Background(), 15*time.Second)
	if err := b.drain(dctx); err != nil {
		sc.fail(err)
	}
	cancelDrain()
	if err := sc.harnessErr(); err != nil {
		return harnessf("%v", err)
	}

	// The final read, by a fresh node over a path no fault touches, at a term above all.
	ncfg, err := b.config(FinalReader)
	if err != nil {
		return harnessf("%v", err)
	}
	rctx, cancelRead := context.WithTimeout(ctx, 60*time.Second)
	defer cancelRead()
	rd, err := sc.so.Launcher.Launch(rctx, ncfg, sc.res.Dir, nil)
	if err != nil {
		return harnessf("the final reader: %v", err)
	}
	defer rd.Kill()
	sc.mu.Lock()
	term := sc.maxTerm + 1
	sc.mu.Unlock()
	sp := sc.rec.Begin(history.Event{Kind: history.Audit, Writer: FinalReader, Term: term})
	ops, err := rd.Read(rctx, term)
	if err != nil {
		return harnessf("the final read at term %d: %v", term, err)
	}
	rd.Kill()
	if ops == nil {
		ops = []int64{}
	}
	sp.Event().Ops = ops
	sp.End(history.OK, nil)

	sc.res.Events = sc.rec.Events()
	sc.res.Ledger = b.ledger()
	ex := sc.expect(trafficEnd)
	in := checker.Input{Events: sc.res.Events, Ledger: sc.res.Ledger, Final: checker.Final{Recovered: ops, AuditTerm: term}, Expect: ex}
	sc.res.Input = &outcome.StoredInput{Final: in.Final, Expect: in.Expect}
	res := checker.Check(in)
	sc.judgeSystem(&res, ex, ops)
	sc.res.Result = res
	sc.res.Verdict = res.Verdict
	return nil
}

// launchAll starts the nodes of ws side by side.
func (sc *sysCell) launchAll(ctx context.Context, ws []scenarios.Writer) error {
	errs := make([]error, len(ws))
	var starting sync.WaitGroup
	for i, w := range ws {
		starting.Add(1)
		go func() { defer starting.Done(); errs[i] = sc.launch(ctx, w.ID, w.ID) }()
	}
	starting.Wait()
	return errors.Join(errs...)
}

// awaitOwner waits until writer reported owner.
func (sc *sysCell) awaitOwner(ctx context.Context, writer string, d time.Duration) bool {
	deadline := sc.rec.Now() + d
	for sc.rec.Now() < deadline && ctx.Err() == nil {
		sc.mu.Lock()
		n := sc.nodes[writer]
		ok := n != nil && len(n.ownerAt) > 0
		sc.mu.Unlock()
		if ok {
			return true
		}
		sc.clock.For(ctx, 10*time.Millisecond)
	}
	return false
}

// launch starts the node of writer (node id nodeID, its path) and records its events.
func (sc *sysCell) launch(ctx context.Context, writer, nodeID string) error {
	ncfg, err := sc.fb.config(nodeID)
	if err != nil {
		return harnessf("%v", err)
	}
	h, err := sc.so.Launcher.Launch(ctx, ncfg, sc.res.Dir, func(e system.Event) { sc.onEvent(writer, e) })
	if err != nil {
		return harnessf("%v", err)
	}
	sc.mu.Lock()
	sc.nodes[writer] = &sysNode{writer: writer, h: h, ownerAt: map[int64]bool{}}
	sc.node[writer] = nodeID
	sc.mu.Unlock()
	return nil
}

func (sc *sysCell) get(writer string) *sysNode {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.nodes[writer]
}

func (sc *sysCell) killAll() {
	sc.mu.Lock()
	var hs []system.Handle
	for _, n := range sc.nodes {
		if n.h.Err() != nil {
			sc.harness = append(sc.harness, n.h.Err())
		}
		hs = append(hs, n.h)
	}
	sc.mu.Unlock()
	for _, h := range hs {
		h.Kill()
	}
}

func (sc *sysCell) noteTerm(t int64) {
	if t > sc.maxTerm {
		sc.maxTerm = t
	}
}

// onEvent records a node's own event and signals it.
func (sc *sysCell) onEvent(writer string, e system.Event) {
	sc.mu.Lock()
	n := sc.nodes[writer]
	sc.noteTerm(e.Term)
	pr, promoting := sc.promoting[writer]
	switch e.Event {
	case system.EventOwner:
		if n != nil {
			n.ownerAt[e.Term] = true
		}
		sc.owner = writer
	case system.EventFenced:
		if n != nil {
			n.fenced = true
		}
	}
	sc.mu.Unlock()
	switch e.Event {
	case system.EventOwner:
		ev := history.Event{Kind: history.Claim, Writer: writer, Term: e.Term, Outcome: history.OK, Detail: "owner"}
		if promoting && pr.term == e.Term {
			// The claim began when the promotion was sent: a rival it fenced may hear of it
			// before the node reports owner.
			ev.Invoke = max(pr.invoke, 1)
		}
		sc.record(ev)
		sc.signal(writer, history.SigClaimed)
	case system.EventFenced:
		sc.record(history.Event{Kind: history.Fenced, Writer: writer, Term: e.Term, Outcome: history.FencedOut, Err: e.Text})
		sc.signal(writer, history.SigFenced)
	}
}

// promote commands writer's node to own the shard at term, in the background; a refusal is
// data, a node breaking the protocol a harness error.
func (sc *sysCell) promote(ctx context.Context, writer string, term int64) {
	n := sc.get(writer)
	if n == nil {
		sc.fail(fmt.Errorf("promote: no node for writer %q", writer))
		return
	}
	sc.mu.Lock()
	sc.noteTerm(term)
	sc.mu.Unlock()
	sc.background(func() {
		sp := sc.rec.Begin(history.Event{Kind: history.Promote, Writer: writer, Term: term})
		sc.mu.Lock()
		sc.promoting[writer] = promotion{term: term, invoke: sp.Event().Invoke}
		sc.mu.Unlock()
		err := n.h.Promote(ctx, term)
		sc.mu.Lock()
		delete(sc.promoting, writer)
		reported := n.ownerAt[term]
		if err == nil && !n.crashed {
			sc.primary = writer
		}
		sc.mu.Unlock()
		// A claim the node did not report as owner is recorded from the promotion's answer:
		// its promote_ok is the acquisition, a refusal or an unknown outcome a claim that
		// did not succeed (it may still have superseded others on its way).
		claim := func(o history.Outcome, err error) {
			if reported {
				return
			}
			e := *sp.Event()
			c := history.Event{Kind: history.Claim, Writer: writer, Term: term, Outcome: o,
				Invoke: max(e.Invoke, 1), Complete: max(e.Complete, e.Invoke, 1), Detail: "promote"}
			if err != nil {
				c.Err = err.Error()
			}
			sc.record(c)
		}
		switch {
		case err == nil:
			sp.End(history.OK, nil)
			claim(history.OK, nil)
			if !reported {
				sc.signal(writer, history.SigClaimed)
			}
			sc.signal(writer, history.SigPromoted)
		case system.IsHarness(err):
			sp.End(history.Fail, err)
			sc.fail(err)
		case system.CodeOf(err) == system.CodeFenced:
			sp.End(history.FencedOut, err)
			claim(history.FencedOut, err)
		case system.CodeOf(err) != "":
			sp.End(history.Fail, err)
			claim(history.Fail, err)
		default:
			sp.End(history.Ambiguous, err)
			claim(history.Ambiguous, err)
		}
	})
}

// relocate asks source to hand the shard to target at a term above every term seen, and once
// source answered relocate_ok (it stood down) promotes target at that term: a cluster
// manager's relocation, the nodes never talking to each other. The handoff is recorded as the
// source's Handoff event (ok: it handed over, so HandoffResolves no longer counts it serving);
// an error answer leaves the shard where it was and the target unpromoted.
func (sc *sysCell) relocate(ctx context.Context, source, target string) {
	n := sc.get(source)
	if n == nil || sc.get(target) == nil {
		sc.fail(fmt.Errorf("relocate: no node for writer %q or its target %q", source, target))
		return
	}
	sc.mu.Lock()
	term := sc.maxTerm + 1
	sc.noteTerm(term)
	sc.mu.Unlock()
	sc.background(func() {
		sp := sc.rec.Begin(history.Event{Kind: history.Handoff, Writer: source, Term: term, Detail: target})
		err := n.h.Relocate(ctx, term, target)
		switch {
		case err == nil:
			sp.End(history.OK, nil)
			sc.mu.Lock()
			if sc.primary == source {
				sc.primary = ""
			}
			sc.mu.Unlock()
			sc.promote(ctx, target, term)
		case system.IsHarness(err):
			sp.End(history.Fail, err)
			sc.fail(err)
		default:
			sp.End(history.Fail, err)
		}
	})
}

// maxInFlight bounds the writes one client has waiting for an answer (a paused node's pile).
const maxInFlight = 32

// client sends a write every interval, without waiting for the answers of the earlier ones
// (at most maxInFlight outstanding), to the copy it believes primary: the one last promoted,
// or the last that reported owner. Client 0 has a stale routing table: it keeps writing to the
// copy it chose until that copy refuses a write (fenced, not owner) or crashes, so a
// superseded copy still hears from a client, as a zombie would.
func (sc *sysCell) client(ctx context.Context, every time.Duration, idx int) {
	t := sc.clock.NewTicker(every)
	defer t.Stop()
	sem := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		sc.mu.Lock()
		target := sc.primary
		if target == "" || (sc.nodes[target] != nil && sc.nodes[target].crashed) {
			target = sc.owner
		}
		if idx == 0 {
			if n := sc.nodes[sc.stale]; n != nil && !n.crashed {
				target = sc.stale
			} else {
				sc.stale = target
			}
		}
		n := sc.nodes[target]
		if n == nil || n.crashed {
			sc.mu.Unlock()
			continue
		}
		select {
		case sem <- struct{}{}:
		default:
			sc.mu.Unlock()
			continue
		}
		sc.nextOp++
		op := sc.nextOp
		sc.sent[op] = true
		sc.mu.Unlock()
		sent := sc.rec.Record(history.Event{Kind: history.Op, Writer: target, Ops: []int64{op}, Outcome: history.OK}).Invoke
		wg.Add(1)
		sc.guard.Go("a write of a client of the system", func() { sc.write(ctx, n, target, op, sent, idx) }, func() {
			<-sem
			wg.Done()
		})
	}
}

// write sends one write and records its answer. A write in flight when traffic stops still
// gets its answer: the wind-down waits for it (the node's answer timeout bounds it).
func (sc *sysCell) write(ctx context.Context, n *sysNode, target string, op int64, sent time.Duration, idx int) {
	term, at, err := n.h.WriteAt(context.WithoutCancel(ctx), op, "op-"+strconv.FormatInt(op, 10))
	// The answer is placed where it was read, in the order of the node's output (an event
	// printed after it is recorded after it), not when this goroutine got to it.
	answered := min(max(at.Sub(sc.rec.Start()), sent), sc.rec.Now())
	if sc.clock != nil {
		answered = max(sc.rec.Now(), sent) // scenario time: an in-process node answered just now
	}
	if c := system.CodeOf(err); idx == 0 && err != nil && c != system.CodeUnknown {
		sc.mu.Lock()
		if sc.stale == target {
			sc.stale = ""
		}
		sc.mu.Unlock()
	}
	switch {
	case err == nil:
		sc.mu.Lock()
		sc.noteTerm(term)
		sc.mu.Unlock()
		sc.record(history.Event{Kind: history.Ack, Writer: target, Term: term, Ops: []int64{op}, Invoke: sent,
			Complete: max(answered, sent, 1), Outcome: history.OK})
		sc.signal(target, history.SigAcked)
	case system.IsHarness(err):
		sc.fail(err)
	case system.CodeOf(err) == system.CodeFenced:
		sc.mu.Lock()
		first := !n.fenced
		n.fenced = true
		sc.mu.Unlock()
		if first {
			sc.signal(target, history.SigFenced)
		}
	}
}

func (sc *sysCell) background(fn func()) {
	sc.bg.Add(1)
	sc.guard.Go("a step of a system run", fn, sc.bg.Done)
}

func (sc *sysCell) sleepUntil(ctx context.Context, at time.Duration) bool {
	d := at - sc.rec.Now()
	if d <= 0 {
		return ctx.Err() == nil
	}
	return sc.clock.For(ctx, d)
}

// signal counts writer's event and starts the steps waiting for it.
func (sc *sysCell) signal(writer string, kind history.SignalKind) {
	sc.mu.Lock()
	if sc.counts[writer] == nil {
		sc.counts[writer] = map[history.SignalKind]int{}
	}
	sc.counts[writer][kind]++
	n := sc.counts[writer][kind]
	var due []scenarios.Step
	for _, st := range sc.c.Scenario.Steps {
		if a := st.After; st.Trigger == scenarios.TriggerAfter && a != nil && a.Writer == writer && a.Event == kind && a.Count == n {
			sc.arrived[st.Index] = true
			due = append(due, st)
		}
	}
	stopping := sc.stopping
	sc.mu.Unlock()
	sc.gates.signal(writer, kind, n)
	if stopping {
		return
	}
	for _, st := range due {
		sc.background(func() {
			ctx := context.Background()
			if st.After.Delay > 0 {
				sc.clock.For(ctx, st.After.Delay)
			}
			sc.exec(ctx, st)
		})
	}
}

func (sc *sysCell) setOf(writer string) *faults.Set {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if sc.held[writer] == nil {
		sc.held[writer] = faults.NewSet(writer, nil, sc.record)
	}
	return sc.held[writer]
}

func (sc *sysCell) pathOf(writer string) route {
	sc.mu.Lock()
	id, ok := sc.node[writer]
	sc.mu.Unlock()
	if !ok {
		id = writer
	}
	p, err := sc.fb.route(id)
	if err != nil {
		sc.fail(err)
		return nil
	}
	return p
}

// exec carries out one step on the system's nodes and paths.
func (sc *sysCell) exec(ctx context.Context, st scenarios.Step) {
	sc.mu.Lock()
	stopping := sc.stopping
	sc.mu.Unlock()
	if stopping {
		return
	}
	pr := st.Params
	spec := st.Spec()
	window := func(set *faults.Set) {
		if st.For > 0 && spec.Window {
			sc.background(func() {
				sc.clock.For(context.Background(), st.For)
				if err := set.Close(st.FaultName()); err != nil {
					sc.fail(err)
				}
			})
		}
	}
	switch st.Action {
	case scenarios.Promote:
		sc.promote(ctx, pr.Writer, pr.Term)
	case scenarios.Relocate:
		sc.relocate(ctx, pr.Writer, pr.Target)
	case scenarios.Pause:
		n := sc.get(pr.Writer)
		if n == nil {
			return
		}
		set := sc.setOf(pr.Writer)
		err := set.Open(faults.FuncFault(st.FaultName(), faults.Protocol,
			func() error {
				sc.record(history.Event{Kind: history.Pause, Writer: pr.Writer})
				return n.h.Pause()
			},
			func() error {
				sc.record(history.Event{Kind: history.Resume, Writer: pr.Writer})
				return n.h.Resume()
			}))
		if err != nil {
			sc.fail(err)
			return
		}
		window(set)
	case scenarios.Resume:
		if err := sc.setOf(pr.Writer).CloseLayer(faults.Protocol); err != nil {
			sc.fail(err)
		}
	case scenarios.Crash:
		n := sc.get(pr.Writer)
		if n == nil {
			return
		}
		err := sc.setOf(pr.Writer).Open(faults.FuncFault(st.FaultName(), faults.Protocol, func() error {
			sc.mu.Lock()
			n.crashed = true
			if sc.primary == pr.Writer {
				sc.primary = ""
			}
			if sc.owner == pr.Writer {
				sc.owner = ""
			}
			sc.mu.Unlock()
			sc.record(history.Event{Kind: history.Crash, Writer: pr.Writer})
			n.h.Kill()
			return nil
		}, nil))
		if err != nil {
			sc.fail(err)
		}
	case scenarios.Restart:
		sc.mu.Lock()
		nodeID, ok := sc.node[pr.Writer]
		sc.mu.Unlock()
		if !ok {
			sc.fail(fmt.Errorf("restart: no node for writer %q", pr.Writer))
			return
		}
		sc.background(func() {
			if n := sc.get(pr.Writer); n != nil && !n.crashed {
				// A restart follows a crash; one whose crash never came kills the node first.
				sc.mu.Lock()
				n.crashed = true
				sc.mu.Unlock()
				n.h.Kill()
			}
			if err := sc.launch(ctx, pr.As, nodeID); err != nil {
				sc.fail(err)
				return
			}
			sc.record(history.Event{Kind: history.Restart, Writer: pr.As, Detail: pr.Writer})
			sc.promote(ctx, pr.As, pr.Term)
		})
	case scenarios.Heal:
		if p := sc.pathOf(pr.Writer); p != nil {
			if err := p.Faults().CloseLayer(faults.L4); err != nil {
				sc.fail(err)
			}
		}
	default:
		if spec.Build == nil {
			sc.fail(fmt.Errorf("step %d: action %s is not driven for a system", st.Index, st.Action))
			return
		}
		p := sc.pathOf(pr.Writer)
		if p == nil {
			return
		}
		if u := pr.Until; u != nil {
			st.Params.Rule.Until = sc.gates.hold(*u)
		}
		if err := p.Faults().Open(st.Fault()); err != nil {
			sc.fail(err)
			return
		}
		window(p.Faults())
	}
}

// healAll ends every fault: rules and network faults on every path, paused nodes continue.
func (sc *sysCell) healAll() {
	sc.mu.Lock()
	ids := map[string]bool{}
	for _, id := range sc.node {
		ids[id] = true
	}
	sets := map[string]*faults.Set{}
	for w, s := range sc.held {
		sets[w] = s
	}
	sc.mu.Unlock()
	for _, layer := range []faults.Layer{faults.L7, faults.L4} {
		for _, id := range sortedKeys(ids) {
			p, err := sc.fb.route(id)
			if err != nil {
				sc.fail(err)
				continue
			}
			if err := p.Faults().CloseLayer(layer); err != nil {
				sc.fail(err)
			}
		}
	}
	for _, w := range sortedKeys(sets) {
		if err := sets[w].CloseLayer(faults.Protocol); err != nil {
			sc.fail(err)
		}
	}
}

func (sc *sysCell) missed(st scenarios.Step) string {
	if st.Trigger != scenarios.TriggerAfter || st.After == nil {
		return ""
	}
	sc.mu.Lock()
	came := sc.arrived[st.Index]
	sc.mu.Unlock()
	if came {
		return ""
	}
	return fmt.Sprintf("%s never reached its %s event #%d", st.After.Writer, st.After.Event, st.After.Count)
}

func (sc *sysCell) expect(trafficEnd time.Duration) checker.Expect {
	s := sc.c.Scenario
	e := checker.Expect{MinAcked: s.Expect.MinAcked, MaxTimeToFence: s.Expect.MaxTimeToFence, MaxTimeToAck: s.Expect.MaxTimeToAck, Serving: s.Expect.Serving,
		TrafficEnd: trafficEnd}
	for _, w := range s.Writers {
		e.LedgerActors = append(e.LedgerActors, w.ID) // a node's store calls are only in its path's ledger
	}
	for _, st := range s.Steps {
		if st.Action == scenarios.Restart && st.Params.As != "" {
			e.LedgerActors = append(e.LedgerActors, st.Params.As) // so are its restarted incarnation's
		}
	}
	for _, st := range s.Steps {
		if m := sc.missed(st); m != "" && st.Spec().Moves {
			e.Unrun = append(e.Unrun, fmt.Sprintf("steps[%d] (%s): %s", st.Index, st.Action, m))
		}
	}
	if s.Expect.FaultsMustFire != "none" {
		for _, st := range s.Steps {
			if spec := st.Spec(); spec.Fault {
				e.Faults = append(e.Faults, checker.Fault{Name: st.FaultName(), Layer: string(spec.Layer), Missed: sc.missed(st)})
			}
		}
	}
	if sc.so.Kill {
		e.Verdict, e.Violated = checker.Fail, sc.so.Violates
		return e
	}
	e.Verdict = checker.Verdict(s.Expect.Verdict)
	e.Violated = s.Expect.Violated
	e.Fenced = s.Expect.Fenced
	return e
}

// judgeSystem adds what only a system run checks to the checker's result: no phantom op in
// the final read, and, for a system that declares terms, one acknowledging copy at a time per
// term (folded into MutualExclusion); then settles the verdict again when either failed.
func (sc *sysCell) judgeSystem(res *checker.Result, ex checker.Expect, read []int64) {
	if res.Verdict == checker.Error {
		return
	}
	sc.mu.Lock()
	sent := sc.sent
	sc.mu.Unlock()
	phantom := checker.InvariantResult{Name: NoPhantomOp, Status: checker.Pass}
	var ghosts []int64
	for _, op := range read {
		if !sent[op] {
			ghosts = append(ghosts, op)
		}
	}
	if len(ghosts) == 0 {
		phantom.Explanation = fmt.Sprintf("every one of the %d ops the final read returned was sent by a client", len(read))
	} else {
		sort.Slice(ghosts, func(i, j int) bool { return ghosts[i] < ghosts[j] })
		phantom.Status, phantom.Violations = checker.Fail, len(ghosts)
		phantom.Explanation = fmt.Sprintf("the final read returned %d ops no client ever sent", len(ghosts))
		phantom.Narrative = fmt.Sprintf("the final read returned op %d, which no client sent (of %d such ops)", ghosts[0], len(ghosts))
	}
	res.Invariants = append(res.Invariants, phantom)
	var changed []string
	if phantom.Status == checker.Fail {
		changed = append(changed, NoPhantomOp)
	}
	if sc.hello.Has(system.CapTerms) {
		if v, narrative := oneAckerPerTerm(sc.res.Events); v > 0 {
			for i := range res.Invariants {
				ir := &res.Invariants[i]
				if ir.Name != checker.MutualExclusion {
					continue
				}
				if ir.Status != checker.Fail {
					ir.Status, ir.Explanation, ir.Narrative = checker.Fail, fmt.Sprintf("%d acks at a term another copy had since acknowledged at", v), narrative
					changed = append(changed, checker.MutualExclusion)
				}
				ir.Violations += v
			}
		}
	}
	if len(changed) == 0 {
		// The checker counted its own invariants; a system run judged one more.
		for i, r := range res.Reasons {
			if strings.HasPrefix(r, "all ") && strings.HasSuffix(r, " invariants held") {
				res.Reasons[i] = fmt.Sprintf("all %d invariants held", len(res.Invariants))
				res.Narrative = strings.Replace(res.Narrative, r, res.Reasons[i], 1)
			}
		}
		return
	}
	reason := func(n string) string {
		for _, ir := range res.Invariants {
			if ir.Name == n {
				return n + " failed: " + ir.Explanation
			}
		}
		return n + " failed"
	}
	res.Raw = checker.Fail
	switch {
	case ex.Verdict != checker.Fail:
		res.Verdict = checker.Fail
		for _, n := range changed {
			res.Reasons = append(res.Reasons, reason(n))
		}
	default:
		failed := map[string]bool{}
		for _, ir := range res.Invariants {
			if ir.Status == checker.Fail {
				failed[ir.Name] = true
			}
		}
		killed := len(failed) > 0
		for _, n := range ex.Violated {
			killed = killed && failed[n]
		}
		if killed {
			res.Verdict = checker.Pass
			res.Reasons = append([]string{"the broken system was caught: " + strings.Join(sortedKeys(failed), ", ") + " failed"}, res.Reasons...)
		}
	}
	res.Narrative = string(res.Verdict) + ": " + strings.Join(res.Reasons, "; ") + "."
}

// oneAckerPerTerm counts the acks, at a term a system declared, by a copy after another copy
// had acknowledged at that term since this copy's own earlier ack: two copies taking turns
// acknowledging for one term means two owners.
func oneAckerPerTerm(evs []history.Event) (int, string) {
	type last struct {
		writer string
		at     time.Duration
	}
	latest := map[int64]last{}
	violations := 0
	narrative := ""
	acks := slices.Clone(evs)
	sort.SliceStable(acks, func(i, j int) bool { return acks[i].Complete < acks[j].Complete })
	seen := map[int64]map[string]bool{}
	for _, e := range acks {
		if e.Kind != history.Ack || e.Term == 0 {
			continue
		}
		l, ok := latest[e.Term]
		if seen[e.Term] == nil {
			seen[e.Term] = map[string]bool{}
		}
		if ok && l.writer != e.Writer && seen[e.Term][e.Writer] {
			violations++
			if narrative == "" {
				narrative = fmt.Sprintf("%s acknowledged %s at term %d at %s, after %s had acknowledged at term %d at %s and after %s's own earlier acks: two copies acknowledged for one term in turn",
					e.Writer, sysOps(e.Ops), e.Term, sysSecs(e.Complete), l.writer, e.Term, sysSecs(l.at), e.Writer)
			}
		}
		seen[e.Term][e.Writer] = true
		latest[e.Term] = last{e.Writer, e.Complete}
	}
	return violations, narrative
}

func sysSecs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

func sysOps(ops []int64) string {
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = strconv.FormatInt(op, 10)
	}
	return "op " + strings.Join(parts, ", ")
}
