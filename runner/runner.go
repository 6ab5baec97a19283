package runner

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
)

// Options configure a run.
type Options struct {
	// Out is the results folder; the run writes Out/<RunID>/. "" means "results".
	Out string
	// RunID names the run and its results folder: one safe path component (see
	// ValidateRunID); "" means NewRunID of the start time.
	RunID string
	// Seed, when non-zero, overrides every scenario's seed.
	Seed uint64
	// Variant, when set, runs every scenario with this protocol variant.
	Variant fence.Variant
	// Client, when set, overrides every scenario's store client ("minio-go" or "aws-sdk").
	Client string
	// Matrix adds, per scenario, a cell for every variant it declares it kills.
	Matrix bool
	// Jobs is how many cells run side by side (0 or 1: one at a time). A cell whose
	// scenario acts on the store itself always runs alone.
	Jobs int
	// Env is the store; nil starts an embedded MinIO for the run and stops it afterwards.
	Env env.Env
	// Logger receives structured progress records; nil discards them.
	Logger *slog.Logger
	// Progress, when set, is called as cells start and finish.
	Progress func(done, total int, cell string, verdict checker.Verdict)
	// Command is the command line, for rerun hints and reports.
	Command string
	// BenchVersion is recorded in the results.
	BenchVersion string
	// CellTimeout bounds one cell beyond its scenario duration; 0 means 60s.
	CellTimeout time.Duration
	// NoReports skips the HTML pages, junit.xml, summary.json and the trend page: the run
	// writes run.json and the cells' folders only.
	NoReports bool
	// Prefix is the key prefix the run confines itself to, ending in "/" (see
	// store.ValidatePrefix); "" means "<RunID>/". The run claims it with a marker object
	// (store.ClaimPrefix) and refuses to start when the prefix already holds objects or a
	// parent or sub-prefix belongs to another run, so every object under it is the run's own.
	Prefix string
	// Cleanup deletes every object under Prefix when the run ends (an external store), the
	// claim's marker last; otherwise the objects and the marker stay for inspection.
	Cleanup bool
	// Shard, when set, runs only that part of the plan (see ParseShard); the summary records
	// the shard and every cell id of the whole plan, for `fencebench merge`.
	Shard *ShardSpec

	// skipPreflight is a test seam: the run skips the pre-flight (its summary records an
	// empty one), so a test can run cells on a store the pre-flight would refuse and show
	// what the checker finds there. The command line has no way to set it.
	skipPreflight bool
	// noTrend leaves the trend page of the results folder alone (an exploration's runs).
	noTrend bool
}

// DrawSeed returns a random non-zero seed.
func DrawSeed() uint64 {
	var b [8]byte
	for {
		_, _ = rand.Read(b[:])
		if s := binary.LittleEndian.Uint64(b[:]) >> 1; s != 0 {
			return s
		}
	}
}

// begin fills opts' defaults (results folder, run id, prefix), checks the run id and the
// prefix (a bad one wraps outcome.ErrBadInput), and creates the run's folder; it returns when
// the run started, its logger and its folder. Run and RunSystem both start this way.
func (opts *Options) begin() (time.Time, *slog.Logger, string, error) {
	if opts.Out == "" {
		opts.Out = "results"
	}
	started := time.Now()
	if opts.RunID == "" {
		opts.RunID = NewRunID(started)
	}
	if opts.Prefix == "" {
		opts.Prefix = opts.RunID + "/"
	}
	if err := ValidateRunID(opts.RunID); err != nil {
		return started, nil, "", err
	}
	if err := store.ValidatePrefix(opts.Prefix); err != nil {
		return started, nil, "", fmt.Errorf("%w: %w", outcome.ErrBadInput, err)
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	dir := filepath.Join(opts.Out, opts.RunID)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return started, nil, "", fmt.Errorf("runner: results folder: %w", err)
	}
	return started, log, dir, nil
}

