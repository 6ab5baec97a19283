package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/fencebench/fencebench/certify"
	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/scenarios"
)

// storesUsage is the usage of the --stores flag of certify and run.
const storesUsage = "YAML `file` of external stores to put through the same command one after another (name, server,\n" +
	"endpoint, bucket, region, addressing, ca_file, create_bucket, and access_key_env / secret_key_env naming the environment\n" +
	"variables that hold the credentials); each store's report goes to <out>/<run-id>/<name>/, and\n" +
	"<out>/<run-id>/compare.html and compare.json compare them; the exit code is the worst of the stores"

// stackOnlyFlags describe one store; a stores file describes each store instead.
var stackOnlyFlags = []string{"stack", "prefix", "minio-image", "endpoint", "region", "bucket", "profile", "access-key",
	"secret-key", "ca-file", "addressing", "create-bucket"}

// storesRun is a command run over every store of a stores file.
type storesRun struct {
	cmd, out, runID string
	keep            bool
	specs           []env.StoreSpec
	red             *redactor
	stdout, stderr  io.Writer
	log             *slog.Logger
	cmp             reports.Comparison
}

// newStoresRun loads the stores file and checks that no flag describes a single store; on
// failure it prints why and returns nil and the exit code.
func newStoresRun(fs *flag.FlagSet, cmd, file, out, runID string, keep bool, r *redactor, stdout, stderr io.Writer,
	log *slog.Logger) (*storesRun, int) {
	var clash []string
	fs.Visit(func(f *flag.Flag) {
		for _, n := range stackOnlyFlags {
			if f.Name == n {
				clash = append(clash, "--"+n)
			}
		}
	})
	if len(clash) > 0 {
		fmt.Fprintf(stderr, "fencebench %s: --stores describes every store: %s cannot be given with it\n", cmd, strings.Join(clash, ", "))
		return nil, outcome.ExitBadInput
	}
	specs, err := env.LoadStores(file, os.Getenv)
	if err != nil {
		fmt.Fprintf(stderr, "fencebench %s: %v\n", cmd, err)
		return nil, outcome.ExitBadInput
	}
	for _, s := range specs {
		r.add(s.Options.SecretKey)
	}
	dir := filepath.Join(out, runID)
	err = checkNames(runID, "")
	if err == nil {
		err = claimRunDir(dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fencebench %s: %v\n", cmd, err)
		return nil, outcome.ExitBadInput
	}
	s := &storesRun{cmd: cmd, out: out, runID: runID, keep: keep, specs: specs, red: r, stdout: stdout, stderr: stderr, log: log}
	s.cmp.Kind = cmd
	for _, spec := range specs {
		s.cmp.Stores = append(s.cmp.Stores, reports.ComparedStore{Name: spec.Name})
	}
	return s, -1
}

// dir is the folder of the whole command; sub is store i's.
func (s *storesRun) dir() string      { return filepath.Join(s.out, s.runID) }
func (s *storesRun) sub(i int) string { return filepath.Join(s.dir(), s.specs[i].Name) }
func (s *storesRun) prefix(i int) string {
	return "fencebench/" + s.runID + "/" + s.specs[i].Name + "/"
}

// each opens every store in turn as an external stack under its own prefix and calls do with
// it; do returns the store's exit code. A store that cannot be opened is recorded with the
// reason and the exit code; an interruption stops the loop.
func (s *storesRun) each(ctx context.Context, do func(ctx context.Context, i int, st *env.Opened) int) {
	for i, spec := range s.specs {
		fmt.Fprintf(s.stderr, "== store %s (%d of %d)\n", spec.Name, i+1, len(s.specs))
		sf := stackFlags{Options: spec.Options}
		sf.Prefix, sf.Keep = s.prefix(i), s.keep
		var why bytes.Buffer
		sctx, sink, st, code := sf.openIn(ctx, s.cmd, s.runID, s.sub(i), s.log, s.red, io.MultiWriter(s.stderr, &why))
		cs := &s.cmp.Stores[i]
		cs.Server, cs.Endpoint, cs.Bucket, cs.Prefix = spec.Options.Server, spec.Options.Endpoint, spec.Options.Bucket, sf.Prefix
		if st == nil {
			cs.Verdict, cs.ExitCode, cs.Summary = checker.Error, code, strings.TrimSpace(why.String())
			continue
		}
		info := st.Env.Info()
		cs.Server, cs.Endpoint = info.Server, info.Endpoint
		code = do(sctx, i, st)
		beforeCleanup()
		st.Stop()
		cs.ExitCode = endCode(sctx, s.cmd, sink, s.stderr, code)
		if cs.ExitCode != code {
			cs.Verdict, cs.Summary = checker.Error, "harness error or interruption: "+cs.Summary
		}
		if ctx.Err() != nil {
			return
		}
	}
}

// finish writes the comparison, scrubs the results, prints the stores' verdicts and returns
// the worst exit code.
func (s *storesRun) finish(ctx context.Context, asJSON bool) int {
	s.cmp.ExitCode = outcome.ExitPass
	for _, cs := range s.cmp.Stores {
		s.cmp.ExitCode = worseExit(s.cmp.ExitCode, cs.ExitCode)
	}
	if err := reports.WriteComparison(s.dir(), s.cmp); err != nil {
		fmt.Fprintf(s.stderr, "fencebench %s: %v\n", s.cmd, err)
		return outcome.ExitHarness
	}
	if n, err := s.red.scrubFiles(s.dir()); err != nil || n > 0 {
		fmt.Fprintf(s.stderr, "fencebench %s: removed %d credential occurrences from the results (a bug: please report it); scan error: %v\n", s.cmd, n, err)
	}
	if asJSON {
		b, err := os.ReadFile(filepath.Join(s.dir(), "compare.json"))
		if err == nil {
			_, err = s.stdout.Write(b)
		}
		if err != nil {
			fmt.Fprintf(s.stderr, "fencebench %s: %v\n", s.cmd, err)
			return outcome.ExitHarness
		}
	} else {
		fmt.Fprintf(s.stdout, "\n%d stores compared:\n", len(s.cmp.Stores))
		for _, cs := range s.cmp.Stores {
			fmt.Fprintf(s.stdout, "  %-20s exit %-3d %s\n", cs.Name, cs.ExitCode, firstLine(cs.Summary))
		}
		fmt.Fprintf(s.stdout, "comparison: %s\n", filepath.Join(s.dir(), "compare.html"))
	}
	if ctx.Err() != nil {
		fmt.Fprintf(s.stderr, "fencebench %s: interrupted; everything was stopped\n", s.cmd)
		return outcome.ExitHarness
	}
	return s.cmp.ExitCode
}

// exitRank orders exit codes from best to worst: pass, inconclusive, fail, bad input,
// harness error (as a run's own verdicts rank them).
func exitRank(code int) int {
	switch code {
	case outcome.ExitPass:
		return 0
	case outcome.ExitInconclusive:
		return 1
	case outcome.ExitFail:
		return 2
	case outcome.ExitBadInput:
		return 3
	default:
		return 4
	}
}

func worseExit(a, b int) int {
	if exitRank(b) > exitRank(a) {
		return b
	}
	return a
}

// record fills store i's column: its verdict, summary and own report (a file in its
// subfolder, "" when it wrote none).
func (s *storesRun) record(i int, v checker.Verdict, summary, report string) {
	cs := &s.cmp.Stores[i]
	cs.Verdict, cs.Summary = v, summary
	if report != "" {
		cs.Report = s.specs[i].Name + "/" + report
	}
}

// certifyStores certifies every store of the stores file with the same options.
func certifyStores(ctx context.Context, s *storesRun, o certify.Options, args []string, asJSON, verbose bool) int {
	s.cmp.Command = "fencebench certify " + strings.Join(redactArgs(args), " ")
	s.each(ctx, func(ctx context.Context, i int, st *env.Opened) int {
		opts := o
		opts.Store, opts.Prefix, opts.Cleanup = st.Env.Info(), st.Prefix, st.Cleanup
		rep, err := certify.Run(ctx, st.Env, opts)
		if err != nil {
			fmt.Fprintf(s.stderr, "fencebench certify: %s: %v\n", s.specs[i].Name, err)
			s.record(i, checker.Error, err.Error(), "")
			return outcome.ExitHarness
		}
		rep.Command, rep.Version = s.cmp.Command, version
		if err := writeCertifyFiles(s.sub(i), rep); err != nil {
			fmt.Fprintf(s.stderr, "fencebench certify: %v\n", err)
			return outcome.ExitHarness
		}
		if verbose {
			_ = rep.WriteText(s.stderr, false)
		}
		s.record(i, overallVerdict(rep.Verdict), rep.Summary(), "certify.html")
		cs := &s.cmp.Stores[i]
		cs.Duration = rep.Duration.Round(time.Second)
		cs.Enforces, cs.Wrong = storeFindings(rep)
		for _, r := range rep.Results {
			s.cmp.Set(r.ID+" ("+r.Client+")", r.Title+" ["+string(r.Class)+"]", i, probeCell(s.specs[i].Name, r))
		}
		return rep.ExitCode()
	})
	return s.finish(ctx, asJSON)
}

// storeFindings says what a certification saw the store do: the HARD probes it passed in
// every round with every client ("A1 <title>"), and every result that failed or could not be
// judged, with its witness or cause.
func storeFindings(rep *certify.Report) (enforces []string, wrong []reports.StoreFinding) {
	passed := map[string]bool{}
	var order []string
	for _, r := range rep.Results {
		if r.Class == certify.Hard {
			id := r.ID + " " + r.Title
			if _, ok := passed[id]; !ok {
				passed[id] = true
				order = append(order, id)
			}
			passed[id] = passed[id] && r.Verdict == certify.Pass
		}
		if r.Verdict != certify.Fail && r.Verdict != certify.Error {
			continue
		}
		f := reports.StoreFinding{Row: r.ID + " (" + r.Client + ")", Verdict: r.Verdict, Seen: r.Observed}
		switch {
		case r.Witness != nil:
			f.Witness = r.Witness.Text()
		case r.Cause != "":
			f.Witness = "[" + string(r.ErrorClass) + "] " + r.Cause
		case len(r.Details) > 0:
			// No history to explain: the failing round's own observations are the witness.
			f.Witness = fmt.Sprintf("round %d of %d:\n%s", r.Round, r.Rounds, strings.Join(r.Details, "\n"))
		}
		if r.Variation != "" {
			f.Seen = r.Variation + "; " + f.Seen
		}
		wrong = append(wrong, f)
	}
	for _, id := range order {
		if passed[id] {
			enforces = append(enforces, id)
		}
	}
	return enforces, wrong
}

// overallVerdict is the colour of a certification's verdict.
func overallVerdict(v certify.Overall) checker.Verdict {
	switch v {
	case certify.Certified:
		return checker.Pass
	case certify.NotCertified:
		return checker.Fail
	default:
		return checker.Error
	}
}

// probeCell is one probe's result as a comparison cell: its verdict, with the failed rounds
// when there were several, and for an INFO probe its facts, linked to the store's
// certification page.
func probeCell(name string, r certify.Result) reports.ComparedCell {
	label := string(r.Verdict)
	if r.Rounds > 1 && r.Failed > 0 {
		label = fmt.Sprintf("%s %d/%d", r.Verdict, r.Failed, r.Rounds)
	}
	note := r.Observed
	if r.Variation != "" {
		note = r.Variation + "; " + note
	}
	cell := reports.ComparedCell{Verdict: r.Verdict, Label: label, Note: note, Link: name + "/certify.html"}
	if r.Class == certify.Informational {
		// What a recording probe saw is its result: stores that saw different things differ.
		var facts []string
		for k, v := range r.Facts {
			facts = append(facts, k+"="+v)
		}
		sort.Strings(facts)
		cell.Detail = strings.Join(facts, " ")
	}
	return cell
}

// runStores runs the scenarios on every store of the stores file with the same options.
func runStores(ctx context.Context, s *storesRun, scs []*scenarios.Scenario, o runner.Options) int {
	s.cmp.Command = o.Command
	s.each(ctx, func(ctx context.Context, i int, st *env.Opened) int {
		opts := o
		opts.Out, opts.RunID, opts.Env, opts.Prefix, opts.Cleanup = s.dir(), s.specs[i].Name, st.Env, st.Prefix, st.Cleanup
		sum, err := runner.Run(ctx, scs, opts)
		if err != nil {
			fmt.Fprintf(s.stderr, "fencebench run: %s: %v\n", s.specs[i].Name, err)
			s.record(i, checker.Error, err.Error(), "")
			if errors.Is(err, outcome.ErrBadInput) {
				return outcome.ExitBadInput
			}
			return outcome.ExitHarness
		}
		c := sum.Counts()
		summary := fmt.Sprintf("%d cells: %d pass, %d fail, %d inconclusive, %d error", len(sum.Cells),
			c[checker.Pass], c[checker.Fail], c[checker.Inconclusive], c[checker.Error])
		v := checker.Pass
		switch sum.ExitCode() {
		case outcome.ExitFail:
			v = checker.Fail
		case outcome.ExitInconclusive:
			v = checker.Inconclusive
		case outcome.ExitPass:
		default:
			v = checker.Error
		}
		s.record(i, v, summary, "index.html")
		s.cmp.AddRun(i, s.specs[i].Name, sum)
		return sum.ExitCode()
	})
	return s.finish(ctx, false)
}
