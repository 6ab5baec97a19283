package main

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/system"
)

// exploreFlags are the flags of `fencebench explore` besides the stack's.
type exploreFlags struct {
	schedules         int
	dur               time.Duration
	seed              uint64
	variant, client   string
	out, runID        string
	confirm           string
	jobs, replays, sh int
	first, verbose    bool
	guided            bool
	shard             string
	sys               string
	answerTimeout     time.Duration
	shrinkRuns        int
}

func (x *exploreFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&x.schedules, "schedules", 0, "how many generated schedules to run (with --for: whichever ends first)")
	fs.DurationVar(&x.dur, "for", 0, "how long to explore, e.g. 10m")
	fs.Uint64Var(&x.seed, "seed", 0, "the first schedule's seed; schedule i uses seed+i (0: drawn and printed)")
	fs.StringVar(&x.variant, "variant", "", "explore this broken protocol variant (default: the correct protocol)")
	fs.StringVar(&x.client, "client", "", "store client on network stacks: minio-go or aws-sdk")
	fs.StringVar(&x.out, "out", "results", "results folder: the exploration writes <out>/<run-id>/explore.html")
	fs.StringVar(&x.runID, "run-id", "", "name of the exploration's folder (default: explore- and the start time)")
	fs.StringVar(&x.confirm, "confirm", "local", "the stack a shrunk failure is re-run on: local, containers, external or none")
	fs.IntVar(&x.jobs, "jobs", 0, "schedules run at once (default: 8 per CPU on sim, 1 elsewhere)")
	fs.IntVar(&x.replays, "replays", 20, "replays of each shrunk failure on the exploring stack")
	fs.IntVar(&x.sh, "shrink", 3, "distinct failures (by violated invariants) to shrink and confirm (0: none)")
	fs.BoolVar(&x.first, "first", false, "stop at the first failing schedule (with --shrink: the first whose shrunk scenario replays on every replay)")
	fs.BoolVar(&x.guided, "guided", true, "coverage-guided: about half the schedules mutate earlier ones that reached new coverage\n"+
		"(protocol phase x fault x writer role, orderings of protocol events) instead of drawing afresh;\n"+
		"--guided=false draws every schedule from its seed (the default with --shard, whose shards\n"+
		"then add up to one exploration)")
	fs.BoolVar(&x.verbose, "v", false, "debug logs")
	fs.StringVar(&x.sys, "system", "", "explore this command's nodes instead of the simulated copies (as run --system does; default\n"+
		"stack local, --confirm none): schedules are drawn from the steps its capabilities allow")
	fs.DurationVar(&x.answerTimeout, "answer-timeout", 15*time.Second, "with --system: how long a running node may take to answer a request")
	fs.IntVar(&x.shrinkRuns, "shrink-runs", 0, "runs one shrink may spend (default 400, 60 with --system)")
	fs.StringVar(&x.shard, "shard", "", "K/N, K from 0: run only schedules i with i mod N = K (N machines with the same --seed and\n--schedules explore exactly what one would)")
}

func exploreCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	red := newRedactor(args)
	stdout, stderr = red.writer(stdout), red.writer(stderr)
	defer recoverHarness("explore", stderr, &code)
	fs := flag.NewFlagSet("explore", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var x exploreFlags
	x.register(fs)
	var sf stackFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fencebench explore [flags]\n\nGenerates fault schedules, runs and judges each, shrinks the failures to scenarios and re-runs\nthem on --confirm. Default stack: sim. Flags may stand anywhere.\n\nflags:")
		fs.PrintDefaults()
	}
	rest, err := parseAnywhere(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return outcome.ExitPass
		}
		return outcome.ExitBadInput
	}
	if msg := x.check(rest, fs); msg != "" {
		fmt.Fprintf(stderr, "fencebench explore: %s\n", msg)
		return outcome.ExitBadInput
	}
	if !flagSet(fs, "stack") {
		sf.Stack = "sim"
		if x.sys != "" {
			sf.Stack = "local" // a system's nodes need a store they can reach
		}
	}
	if x.sys != "" && !flagSet(fs, "confirm") {
		x.confirm = "none" // explored on a real store already
	}
	if x.shard != "" && !flagSet(fs, "guided") {
		x.guided = false // a guided shard depends on what it reached: shards would not add up
	}
	if x.seed == 0 {
		x.seed = runner.DrawSeed()
	}
	if x.runID == "" {
		x.runID = "explore-" + runner.NewRunID(time.Now())
	}
	tty := isTerminal(stderr)
	logger := runLogger(stderr, tty, x.verbose)
	dir := filepath.Join(x.out, x.runID)
	ctx, sink, st, code := sf.openIn(ctx, "explore", x.runID, dir, logger, red, stderr)
	if st == nil {
		return code
	}
	defer func() { beforeCleanup(); st.Stop() }()
	o := x.options(st, sf, logger, red, "fencebench explore "+strings.Join(redactArgs(args), " "))
	if tty {
		o.Progress = exploreBar(stderr)
	}
	what := cmp.Or(o.Variant, "the correct protocol")
	if x.sys != "" {
		what = "system " + x.sys
	}
	fmt.Fprintf(stderr, "exploring %s on %s from seed %d\n", what, st.Env.Info().Stack, x.seed)
	res, err := runner.Explore(ctx, o)
	if err != nil {
		fmt.Fprintf(stderr, "fencebench explore: %v\n", err)
		if errors.Is(err, outcome.ErrBadInput) {
			return outcome.ExitBadInput
		}
		return outcome.ExitHarness
	}
	if n, err := red.scrubFiles(dir, ""); err != nil || n > 0 {
		fmt.Fprintf(stderr, "fencebench explore: removed %d credential occurrences from the results (a bug: please report it); scan error: %v\n", n, err)
	}
	printExploration(stdout, res, dir)
	return endCode(ctx, "explore", sink, stderr, exploreExit(res))
}