// Run executes every cell of scs and persists everything under Out/<RunID>/. It returns an
// error only when the run could not start at all (no store, results folder not writable, the
// prefix claimed by another run; a bad run id or prefix wraps outcome.ErrBadInput); per-cell problems
// are in the cells' verdicts.
func Run(ctx context.Context, scs []*scenarios.Scenario, opts Options) (*outcome.Summary, error) {
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
		log.Info("store started", "stack", "local", "endpoint", srv.Endpoint)
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
	cells, notHere := applicable(Cells(scs, opts.Variant, opts.Matrix, opts.Seed, DrawSeed), e)
	var shard *outcome.Shard
	if opts.Shard != nil {
		cells, shard = selectShard(cells, *opts.Shard)
	}
	sum := &outcome.Summary{RunID: opts.RunID, Dir: dir, Started: started, Store: e.Info(), Prefix: opts.Prefix,
		Command: opts.Command, Version: opts.BenchVersion, NotApplicable: notHere, Shard: shard}
	r := &runner{opts: opts, env: e, dir: dir, log: log, down: &downState{}}
	if env.UpstreamTLS(e.Config()) != nil {
		// An HTTPS store: the fault paths terminate TLS with certificates of a CA that exists
		// only in this process, for this run.
		if r.ca, err = netpath.NewCA(); err != nil {
			return nil, fmt.Errorf("runner: run-local CA: %w", err)
		}
	}
	sum.Preflight = &outcome.Preflight{}
	if !opts.skipPreflight {
		sum.Preflight = r.preflight(ctx)
	}
	r.cells(ctx, cells, sum)
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

// cells runs the cells into sum, in plan order. With Options.Jobs above 1, that many cells
// run side by side (each has its own prefix and fault paths; the store is shared); a cell
// whose scenario acts on the store itself (its drives, its process) runs alone, after the
// others. A cell that cannot start (the run was interrupted, the store became unreachable) is
// recorded as an error without running.
func (r *runner) cells(ctx context.Context, cells []Cell, sum *outcome.Summary) {
	results := make([]*outcome.CellResult, len(cells))
	p := &progress{fn: r.opts.Progress, total: len(cells)}
	jobs := max(r.opts.Jobs, 1)
	var alone []int
	var wg sync.WaitGroup
	sem := make(chan struct{}, jobs)
	for i, c := range cells {
		if jobs == 1 {
			results[i] = r.runOne(ctx, c, sum.Preflight, p)
			continue
		}
		if actsOnStore(c.Scenario) {
			alone = append(alone, i)
			continue
		}
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = r.runOne(ctx, c, sum.Preflight, p)
		}()
	}
	wg.Wait()
	for _, i := range alone {
		results[i] = r.runOne(ctx, cells[i], sum.Preflight, p)
	}
	sum.Cells = append(sum.Cells, results...)
}

// progress reports cells starting and finishing, one call at a time.
type progress struct {
	mu    sync.Mutex
	fn    func(done, total int, cell string, verdict checker.Verdict)
	total int
	done  int
}

func (p *progress) report(cell string, v checker.Verdict) {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if v != "" {
		p.done++
	}
	p.fn(p.done, p.total, cell, v)
}

