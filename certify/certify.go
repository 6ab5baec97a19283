package certify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"runtime/debug"
	"slices"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// Class says what failing a probe means.
type Class string

// The probe classes.
const (
	// Hard marks a probe whose failure disqualifies the store.
	Hard Class = "HARD"
	// Informational marks a probe that is recorded but never decides the certification.
	Informational Class = "INFO"
)

// Verdict is the outcome of one probe: the checker's verdict type, with pass, fail and error
// meaning what they mean for an invariant, plus [Info].
type Verdict = checker.Verdict

// The probe verdicts.
const (
	// Pass: the store behaved as the probe requires.
	Pass = checker.Pass
	// Fail: the store did something the probe rules out.
	Fail = checker.Fail
	// Info: the probe records an observation and requires nothing.
	Info Verdict = "info"
	// Error: the probe could not be judged (no answer, a harness problem).
	Error = checker.Error
)

// Overall is the verdict of a whole report.
type Overall string

// The report verdicts.
const (
	// Certified: every HARD probe passed.
	Certified Overall = "certified"
	// NotCertified: at least one HARD probe failed.
	NotCertified Overall = "not certified"
	// Inconclusive: no HARD probe failed, but at least one could not be judged.
	Inconclusive Overall = "inconclusive"
)

// Options configure a certification run.
type Options struct {
	// Store describes the certified store in the report (no credentials).
	Store store.Info
	// Clients are the store adapters to certify; nil means every adapter ([store.Clients]).
	// Every probe runs once per client.
	Clients []store.Client
	// Keys is how many fresh keys each race of B9 and B10 is repeated over (per racer count),
	// the number of CAS rounds per writer in B11 and the number of iterations of D17; 0 means
	// [DefaultKeys].
	Keys int
	// Racers are the racer counts of B9 and B10; nil means [DefaultRacers].
	Racers []int
	// RaceBudget bounds how long B9 and B10 start new keys for one racer count: past it the
	// races in flight finish and the probe is judged on the keys it raced (fewer than Keys
	// on a slow store, said in its details). 0 means [DefaultRaceBudget]; a negative value
	// means no bound but the probe's own deadline. Either way a racer count stops starting
	// keys once its share of the probe's remaining time is spent.
	RaceBudget time.Duration
	// Writers is the number of concurrent writers of the CAS chain (B11); 0 means 4.
	Writers int
	// Rounds is how many times every probe runs with every client, each round on fresh keys
	// under the same prefix; 0 means [DefaultRounds], at most [MaxRounds]. One failing round
	// fails the probe.
	Rounds int
	// Probes, when set, restricts the run to these probe IDs (e.g. "A1", "B9").
	Probes []string
	// Prefix is the key prefix the run confines itself to; it must end in "/" and hold no
	// object when the run starts. The run claims it (see [store.ClaimPrefix]).
	Prefix string
	// Cleanup deletes every object under Prefix when the run ends, except under a sub-prefix
	// another run claims, and the claim's marker last.
	Cleanup bool
	// Wrap, when set, wraps every store client the probes use (not the one that claims and
	// cleans the prefix, nor the plain aws-sdk-go-v2 client E19 and E20 send conditional
	// deletes with). It lets a caller certify a store adapter of its own, for instance one
	// that models a broken store.
	Wrap func(client store.Client, s store.Store) store.Store
	// ProbeTimeout bounds every probe run (one probe, one client, one round); 0 means
	// [DefaultProbeTimeout]. A probe that reaches it ends in error with the request it was
	// waiting for.
	ProbeTimeout time.Duration
	// Timeout bounds the whole run; 0 means [DefaultTimeoutPerRound] per round. When it
	// passes, the probe running ends in error and the probes left are not started, each
	// saying so.
	Timeout time.Duration
	// Logger receives debug records; nil discards them.
	Logger *slog.Logger
	// Progress, when set, is called after every probe with the result of its round.
	Progress func(Result)
}