func (x *exploreFlags) check(rest []string, fs *flag.FlagSet) string {
	switch {
	case len(rest) > 0:
		return fmt.Sprintf("unexpected arguments %q: explore generates its own schedules", rest)
	case x.schedules < 0 || x.dur < 0:
		return "--schedules and --for must not be negative"
	case x.schedules == 0 && x.dur == 0:
		return "give a budget: --schedules N, --for DURATION, or both"
	case x.sys != "" && x.variant != "":
		return "--variant chooses the bench's own protocol; a system's variant is its command's business"
	case x.shrinkRuns < 0:
		return "--shrink-runs must not be negative"
	case x.confirm != "local" && x.confirm != "containers" && x.confirm != "external" && x.confirm != "none":
		return fmt.Sprintf("--confirm %q: want local, containers, external or none", x.confirm)
	}
	if x.shard != "" {
		if _, err := runner.ParseShard(x.shard); err != nil {
			return err.Error()
		}
	}
	if x.sys != "" {
		if words, err := splitWords(x.sys); err != nil || len(words) == 0 {
			return fmt.Sprintf("--system %q: %v", x.sys, cmp.Or(err, errors.New("no command")))
		}
	}
	return checkRunFlags(x.client, x.variant, false)
}

func flagSet(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

func (x *exploreFlags) options(st *env.Opened, sf stackFlags, log *slog.Logger, red *redactor, command string) runner.ExploreOptions {
	var shard *runner.ShardSpec
	if x.shard != "" {
		s, _ := runner.ParseShard(x.shard)
		shard = &s
	}
	o := runner.ExploreOptions{Out: x.out, ID: x.runID, Env: st.Env, Prefix: st.Prefix, Variant: x.variant,
		Client: x.client, Seed: x.seed, Schedules: x.schedules, For: x.dur, Jobs: x.jobs, Replays: x.replays,
		Shard: shard, Shrink: shrinkCount(x.sh), StopAtFirst: x.first, Guided: x.guided, Command: command, Logger: log,
		ShrinkRuns: x.shrinkRuns}
	if x.sys != "" {
		words, _ := splitWords(x.sys) // checked by check
		o.System = &runner.SystemOptions{Launcher: system.Command(system.ProcOptions{Command: words, AnswerTimeout: x.answerTimeout})}
	}
	if x.confirm != "none" {
		o.ConfirmStack = x.confirm
		co := sf.Options
		co.Stack, co.Prefix, co.Secret, co.Hold = x.confirm, "", red.add, held.hold
		dir := filepath.Join(x.out, x.runID)
		o.Confirm = func(ctx context.Context) (env.Env, func(), error) {
			op, err := env.Open(ctx, co, x.runID+"-confirm", dir, log)
			if err != nil {
				return nil, nil, err
			}
			return op.Env, op.Stop, nil
		}
	}
	return o
}

// exploreExit is the exploration's exit code: 1 when a schedule violated an invariant, 255
// when schedules hit harness errors and none failed, 0 otherwise.
func exploreExit(x *outcome.Exploration) int {
	switch {
	case x.Failed > 0:
		return outcome.ExitFail
	case x.Errors > 0:
		return outcome.ExitHarness
	case x.Schedules == 0:
		return outcome.ExitInconclusive
	}
	return outcome.ExitPass
}

func printExploration(w io.Writer, x *outcome.Exploration, dir string) {
	fmt.Fprintf(w, "\n%d schedules of %s on %s in %v (%.0f/s): %d pass, %d fail, %d inconclusive, %d error; stopped: %s\n",
		x.Schedules, x.Variant, x.Stack, x.Duration.Round(time.Millisecond), x.Rate, x.Passed, x.Failed, x.Inconclusive, x.Errors, x.Stopped)
	if x.Resumed > 0 {
		fmt.Fprintf(w, "went on %d time(s) past a failure whose shrunk scenario did not replay every time\n", x.Resumed)
	}
	never, unfaulted := x.Coverage.Unreached()
	if len(never) > 0 {
		fmt.Fprintf(w, "phases never reached: %s\n", strings.Join(never, ", "))
	}
	if len(unfaulted) > 0 {
		fmt.Fprintf(w, "phases no fault met: %s\n", strings.Join(unfaulted, ", "))
	}
	for _, f := range x.Failures {
		fmt.Fprintf(w, "FAIL %s (schedule %d, seed %d): %d steps -> %d, replayed %d/%d, %s\n  %s\n",
			strings.Join(f.Invariants, "+"), f.Index, f.Seed, f.Steps, f.ShrunkSteps, f.ReplayHits, f.Replays, f.Confirmed, f.Rerun)
	}
	fmt.Fprintf(w, "report: %s\n", filepath.Join(dir, "explore.html"))
}

// exploreBar draws the exploration's progress on a terminal.
func exploreBar(w io.Writer) func(done, total, failed int) {
	var mu sync.Mutex
	return func(done, total, failed int) {
		mu.Lock()
		defer mu.Unlock()
		if total > 0 {
			const width = 30
			filled := min(done*width/total, width)
			fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d schedules, %d failed", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total, failed)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		fmt.Fprintf(w, "\r\033[K%d schedules, %d failed", done, failed)
	}
}

// shrinkCount maps --shrink to ExploreOptions.Shrink, where 0 means the default.
func shrinkCount(n int) int {
	if n <= 0 {
		return -1
	}
	return n
}
