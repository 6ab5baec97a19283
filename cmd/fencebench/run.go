package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/scenarios"
)

// version is the bench version recorded in results.
var version = "dev"

func runCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	// Credentials never reach the output: the run does not print them, and whatever it
	// prints passes a redactor that knows them anyway, a secret on the command line from the
	// start (before a flag error could echo it).
	red := newRedactor(args)
	stdout, stderr = red.writer(stdout), red.writer(stderr)
	defer recoverHarness("run", stderr, &code)
	fs, f := runFlagSet(stderr)
	seed, out, variant, client, matrix, runID, verbose, storesFile, sf := f.seed, f.out, f.variant, f.client, f.matrix, f.runID, f.verbose, f.stores, f.stack
	names, err := parseAnywhere(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return outcome.ExitPass
		}
		return outcome.ExitBadInput
	}
	if *f.jobs < 1 || *f.jobs > 64 {
		fmt.Fprintf(stderr, "fencebench run: --jobs %d: want 1..64\n", *f.jobs)
		return outcome.ExitBadInput
	}
	if msg := checkRunFlags(*client, *variant, *matrix); msg != "" {
		fmt.Fprintf(stderr, "fencebench run: %s\n", msg)
		return outcome.ExitBadInput
	}
	var shard *runner.ShardSpec
	if *f.shard != "" {
		spec, err := runner.ParseShard(*f.shard)
		if err != nil {
			fmt.Fprintf(stderr, "fencebench run: %v\n", err)
			return outcome.ExitBadInput
		}
		shard = &spec
	}
	scs, err := scenarios.Resolve(names, loadOptions())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return outcome.ExitBadInput
	}
	tty := isTerminal(stderr)
	logger := runLogger(stderr, tty, *verbose)
	if *runID == "" {
		*runID = runner.NewRunID(time.Now())
	}
	if *storesFile != "" && *f.system.cmd != "" {
		fmt.Fprintln(stderr, "fencebench run: --system runs on one store; --stores is not supported with it")
		return outcome.ExitBadInput
	}
	if *storesFile != "" {
		s, code := newStoresRun(fs, "run", *storesFile, *out, *runID, sf.Keep, red, stdout, stderr, logger)
		if s == nil {
			return code
		}
		return runStores(ctx, s, scs, runner.Options{Seed: *seed, Variant: fence.Variant(*variant), Client: *client, Matrix: *matrix, Jobs: *f.jobs, Shard: shard, Logger: logger,
			Command: "fencebench run " + strings.Join(redactArgs(args), " "), BenchVersion: version})
	}
	dir := filepath.Join(*out, *runID)
	ctx, sink, st, code := sf.openIn(ctx, "run", *runID, dir, logger, red, stderr)
	if st == nil {
		return code
	}
	defer func() { beforeCleanup(); st.Stop() }()
	opts := runner.Options{Out: *out, RunID: *runID, Seed: *seed, Variant: fence.Variant(*variant), Client: *client,
		Matrix: *matrix, Jobs: *f.jobs, Shard: shard, Logger: logger, Command: "fencebench run " + strings.Join(redactArgs(args), " "), BenchVersion: version,
		Env: st.Env, Prefix: st.Prefix, Cleanup: st.Cleanup}
	if tty {
		opts.Progress = progressBar(stderr)
	}
	sum, err := f.system.run(ctx, scs, opts)
	if err != nil {
		fmt.Fprintf(stderr, "fencebench run: %v\n", err)
		if errors.Is(err, outcome.ErrBadInput) {
			return outcome.ExitBadInput
		}
		return outcome.ExitHarness
	}
	if n, err := red.scrubFiles(sum.Dir, filepath.Join(*out, trendPage)); err != nil || n > 0 {
		fmt.Fprintf(stderr, "fencebench run: removed %d credential occurrences from the results (a bug: please report it); scan error: %v\n", n, err)
	}
	printSummary(stdout, sum)
	return endCode(ctx, "run", sink, stderr, sum.ExitCode())
}

// runFlags are the run command's flags once registered.
type runFlags struct {
	seed                                       *uint64
	out, variant, client, runID, stores, shard *string
	matrix, verbose                            *bool
	jobs                                       *int
	stack                                      *stackFlags
	system                                     *systemFlags
}