// DefaultRaceBudget is the default of [Options.RaceBudget]: the pinned MinIO races 50 keys
// of 32 racers in a few seconds on two busy cores, a slow store a few keys.
const DefaultRaceBudget = 10 * time.Second

// DefaultKeys is the default of [Options.Keys].
const DefaultKeys = 50

// DefaultRacers is the default of [Options.Racers]: the racer counts of B9 and B10.
var DefaultRacers = []int{2, 8, 32}

// Result is the outcome of one probe with one store client.
type Result struct {
	// ID is the probe's ID ("A1", "B9", ...), Title its name and Class its class.
	ID    string `json:"id"`
	Title string `json:"title"`
	Class Class  `json:"class"`
	// Client is the store adapter the probe ran with ("minio-go" or "aws-sdk").
	Client string `json:"client"`
	// Asserts says what the probe checks (or records).
	Asserts string  `json:"asserts"`
	Verdict Verdict `json:"verdict"`
	// Cause, on an errored result, says in one line why it could not be judged: the request
	// (method, key) and the HTTP status and S3 code or the network error it met, and the
	// attempt it gave up after; or the deadline that passed and what the probe was doing.
	// ErrorClass sorts the cause: overloaded, unsupported-header, harness or not-run.
	Cause      string     `json:"cause,omitempty"`
	ErrorClass ErrorClass `json:"error_class,omitempty"`
	// Observed is what the store did, in one sentence.
	Observed string `json:"observed"`
	// Details are further observations, one per line: counters, the first counterexamples,
	// the answers of individual requests.
	Details []string `json:"details,omitempty"`
	// Facts are the probe's observations as stable key/value pairs, for machines (for
	// example A5's "answer": "404").
	Facts map[string]string `json:"facts,omitempty"`
	// Duration is how long the probe took, over all its rounds.
	Duration time.Duration `json:"duration"`
	// Witness, when the probe found a history that is not linearizable, is a minimal part of
	// it that no order explains, with the reason.
	Witness *checker.Witness `json:"witness,omitempty"`
	// Rounds is how many rounds the probe ran. Verdict is the worst verdict of any round;
	// Observed, Details and Facts are those of round Round (from 1): the first round with
	// that verdict, so a failed result shows the failing round's witness.
	Rounds int `json:"rounds"`
	Round  int `json:"round"`
	// Failed is how many rounds failed, and FailureRate is Failed / Rounds.
	Failed      int     `json:"failed"`
	FailureRate float64 `json:"failure_rate"`
	// Flipped is set when the verdict differed between rounds. Variation says so in one
	// sentence ("flipped: failed 2 of 5 rounds (rounds 2, 4), ..."), and for an INFO probe
	// also names the facts that differed between rounds; it is empty when every round agreed.
	Flipped   bool   `json:"flipped,omitempty"`
	Variation string `json:"variation,omitempty"`
	// PerRound is every round's verdict and observation, when there was more than one.
	PerRound []RoundResult `json:"per_round,omitempty"`
}

// Report is the outcome of a certification run.
type Report struct {
	// Store describes the store certified, without credentials.
	Store store.Info `json:"store"`
	// Prefix is the key prefix the run confined itself to.
	Prefix string `json:"prefix"`
	// Clients, Keys, Racers and Writers are the run's options after defaults.
	Clients []string `json:"clients"`
	Keys    int      `json:"keys"`
	Racers  []int    `json:"racers"`
	Writers int      `json:"writers"`
	Rounds  int      `json:"rounds"`
	// ProbeTimeout and Timeout are the run's bounds after defaults.
	ProbeTimeout time.Duration `json:"probe_timeout"`
	Timeout      time.Duration `json:"timeout"`
	// Started and Duration time the whole run.
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	// Command and Version describe the bench that produced the report; the caller fills them.
	Command string `json:"command,omitempty"`
	Version string `json:"version,omitempty"`
	// Cleanup says what became of the run's objects when Options.Cleanup was set.
	Cleanup string `json:"cleanup,omitempty"`
	// Verdict is the overall verdict, decided by the HARD probes alone.
	Verdict Overall `json:"verdict"`
	// Results holds one result per probe and client, in run order (client by client).
	Results []Result `json:"results"`
}

