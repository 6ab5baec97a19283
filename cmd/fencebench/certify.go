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
	"strconv"
	"strings"
	"time"

	"github.com/fencebench/fencebench/certify"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/store"
)

// certifyCmd runs the certification probes against the chosen stack. Exit codes: 0 certified,
// 1 a HARD probe failed, 254 bad flags, 255 a harness error (store unreachable, a HARD probe
// that could not be judged, interrupted).
func certifyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) (code int) {
	// Credentials never reach the output: the command does not print them, and whatever it
	// prints passes a redactor that knows them anyway.
	red := newRedactor(args)
	stdout, stderr = red.writer(stdout), red.writer(stderr)
	defer recoverHarness("certify", stderr, &code)
	fs := flag.NewFlagSet("certify", flag.ContinueOnError)
	fs.SetOutput(stderr)
	client := fs.String("client", "both", "store client: minio-go, aws-sdk or both")
	keys := fs.Int("keys", certify.DefaultKeys, "fresh keys per race size (B9, B10), CAS rounds per chain writer (B11), read-after-CAS iterations (D17)")
	out := fs.String("out", "results", "results folder: the report goes to <out>/<run-id>/ (certify.txt, certify.json, certify.html)")
	asJSON := fs.Bool("json", false, "print the report as JSON instead of text")
	rounds := boundedIntFlag(fs, "rounds", certify.DefaultRounds, 1, certify.MaxRounds, "repeat every probe `n` times, on fresh keys each round; one failing round fails a HARD probe")
	probes := fs.String("probes", "", "comma-separated probe IDs to run (default: all; see the report for the list)")
	raceBudget := fs.Duration("race-budget", certify.DefaultRaceBudget, "how long B9 and B10 start new keys for one racer count; past it they are judged on the keys raced (a slow store is judged on fewer than --keys)")
	probeTimeout := fs.Duration("probe-timeout", certify.DefaultProbeTimeout, "deadline of every probe run (one probe, one client, one round); a probe that reaches it errors, naming the request it waited for")
	timeout := fs.Duration("timeout", 0, fmt.Sprintf("deadline of the whole certification; the probes left when it passes are not started (default %v per round)", certify.DefaultTimeoutPerRound))
	verbose := fs.Bool("v", false, "debug logs, and every probe's details in the text report")
	storesFile := fs.String("stores", "", storesUsage)
	var sf stackFlags
	sf.register(fs)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: fencebench certify [flags]\n\n"+
			"Probes the store's conditional-write semantics and says whether it can carry a fencing protocol.\n"+
			"exit codes: 0 certified, 1 a HARD probe failed, 254 bad flags, 255 harness error\n\nflags:")
		fs.PrintDefaults()
	}
	if pos, err := parseAnywhere(fs, args); err != nil || len(pos) > 0 {
		if errors.Is(err, flag.ErrHelp) {
			return outcome.ExitPass
		}
		if len(pos) > 0 {
			// Not echoed: a misplaced argument may be a credential.
			fmt.Fprintf(stderr, "fencebench certify: %d unexpected arguments: certify takes flags only\n", len(pos))
		}
		return outcome.ExitBadInput
	}
	clients, ids, msg := certifyChoices(*client, *keys, *probes)
	if msg == "" && (*probeTimeout <= 0 || *timeout < 0) {
		msg = fmt.Sprintf("--probe-timeout %v, --timeout %v: want positive durations", *probeTimeout, *timeout)
	}
	if sf.Stack == "sim" {
		msg = "--stack sim: certify probes a store over S3 (raw requests, both SDKs); the simulated stack has no endpoint"
	}
	if msg != "" {
		fmt.Fprintf(stderr, "fencebench certify: %s\n", msg)
		return outcome.ExitBadInput
	}
	logger := slog.New(slog.DiscardHandler)
	if *verbose {
		logger = slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	runID := "certify-" + runner.NewRunID(time.Now())
	if *storesFile != "" {
		s, code := newStoresRun(fs, "certify", *storesFile, *out, runID, sf.Keep, red, stdout, stderr, logger)
		if s == nil {
			return code
		}
		return certifyStores(ctx, s, certify.Options{Clients: clients, Keys: *keys, Rounds: rounds.n, Probes: ids, Logger: logger,
			ProbeTimeout: *probeTimeout, Timeout: *timeout, RaceBudget: *raceBudget, Progress: certifyProgress(stderr)}, args, *asJSON, *verbose)
	}
	dir := filepath.Join(*out, runID)
	ctx, sink, st, code := sf.openIn(ctx, "certify", runID, dir, logger, red, stderr)
	if st == nil {
		return code
	}
	defer func() { beforeCleanup(); st.Stop() }()
	e, prefix := st.Env, st.Prefix
	info := e.Info()
	fmt.Fprintf(stderr, "certifying %s at %s, bucket %s, prefix %s\n", info.Server, info.Endpoint, info.Bucket, prefix)
	rep, err := certify.Run(ctx, e, certify.Options{Store: info, Clients: clients, Keys: *keys, Rounds: rounds.n, Probes: ids,
		Prefix: prefix, Cleanup: st.Cleanup, Logger: logger, ProbeTimeout: *probeTimeout, Timeout: *timeout, RaceBudget: *raceBudget,
		Progress: certifyProgress(stderr)})
	if err != nil {
		fmt.Fprintf(stderr, "fencebench certify: %v\n", err)
		_ = os.Remove(dir) // only when empty: a folder that never held a report
		return outcome.ExitHarness
	}
	rep.Command, rep.Version = "fencebench certify "+strings.Join(redactArgs(args), " "), version
	if code := publishCertification(rep, dir, red, *asJSON, *verbose, stdout, stderr); code != outcome.ExitPass {
		return code
	}
	return endCode(ctx, "certify", sink, stderr, rep.ExitCode())
}

