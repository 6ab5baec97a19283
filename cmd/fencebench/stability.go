package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"path"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/fencebench/fencebench/internal/hog"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/scenarios"
)

// stabilityCmd runs the catalogue (or the named scenarios) with the kill matrix several
// rounds per client, optionally beside a CPU hog, and writes <out>/<run-id>/stability.html:
// per cell, how often its verdict differed from the expected one.
func stabilityCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	red := newRedactor(args)
	stdout, stderr = red.writer(stdout), red.writer(stderr)
	defer recoverHarness("stability", stderr, &code)
	f, names, code, ok := parseStability(args, stderr)
	if !ok {
		return code
	}
	rounds, burn, seed, out, runID, jobs, sf, verbose := f.rounds, f.hog, f.seed, f.out, f.runID, f.jobs, f.stack, f.verbose
	cl := f.clients
	scs, err := scenarios.Resolve(names, loadOptions())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return outcome.ExitBadInput
	}
	if *runID == "" {
		*runID = "stability-" + runner.NewRunID(time.Now())
	}
	logger := runLogger(stderr, !*verbose, *verbose) // the rounds print their own progress
	dir := filepath.Join(*out, *runID)
	ctx, sink, st, code := sf.openIn(ctx, "stability", *runID, dir, logger, red, stderr)
	if st == nil {
		return code
	}
	defer func() { beforeCleanup(); st.Stop() }()
	var h *hog.Hog
	if *burn {
		if h, err = hog.Start(runtime.NumCPU()); err != nil {
			fmt.Fprintf(stderr, "fencebench stability: %v\n", err)
			return outcome.ExitHarness
		}
		defer h.Stop()
	}
	rep := reports.Stability{Rounds: *rounds, Clients: cl, Hog: h.N(),
		Command: "fencebench stability " + strings.Join(redactArgs(args), " ")}
	start := time.Now()
	for r := 1; r <= *rounds && ctx.Err() == nil; r++ {
		s := *seed + uint64(r-1)
		if *seed == 0 {
			s = rand.Uint64N(1<<53) + 1
		}
		for _, c := range cl {
			id := fmt.Sprintf("r%02d-%s", r, c)
			fmt.Fprintf(stderr, "round %d/%d, %s, seed %d\n", r, *rounds, c, s)
			sum, err := runner.Run(ctx, scs, runner.Options{Out: dir, RunID: id, Seed: s, Client: c, Matrix: true, Jobs: *jobs,
				Logger: logger, Command: rep.Command, BenchVersion: version, Env: st.Env,
				Prefix: path.Join(st.Prefix, id) + "/", Cleanup: st.Cleanup})
			rep.AddRun(r, c, id, s, sum, err)
			if err == nil {
				fmt.Fprintf(stdout, "round %d %-8s %s\n", r, c, countsLine(sum))
			}
			// The page so far, so that a long stability run can be read while it goes on.
			rep.Duration = time.Since(start).Round(time.Second)
			if err := reports.WriteStability(dir, rep); err != nil {
				fmt.Fprintf(stderr, "fencebench stability: %v\n", err)
			}
		}
	}
	rep.Duration = time.Since(start).Round(time.Second)
	if err := reports.WriteStability(dir, rep); err != nil {
		fmt.Fprintf(stderr, "fencebench stability: %v\n", err)
		return outcome.ExitHarness
	}
	if n, err := red.scrubFiles(dir); err != nil || n > 0 {
		fmt.Fprintf(stderr, "fencebench stability: removed %d credential occurrences from the results (a bug: please report it); scan error: %v\n", n, err)
	}
	printStability(stdout, rep, dir)
	return endCode(ctx, "stability", sink, stderr, rep.ExitCode())
}

// stabilityFlags are the stability command's flags once parsed.
type stabilityFlags struct {
	rounds, jobs *int
	hog          *bool
	seed         *uint64
	out, runID   *string
	verbose      *bool
	clients      []string
	stack        *stackFlags
}

// parseStability parses the stability command line; on failure it returns the exit code.
func parseStability(args []string, stderr io.Writer) (*stabilityFlags, []string, int, bool) {
	fs := flag.NewFlagSet("stability", flag.ContinueOnError)
	fs.SetOutput(stderr)
	f := &stabilityFlags{stack: &stackFlags{}}
	f.rounds = fs.Int("rounds", 10, "how many times each client runs the plan (1..100)")
	clients := fs.String("clients", "minio-go,aws-sdk", "store clients, comma-separated: minio-go, aws-sdk")
	f.hog = fs.Bool("hog", false, "keep every core busy beside the bench (one CPU-burning process per core)")
	f.seed = fs.Uint64("seed", 0, "seed of round 1 (round r uses seed+r-1; 0: drawn per round and printed)")
	f.out = fs.String("out", "results", "results folder: the stability run writes <out>/<run-id>/, one run folder per round and client inside")
	f.runID = fs.String("run-id", "", "name of the stability run's folder (default: stability-<start time>-<random>)")
	f.jobs = fs.Int("jobs", 2, "cells run side by side in each round, as for run")
	f.verbose = fs.Bool("v", false, "debug logs")
	f.stack.register(fs)
	names, err := parseAnywhere(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil, nil, outcome.ExitPass, false
		}
		return nil, nil, outcome.ExitBadInput, false
	}
	cl, msg := stabilityClients(*clients)
	if msg == "" && (*f.rounds < 1 || *f.rounds > 100) {
		msg = fmt.Sprintf("--rounds %d: want 1..100", *f.rounds)
	}
	if msg == "" && (*f.jobs < 1 || *f.jobs > 64) {
		msg = fmt.Sprintf("--jobs %d: want 1..64", *f.jobs)
	}
	if msg != "" {
		fmt.Fprintf(stderr, "fencebench stability: %s\n", msg)
		return nil, nil, outcome.ExitBadInput, false
	}
	f.clients = cl
	return f, names, 0, true
}

func stabilityClients(s string) ([]string, string) {
	var out []string
	for _, c := range strings.Split(s, ",") {
		c = strings.TrimSpace(c)
		if msg := checkRunFlags(c, "", false); msg != "" || c == "" {
			return nil, fmt.Sprintf("--clients %q: want minio-go and/or aws-sdk, comma-separated", s)
		}
		out = append(out, c)
	}
	return out, ""
}

func countsLine(sum *outcome.Summary) string {
	c := sum.Counts()
	return fmt.Sprintf("%d cells: %d pass, %d fail, %d inconclusive, %d error", len(sum.Cells), c["pass"], c["fail"], c["inconclusive"], c["error"])
}

// printStability prints the cells whose verdict ever differed from the expected one.
func printStability(w io.Writer, s reports.Stability, dir string) {
	fmt.Fprintf(w, "\n%-50s %-9s %-10s %s\n", "CELL", "CLIENT", "UNEXPECTED", "VERDICTS")
	flipping := 0
	for _, c := range s.Cells {
		if c.Unexpected == 0 {
			continue
		}
		flipping++
		var marks []string
		for _, v := range c.Verdicts {
			marks = append(marks, v.Label)
		}
		fmt.Fprintf(w, "%-50s %-9s %d/%-8d %s\n", c.ID, c.Client, c.Unexpected, c.Runs, strings.Join(marks, " "))
	}
	fmt.Fprintf(w, "\n%d cells x %d rounds x %d clients: %d unexpected verdicts in %d cells, hog %d, in %v\nreport: %s\n",
		len(s.Cells)/max(len(s.Clients), 1), s.Rounds, len(s.Clients), s.Unexpected, flipping, s.Hog, s.Duration,
		filepath.Join(dir, "stability.html"))
}