// runFlagSet builds the run command's flag set, the one its command line is parsed with.
func runFlagSet(stderr io.Writer) (*flag.FlagSet, *runFlags) {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &runFlags{stack: &stackFlags{}}
	f.seed = fs.Uint64("seed", 0, "seed for every scenario (0: the scenario's own, else drawn and printed)")
	f.out = fs.String("out", "results", "results folder: the run writes <out>/<run-id>/ (a new folder) and <out>/index.html")
	f.variant = fs.String("variant", "", "run every scenario with this protocol variant")
	f.client = fs.String("client", "", "store client: minio-go or aws-sdk (default: the scenario's, else minio-go)")
	f.matrix = fs.Bool("matrix", false, "also run every variant each scenario declares it kills")
	f.jobs = fs.Int("jobs", 2, "cells run side by side (each with its own prefix and fault paths; a scenario acting on\nthe store itself runs alone); 1 runs them one at a time")
	f.runID = fs.String("run-id", "", "name of the run's folder, one component of A-Z a-z 0-9 . _ -\n(default: the start time and a random suffix)")
	f.verbose = fs.Bool("v", false, "debug logs")
	f.stores = fs.String("stores", "", storesUsage)
	f.shard = fs.String("shard", "", "run only shard `K/N` of the plan (0 <= K < N): cell i of the whole plan belongs to\nshard i mod N; `fencebench merge` joins the N shard runs into one")
	f.stack.register(fs)
	f.system = registerSystemFlags(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fencebench run [flags] [files | dirs | scenario names]\n\nWith no arguments, runs the shipped catalogue. Flags may stand anywhere.\n\nflags:")
		fs.PrintDefaults()
	}
	return fs, f
}

// checkRunFlags returns what is wrong with the run's protocol flags, "" when nothing.
func checkRunFlags(client, variant string, matrix bool) string {
	if client != "" && client != "minio-go" && client != "aws-sdk" {
		return fmt.Sprintf("--client %q: want minio-go or aws-sdk", client)
	}
	if variant == "" {
		return ""
	}
	if _, err := fence.LookupVariant(variant); err != nil {
		return "--variant: " + err.Error()
	}
	if matrix {
		return "--variant and --matrix exclude each other"
	}
	return ""
}

func runLogger(stderr io.Writer, tty, verbose bool) *slog.Logger {
	if tty && !verbose {
		return slog.New(slog.DiscardHandler)
	}
	level := slog.LevelInfo
	if verbose {
		level = slog.LevelDebug
	}
	return slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))
}

func printSummary(w io.Writer, sum *outcome.Summary) {
	width := len("CELL")
	for _, c := range sum.Cells {
		width = max(width, len(c.ID))
	}
	fmt.Fprintf(w, "\n%-*s %-12s %-20s %6s %s\n", width, "CELL", "VERDICT", "SEED", "ACKED", "WHY")
	for _, c := range sum.Cells {
		why := ""
		if len(c.Result.Reasons) > 0 {
			why = c.Result.Reasons[0]
		}
		if c.Error != "" {
			why = firstLine(c.Error)
		}
		verdict := string(c.Verdict)
		if c.Kill {
			switch c.Verdict {
			case checker.Pass:
				verdict = "killed"
			case checker.Fail:
				verdict = "SURVIVED"
			}
		}
		fmt.Fprintf(w, "%-*s %-12s %-20d %6d %s\n", width, c.ID, verdict, c.Seed, c.Result.Acked, why)
	}
	for _, n := range sum.NotApplicable {
		fmt.Fprintf(w, "not run here: %s\n", n)
	}
	counts := sum.Counts()
	fmt.Fprintf(w, "\n%d cells: %d pass, %d fail, %d inconclusive, %d error in %v\n", len(sum.Cells),
		counts[checker.Pass], counts[checker.Fail], counts[checker.Inconclusive], counts[checker.Error], sum.Duration.Round(1e6))
	for _, c := range sum.Cells {
		if c.Verdict != checker.Pass {
			fmt.Fprintf(w, "  rerun %s: %s\n", c.ID, c.Rerun)
		}
	}
	if _, err := os.Stat(filepath.Join(sum.Dir, "index.html")); err == nil {
		fmt.Fprintf(w, "report: %s\n", filepath.Join(sum.Dir, "index.html"))
	} else {
		fmt.Fprintf(w, "results: %s\n", sum.Dir)
	}
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

func progressBar(w io.Writer) func(done, total int, cell string, v checker.Verdict) {
	return func(done, total int, cell string, v checker.Verdict) {
		const width = 30
		filled := 0
		if total > 0 {
			filled = done * width / total
		}
		state := "running " + cell
		if v != "" {
			state = fmt.Sprintf("%s %s", cell, v)
		}
		fmt.Fprintf(w, "\r\033[K[%s%s] %d/%d %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), done, total, state)
		if done == total {
			fmt.Fprintln(w)
		}
	}
}