// publishCertification writes the report's files into dir, scrubs them and prints the report;
// a failure to do so is a harness error.
func publishCertification(rep *certify.Report, dir string, red *redactor, asJSON, verbose bool, stdout, stderr io.Writer) int {
	if err := writeCertifyFiles(dir, rep); err != nil {
		fmt.Fprintf(stderr, "fencebench certify: %v\n", err)
		return outcome.ExitHarness
	}
	if n, err := red.scrubFiles(dir); err != nil || n > 0 {
		fmt.Fprintf(stderr, "fencebench certify: removed %d credential occurrences from the results (a bug: please report it); scan error: %v\n", n, err)
	}
	var err error
	if asJSON {
		err = rep.WriteJSON(stdout)
	} else {
		err = rep.WriteText(stdout, verbose)
		fmt.Fprintf(stdout, "report: %s\n", filepath.Join(dir, "certify.html"))
	}
	if err != nil {
		fmt.Fprintf(stderr, "fencebench certify: %v\n", err)
		return outcome.ExitHarness
	}
	return outcome.ExitPass
}

// certifyProgress prints one line per probe, client and round as it finishes.
func certifyProgress(w io.Writer) func(certify.Result) {
	return func(r certify.Result) {
		round := ""
		if r.Rounds > 1 {
			round = fmt.Sprintf("round %d/%d ", r.Round, r.Rounds)
		}
		cause := ""
		if c := r.CauseLine(); c != "" {
			cause = ": " + c
		}
		fmt.Fprintf(w, "  %s%-8s %-4s %-4s %s (%v)%s\n", round, r.Client, r.ID, r.Class, r.Verdict, r.Duration.Round(time.Millisecond), cause)
	}
}

// certifyChoices checks the probe flags: the clients, the probe IDs, and what is wrong
// ("" when nothing).
func certifyChoices(client string, keys int, probes string) ([]store.Client, []string, string) {
	var clients []store.Client
	switch client {
	case "both":
		clients = store.Clients
	case string(store.ClientMinio), string(store.ClientAWS):
		clients = []store.Client{store.Client(client)}
	default:
		return nil, nil, fmt.Sprintf("--client %q: want minio-go, aws-sdk or both", client)
	}
	if keys < 1 {
		return nil, nil, fmt.Sprintf("--keys %d: want at least 1", keys)
	}
	var ids []string
	if probes != "" {
		ids = strings.Split(probes, ",")
		if _, err := certify.Select(ids); err != nil {
			return nil, nil, "--probes: " + err.Error()
		}
	}
	return clients, ids, ""
}

// writeCertifyFiles writes the report as text, JSON and HTML into dir.
func writeCertifyFiles(dir string, rep *certify.Report) error {
	for name, render := range map[string]func(io.Writer) error{
		"certify.txt":  func(w io.Writer) error { return rep.WriteText(w, true) },
		"certify.json": rep.WriteJSON,
		"certify.html": rep.WriteHTML,
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			return fmt.Errorf("render %s: %w", name, err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// boundedInt is an integer flag that refuses values outside [min, max], naming the range.
type boundedInt struct{ n, min, max int }

// boundedIntFlag defines a boundedInt flag with its range appended to the usage.
func boundedIntFlag(fs *flag.FlagSet, name string, def, min, max int, usage string) *boundedInt {
	b := &boundedInt{n: def, min: min, max: max}
	fs.Var(b, name, fmt.Sprintf("%s (%d to %d)", usage, min, max))
	return b
}

func (b *boundedInt) String() string {
	if b == nil {
		return ""
	}
	return strconv.Itoa(b.n)
}

func (b *boundedInt) Set(s string) error {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < b.min || n > b.max {
		return fmt.Errorf("want an integer from %d to %d", b.min, b.max)
	}
	b.n = n
	return nil
}