// HardFailures returns the HARD probes that failed.
func (r *Report) HardFailures() []Result {
	var out []Result
	for _, x := range r.Results {
		if x.Class == Hard && x.Verdict == Fail {
			out = append(out, x)
		}
	}
	return out
}

// ExitCode is the exit code of the report's verdict: pass when certified, fail when a HARD
// probe failed, harness error when one could not be judged.
func (r *Report) ExitCode() int {
	switch r.Verdict {
	case Certified:
		return outcome.ExitPass
	case NotCertified:
		return outcome.ExitFail
	default:
		return outcome.ExitHarness
	}
}

// Counts tallies the results by verdict.
func (r *Report) Counts() map[Verdict]int {
	m := map[Verdict]int{}
	for _, x := range r.Results {
		m[x.Verdict]++
	}
	return m
}

// judge sets the overall verdict from the results.
func (r *Report) judge() {
	r.Verdict = Certified
	for _, x := range r.Results {
		if x.Class != Hard {
			continue
		}
		switch x.Verdict {
		case Fail:
			r.Verdict = NotCertified
			return
		case Error:
			r.Verdict = Inconclusive
		}
	}
}

// Run certifies the store of env. It returns an error only when the run could not start (the
// store is unreachable, the prefix is not fresh, the options are invalid); everything the
// probes found is in the report.
func Run(ctx context.Context, e env.Env, opts Options) (*Report, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	probes, err := Select(opts.Probes)
	if err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	// The whole run's deadline counts from here; the cleanup below is bounded on its own.
	runCtx, cancelRun := context.WithTimeoutCause(ctx, opts.Timeout, &deadline{d: opts.Timeout, whole: true})
	defer cancelRun()
	cfg := e.Config()
	admin, err := s3store.New(store.ClientMinio, cfg)
	if err != nil {
		return nil, fmt.Errorf("certify: store client: %w", err)
	}
	claim, err := store.ClaimPrefix(runCtx, admin, opts.Prefix, store.NewOwner("certify"))
	if err != nil {
		return nil, fmt.Errorf("certify: refusing to run: %w", err)
	}
	rep := &Report{Store: opts.Store, Prefix: opts.Prefix, Keys: opts.Keys, Racers: opts.Racers,
		Writers: opts.Writers, Rounds: opts.Rounds, ProbeTimeout: opts.ProbeTimeout, Timeout: opts.Timeout, Started: time.Now()}
	for _, c := range opts.Clients {
		rep.Clients = append(rep.Clients, string(c))
	}
	b := &bench{env: e, cfg: cfg, opts: opts, log: log}
	rep.Results = b.rounds(runCtx, probes)
	if opts.Cleanup {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
		n, err := claim.Release(cctx)
		cancel()
		if err != nil {
			rep.Cleanup = fmt.Sprintf("failed after deleting %d objects: %v", n, err)
			log.Error("cleanup of the certification prefix failed", "prefix", opts.Prefix, "deleted", n, "err", err)
		} else {
			rep.Cleanup = fmt.Sprintf("deleted the %d objects under the prefix", n)
			log.Info("cleaned up the certification prefix", "prefix", opts.Prefix, "deleted", n)
		}
	}
	rep.Duration = time.Since(rep.Started)
	rep.judge()
	return rep, nil
}

