// Command fencebench runs fault-injection scenarios against object-store fencing protocols.
//
// Subcommands:
//
//	run [flags] [files | dirs | names] run scenarios and write results/<run-id>/
//	certify [flags]                   probe a store's conditional writes: can it carry fencing?
//	explore [flags]                   generate fault schedules, judge them, shrink what fails
//	stability [flags] [names]         the catalogue with its kill matrix K times per client: flip rate per cell
//	validate [files | dirs | names]   check scenarios without running anything
//	report <results/run-id>           judge a stored run again and rewrite its reports
//	merge <out/run-id> <shard runs>   join the runs of run --shard K/N into one run folder
//	list                              the shipped scenarios and the protocol variants
//	smoke                             embedded MinIO round trip through both store adapters
//
// Flags may stand anywhere on the command line. SIGINT, SIGTERM and SIGHUP stop the command
// and clean up (exit 255); a second one abandons the cleanup at once and names what may be
// left behind. A panic in any goroutine the bench starts is a harness error of its cell (or of
// the command), never the end of the process.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

func main() {
	ctx, cancel := context.WithCancelCause(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	go watchSignals(sigs, cancel, os.Stderr, os.Exit)
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: fencebench <command> [arguments]

commands:
  run [flags] [files | dirs | names] run scenarios (default: the whole catalogue); -h for flags
  certify [--stack ... (as run)] [--client minio-go|aws-sdk|both] [--keys N] [--out dir] [--json]
                                    probe a store's conditional writes; exit 0 certified, 1 a HARD probe failed
  explore --schedules N | --for D [--variant V] [--stack sim (default) | local | ...] [--confirm local|none]
                                    generate fault schedules, judge each, shrink failures to scenarios
  stability [--rounds K] [--clients minio-go,aws-sdk] [--hog] [--stack ...] [names]
                                    run the catalogue with its kill matrix K times per client; the flip rate per cell
  validate [files | dirs | names]   check scenarios without running anything
  report <results/run-id>           judge a stored run again and rewrite its reports
  merge <out/run-id> <shard-run-dir | folder of shard runs>...
                                    join the runs of run --shard K/N into one run folder
  list                              the shipped scenarios and the protocol variants
  smoke                             embedded MinIO round trip through both store adapters

exit codes: 0 pass, 1 an invariant failed, 2 inconclusive, 254 bad input, 255 harness error
`)
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return outcome.ExitBadInput
	}
	switch args[0] {
	case "run":
		return runCmd(ctx, args[1:], stdout, stderr)
	case "certify":
		return certifyCmd(ctx, args[1:], stdout, stderr)
	case "explore":
		return exploreCmd(ctx, args[1:], stdout, stderr)
	case "stability":
		return stabilityCmd(ctx, args[1:], stdout, stderr)
	case "validate":
		return validate(args[1:], stdout, stderr)
	case "report":
		return reportCmd(args[1:], stdout, stderr)
	case "merge":
		return mergeCmd(args[1:], stdout, stderr)
	case "list":
		return list(stdout)
	case "smoke":
		if err := smoke(ctx, stdout); err != nil {
			fmt.Fprintf(stderr, "fencebench smoke: %v\n", err)
			return outcome.ExitHarness
		}
		return outcome.ExitPass
	case "-h", "--help", "help":
		usage(stdout)
		return outcome.ExitPass
	default:
		fmt.Fprintf(stderr, "fencebench: unknown command %q\n", args[0])
		usage(stderr)
		return outcome.ExitBadInput
	}
}

func smoke(ctx context.Context, out io.Writer) error {
	start := time.Now()
	srv, err := compose.StartLocal(ctx, compose.LocalOptions{})
	if err != nil {
		return err
	}
	defer func() {
		srv.Stop()
		fmt.Fprintf(out, "stopped MinIO (%s)\n", srv.Endpoint)
	}()
	fmt.Fprintf(out, "started MinIO at %s, bucket %s, in %v\n", srv.Endpoint, srv.Bucket, time.Since(start).Round(time.Millisecond))
	prefix := fmt.Sprintf("smoke/%d/", time.Now().UnixNano())
	for _, c := range store.Clients {
		s, err := s3store.New(c, srv.Config())
		if err != nil {
			return err
		}
		if err := roundTrip(ctx, s, prefix+string(c)+"/", func(f string, a ...any) {
			fmt.Fprintf(out, "  %-9s "+f+"\n", append([]any{c}, a...)...)
		}); err != nil {
			return fmt.Errorf("%s: %w", c, err)
		}
	}
	return nil
}

// roundTrip exercises every Store call once and checks the conditional-write answers.
func roundTrip(ctx context.Context, s store.Store, p string, logf func(string, ...any)) error {
	key := p + "fence"
	e1, err := s.PutIfAbsent(ctx, key, []byte("v1|seq=0"))
	if err != nil {
		return fmt.Errorf("create-if-absent: %w", err)
	}
	logf("create-if-absent %s -> etag %s", key, e1)
	if _, err := s.PutIfAbsent(ctx, key, []byte("v1|again")); !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("second create-if-absent: got %v, want precondition failed", err)
	}
	logf("second create-if-absent -> precondition failed (as it must)")
	e2, err := s.PutIfMatch(ctx, key, []byte("v1|seq=1"), e1)
	if err != nil {
		return fmt.Errorf("If-Match with the current ETag: %w", err)
	}
	logf("If-Match %s -> etag %s", e1, e2)
	if _, err := s.PutIfMatch(ctx, key, []byte("v1|seq=2"), e1); !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("stale If-Match: got %v, want precondition failed", err)
	}
	logf("stale If-Match -> precondition failed (as it must)")
	o, err := s.Get(ctx, key)
	if err != nil || o.ETag != e2 {
		return fmt.Errorf("get: etag %q, err %v; want %s", o.ETag, err, e2)
	}
	logf("get -> %q etag %s", o.Body, o.ETag)
	if _, err := s.Put(ctx, p+"data", []byte("x")); err != nil {
		return fmt.Errorf("put: %w", err)
	}
	l, err := s.List(ctx, p)
	if err != nil || len(l) != 2 {
		return fmt.Errorf("list: %d entries, err %v; want 2", len(l), err)
	}
	logf("list %s -> %d objects", p, len(l))
	failed, err := s.DeleteMany(ctx, []string{key, p + "data", p + "missing"})
	if err != nil || len(failed) != 0 {
		return fmt.Errorf("delete-many: failed=%v err=%v", failed, err)
	}
	if _, err := s.PutIfMatch(ctx, key, []byte("v1|seq=3"), e2); !errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("If-Match on a deleted key: got %v, want not found", err)
	}
	logf("delete-many, then If-Match on the deleted key -> not found")
	return nil
}