// runOne runs cell c, or records why it could not start.
func (r *runner) runOne(ctx context.Context, c Cell, pf *outcome.Preflight, p *progress) *outcome.CellResult {
	log := r.log
	if r.down.get() == "" && ctx.Err() == nil {
		pctx, cancel := context.WithTimeout(ctx, env.ProbeBudget)
		if err := r.checkStore(pctx); err != nil && ctx.Err() == nil {
			r.down.set(err.Error())
			log.Error("the store is unreachable; stopping the run", "err", err, "log", r.env.LogPath())
		}
		cancel()
	}
	notRun := ""
	switch {
	case ctx.Err() != nil:
		notRun = "run interrupted before this cell started"
	case r.down.get() != "":
		notRun = "not run: " + r.down.get()
	case pf.Error != "":
		notRun = "not run: the pre-flight could not judge the store: " + pf.Error
	}
	if notRun != "" {
		return &outcome.CellResult{ID: c.ID(), Scenario: c.Scenario.Name, Variant: c.Variant, Seed: c.Seed,
			Verdict: checker.Error, Error: notRun}
	}
	if res := r.refuse(c, pf); res != nil {
		log.Info("cell refused: the store is unsafe", "cell", c.ID(), "probe", res.StoreUnsafe.Probe)
		p.report(c.ID(), res.Verdict)
		return res
	}
	p.report(c.ID(), "")
	log.Info("cell start", "cell", c.ID(), "seed", c.Seed, "variant", c.Variant)
	res := r.cell(ctx, c)
	if ctx.Err() != nil && res.Verdict != checker.Error {
		// A cell cut short proves nothing either way.
		res.Verdict, res.Error = checker.Error, "run interrupted: "+context.Cause(ctx).Error()
	}
	log.Info("cell done", "cell", c.ID(), "verdict", res.Verdict, "acked", res.Result.Acked, "took", res.Duration.Round(time.Millisecond))
	p.report(c.ID(), res.Verdict)
	return res
}

// release deletes the run's objects and its claim on the prefix, whatever ended the run.
func release(ctx context.Context, claim *store.Claim, log *slog.Logger) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
	defer cancel()
	if n, err := claim.Release(cctx); err != nil {
		log.Error("cleanup of the run prefix failed", "prefix", claim.Prefix, "deleted", n, "err", err)
	} else {
		log.Info("cleaned up the run prefix", "prefix", claim.Prefix, "deleted", n)
	}
}

// NewRunID names a run started at t: the UTC time, sortable, then random hex so that runs
// started in the same second never share a name, e.g. 20261130T154500Z-3f9a1c.
func NewRunID(t time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return t.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// ValidateRunID accepts a run id that is one safe path component: 1 to 128 characters of
// A-Z, a-z, 0-9, ".", "_" and "-", and not "." or "..". Anything else wraps outcome.ErrBadInput.
func ValidateRunID(id string) error {
	if err := safeComponent(id); err != nil {
		return fmt.Errorf("%w: run id %q: %v", outcome.ErrBadInput, id, err)
	}
	return nil
}

// safeComponent checks that name can only ever mean one entry inside a folder.
func safeComponent(name string) error {
	if name == "" || len(name) > 128 {
		return errors.New("want 1 to 128 characters")
	}
	if name == "." || name == ".." {
		return errors.New("want a name, not . or ..")
	}
	for _, r := range name {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return fmt.Errorf("character %q not allowed (want A-Z a-z 0-9 . _ -)", r)
		}
	}
	return nil
}

var errHarness = errors.New("harness")

// harnessf marks an error as a harness problem (verdict error, never a safety verdict).
func harnessf(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errHarness}, a...)...)
}

// applicable splits off the cells whose scenario acts on the store itself (its drives or its
// process) when the run's store cannot be faulted from inside (any stack but local), and those
// that slow a drive when this process cannot serve drives through FUSE: they do not run, and
// the summary names each with the reason, so a nightly on an external store runs the rest of
// the catalogue instead of ending in a harness error.
func applicable(cells []Cell, e env.Env) ([]Cell, []string) {
	_, local := e.(env.StoreFaults)
	var keep []Cell
	var skipped []string
	for _, c := range cells {
		switch {
		case !actsOnStore(c.Scenario):
		case !local:
			skipped = append(skipped, c.ID()+": acts on the store itself (drives, restarts); needs --stack local")
			continue
		case slowsDrives(c.Scenario):
			if err := fuseUsable(); err != nil {
				skipped = append(skipped, c.ID()+": slows a drive (drive-slow), which needs FUSE: "+err.Error())
				continue
			}
		}
		keep = append(keep, c)
	}
	return keep, skipped
}