func (o *Options) normalize() error {
	if o.Clients == nil {
		o.Clients = slices.Clone(store.Clients)
	}
	if len(o.Clients) == 0 {
		return errors.New("certify: no store client")
	}
	for _, c := range o.Clients {
		if !slices.Contains(store.Clients, c) {
			return fmt.Errorf("certify: unknown store client %q (want minio-go or aws-sdk)", c)
		}
	}
	if o.Keys == 0 {
		o.Keys = DefaultKeys
	}
	if o.RaceBudget == 0 {
		o.RaceBudget = DefaultRaceBudget
	}
	if o.Keys < 1 {
		return fmt.Errorf("certify: keys %d: want at least 1", o.Keys)
	}
	if o.Racers == nil {
		o.Racers = slices.Clone(DefaultRacers)
	}
	for _, n := range o.Racers {
		if n < 2 {
			return fmt.Errorf("certify: a race needs at least 2 racers, got %d", n)
		}
	}
	if o.Writers == 0 {
		o.Writers = 4
	}
	if o.Writers < 2 {
		return fmt.Errorf("certify: the CAS chain needs at least 2 writers, got %d", o.Writers)
	}
	if o.Rounds == 0 {
		o.Rounds = DefaultRounds
	}
	if o.Rounds < 1 || o.Rounds > MaxRounds {
		return fmt.Errorf("certify: rounds %d: want 1 to %d", o.Rounds, MaxRounds)
	}
	if o.ProbeTimeout == 0 {
		o.ProbeTimeout = DefaultProbeTimeout
	}
	if o.Timeout == 0 {
		o.Timeout = DefaultTimeoutPerRound * time.Duration(o.Rounds)
	}
	if o.ProbeTimeout < 0 || o.Timeout < 0 {
		return fmt.Errorf("certify: probe timeout %v, timeout %v: want positive durations", o.ProbeTimeout, o.Timeout)
	}
	if err := store.ValidatePrefix(o.Prefix); err != nil {
		return fmt.Errorf("certify: %w", err)
	}
	return nil
}

// bench is what every probe of a run shares.
type bench struct {
	env  env.Env
	cfg  store.Config
	opts Options
	log  *slog.Logger
}

// rounds runs every probe with every client, round after round, and folds each probe's
// rounds into one result per probe and client (client by client, in probe order). ctx
// carries the whole run's deadline: once it has passed, the probes left are not started.
func (b *bench) rounds(ctx context.Context, probes []Probe) []Result {
	per := make([][]Result, len(b.opts.Clients)*len(probes))
	total, done := b.opts.Rounds*len(per), 0
	for round := 1; round <= b.opts.Rounds; round++ {
		for ci, c := range b.opts.Clients {
			for pi, p := range probes {
				res := b.next(ctx, p, c, round, done, total)
				done++
				res.Round, res.Rounds = round, b.opts.Rounds
				if res.Verdict == Fail {
					res.Failed, res.FailureRate = 1, 1
				}
				b.log.Debug("probe done", "probe", p.ID, "client", c, "round", round, "verdict", res.Verdict, "took", res.Duration,
					"cause", res.Cause)
				i := ci*len(probes) + pi
				per[i] = append(per[i], res)
				if b.opts.Progress != nil {
					b.opts.Progress(res)
				}
			}
		}
	}
	out := make([]Result, len(per))
	for i, rs := range per {
		out[i] = aggregate(rs)
	}
	return out
}

// next runs one probe, or says why it was not started: the whole run's deadline passed, the
// run was interrupted, or the store stopped answering.
func (b *bench) next(ctx context.Context, p Probe, c store.Client, round, done, total int) Result {
	notRun := func(class ErrorClass, why string) Result {
		res := p.result(c)
		res.Verdict, res.Observed, res.Cause, res.ErrorClass = Error, "not run: "+why, "not run: "+why, class
		return res
	}
	if ctx.Err() != nil {
		if d := deadlineOf(ctx); d != nil {
			return notRun(NotRun, fmt.Sprintf("the whole-run deadline %v passed after %d of %d probe runs (raise --timeout)", d.d, done, total))
		}
		return notRun(Harness, "interrupted ("+context.Cause(ctx).Error()+")")
	}
	if ok, why, class := b.alive(ctx); !ok {
		return notRun(class, why)
	}
	return b.run(ctx, p, c, round)
}

// alive reports whether the store is up. A store that stopped answering (a remote one under
// load, as opposed to a local process that died) is given a while to answer again, so one
// slow probe does not make the next ones error without trying.
func (b *bench) alive(ctx context.Context) (bool, string, ErrorClass) {
	if b.env.Alive() {
		return true, "", ""
	}
	p, ok := b.env.(interface{ Probe(context.Context) error })
	if !ok {
		return false, "the store died", Harness
	}
	wait := min(b.opts.ProbeTimeout, liveWait)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	var err error
	for {
		if err = p.Probe(wctx); err == nil {
			return true, "", ""
		}
		select {
		case <-wctx.Done():
			if d := deadlineOf(ctx); d != nil {
				return false, fmt.Sprintf("the whole-run deadline %v passed while waiting for the store to answer again: %v", d.d,
					redactURL(err.Error())), NotRun
			}
			return false, fmt.Sprintf("the store answered no liveness probe for %v: %v", wait, redactURL(err.Error())), Overloaded
		case <-time.After(time.Second):
		}
	}
}

// run executes one probe with one client in one round, bounded by the probe's deadline, and
// turns whatever happened into a Result. Every round works under keys of its own: the first
// under <prefix><client>/<probe>/, a later one under <prefix>round-<n>/<client>/<probe>/.
func (b *bench) run(ctx context.Context, p Probe, c store.Client, round int) (res Result) {
	base := fmt.Sprintf("%s%s/%s/", b.opts.Prefix, c, p.ID)
	if round > 1 {
		base = fmt.Sprintf("%sround-%d/%s/%s/", b.opts.Prefix, round, c, p.ID)
	}
	pctx, cancel := context.WithTimeoutCause(ctx, b.opts.ProbeTimeout, &deadline{d: b.opts.ProbeTimeout})
	defer cancel()
	t := &trial{bench: b, ctx: pctx, client: c, base: base, facts: map[string]string{}, tr: newTracker(base)}
	start := time.Now()
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			if r := recover(); r != nil {
				t.errorf("the probe panicked: %v\n%s", r, debug.Stack())
			}
		}()
		var err error
		if t.s, err = t.newStore(store.Config{}); err != nil {
			t.errorf("store client: %v", err)
			return
		}
		if t.peer, err = t.newStore(store.Config{}); err != nil {
			t.errorf("store client: %v", err)
			return
		}
		p.run(pctx, t)
	}()
	abandoned := false
	select {
	case <-done:
	case <-pctx.Done():
		select {
		case <-done:
		case <-time.After(abandonGrace):
			abandoned = true
		}
	}
	t.closeIdle()
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	res = p.result(c)
	res.Duration = time.Since(start)
	if pctx.Err() != nil {
		what := t.tr.doing(time.Now())
		var why string
		if d := deadlineOf(pctx); d != nil {
			why = fmt.Sprintf("%v after %s", d, what)
			t.class = Overloaded
		} else {
			why = fmt.Sprintf("interrupted (%v) after %s", context.Cause(pctx), what)
			t.class = Harness
		}
		if abandoned {
			why += fmt.Sprintf("; the probe did not return within %v of it and was abandoned", abandonGrace)
		}
		t.cause = why
		if !t.failed {
			t.errored = true
		}
		t.problems = append([]string{why}, t.problems...)
		t.details = append([]string{"ERROR: " + why}, t.details...)
	}
	res.Verdict, res.Observed, res.Details, res.Witness = t.verdict(), t.observed, t.details, t.witness
	if len(t.facts) > 0 {
		res.Facts = maps.Clone(t.facts)
	}
	if res.Verdict == Error {
		res.Cause, res.ErrorClass = t.cause, t.class
		if res.Cause == "" && len(t.problems) > 0 {
			res.Cause, res.ErrorClass = oneLine(t.problems[0]), Harness
		}
		if res.Cause == "" {
			res.Cause, res.ErrorClass = "the probe recorded an error without a message (a bench bug)", Harness
		}
		if pctx.Err() != nil || res.Observed == "" {
			res.Observed = res.Cause
		}
	}
	if res.Observed == "" && len(t.problems) > 0 {
		res.Observed = t.problems[0]
	}
	return res
}
