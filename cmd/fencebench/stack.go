package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/store"
)

// stackFlags parse the flags that choose and describe the store a run talks to.
type stackFlags struct{ env.Options }

// secretFlags take a credential as their value: the recorded command line never shows it.
var secretFlags = []string{"access-key", "secret-key"}

func (s *stackFlags) register(fs *flag.FlagSet) {
	s.Options = env.Options{}
	fs.StringVar(&s.Stack, "stack", "local", "the store: local (an embedded MinIO process), containers (a MinIO container through\n"+
		"testcontainers-go), external (an S3 endpoint: --endpoint, --bucket, credentials from the AWS environment),\n"+
		"sim (an in-memory store in the bench's process, faults at the store interface, on virtual scenario time: see --speed)")
	fs.Float64Var(&s.Speed, "speed", 0, "sim: 0 runs scenario time virtually (it advances only when the bench has nothing left\n"+
		"to do at the current instant: load never changes a schedule); N > 0 runs it N times faster than\n"+
		"real time instead (1 is real time)")
	fs.StringVar(&s.Prefix, "prefix", "", "key prefix the run confines itself to, ending in / (default <run-id>/; external: fencebench/<run-id>/);\n"+
		"the run claims it with a marker object; a prefix that holds objects, or whose parent or sub-prefix another\n"+
		"run claims, is refused")
	fs.BoolVar(&s.Keep, "keep", false, "external: keep the run's objects (default: delete everything under the run prefix, and nothing else)")
	fs.IntVar(&s.Drives, "drives", 1, "local: run MinIO erasure-coded over this many drives (folders), 1 to 16; scenarios that take\n"+
		"drives away or restart the store need the local stack")
	fs.StringVar(&s.MinIOImage, "minio-image", "", "containers: the MinIO image (default "+compose.MinIOImage+", built FROM scratch from the\nstatic MinIO binary when missing)")
	fs.StringVar(&s.Endpoint, "endpoint", "", "external: the S3 endpoint URL (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS S3\nin the region)")
	fs.StringVar(&s.Region, "region", "", "external: the region (default $AWS_REGION, $AWS_DEFAULT_REGION, the profile's, else us-east-1)")
	fs.StringVar(&s.Bucket, "bucket", "", "external: the bucket (default $FENCEBENCH_BUCKET); it must exist unless --create-bucket")
	fs.StringVar(&s.Profile, "profile", "", "external: the shared AWS profile for credentials and region (default $AWS_PROFILE)")
	fs.StringVar(&s.AccessKey, "access-key", "", "external: access key ID (default $AWS_ACCESS_KEY_ID, else the profile's)")
	fs.StringVar(&s.SecretKey, "secret-key", "", "external: secret access key (default $AWS_SECRET_ACCESS_KEY, else the profile's);\n"+
		"prefer the environment: a command line is visible to other users")
	fs.StringVar(&s.CAFile, "ca-file", "", "external: PEM file of the CAs that sign the endpoint's certificate (default: the system roots)")
	fs.StringVar(&s.Addressing, "addressing", "auto", "external: path, virtual (virtual-hosted) or auto (virtual for AWS S3, path otherwise)")
	fs.BoolVar(&s.CreateBucket, "create-bucket", false, "external: create the bucket when it does not exist")
}

// openIn checks the run's names, claims the folder dir for the command's results, then opens
// the stack. The returned context carries the sink of the goroutines that run outside the
// cells (the store's). On failure, it prints why and returns a nil stack and the exit code;
// a run id or prefix that is not a safe name is refused before anything is written.
func (s *stackFlags) openIn(ctx context.Context, cmd, runID, dir string, log *slog.Logger, r *redactor,
	stderr io.Writer) (context.Context, *guard.Sink, *env.Opened, int) {
	err := refuseUsedDir(dir)
	if err == nil {
		err = checkNames(runID, s.Prefix)
	}
	if err == nil {
		err = claimRunDir(dir)
	}
	if err != nil {
		fmt.Fprintf(stderr, "fencebench %s: %v\n", cmd, err)
		return ctx, nil, nil, outcome.ExitBadInput
	}
	ctx, sink := guard.New(ctx)
	o := s.Options
	o.Secret, o.Hold = r.add, held.hold
	st, err := openStack(ctx, o, runID, dir, log)
	if err != nil {
		fmt.Fprintf(stderr, "fencebench %s: %v\n", cmd, err)
		_ = os.Remove(dir) // only when empty: a folder that never held anything
		if errors.Is(err, outcome.ErrBadInput) {
			return ctx, nil, nil, outcome.ExitBadInput
		}
		return ctx, nil, nil, outcome.ExitHarness
	}
	return ctx, sink, st, 0
}

// checkNames refuses a run id or a prefix that is not a safe name.
func checkNames(runID, prefix string) error {
	if err := runner.ValidateRunID(runID); err != nil {
		return fmt.Errorf("--run-id: %w", err)
	}
	if prefix == "" {
		return nil
	}
	if err := store.ValidatePrefix(prefix); err != nil {
		return fmt.Errorf("--prefix: %w", err)
	}
	return nil
}

func openStack(ctx context.Context, o env.Options, runID, dir string, log *slog.Logger) (*env.Opened, error) {
	if err := checkNames(runID, o.Prefix); err != nil {
		return nil, outcome.BadInput(err)
	}
	return env.Open(ctx, o, runID, dir, log)
}

// redactArgs is the command line as recorded in results: the values of credential flags
// are replaced.
func redactArgs(args []string) []string {
	out := make([]string, len(args))
	copy(out, args)
	for i := 0; i < len(out); i++ {
		name, _, hasValue := strings.Cut(strings.TrimLeft(out[i], "-"), "=")
		if !strings.HasPrefix(out[i], "-") || !isSecretFlag(name) {
			continue
		}
		if hasValue {
			out[i] = out[i][:strings.IndexByte(out[i], '=')+1] + "REDACTED"
		} else if i+1 < len(out) {
			out[i+1] = "REDACTED"
			i++
		}
	}
	return out
}

func isSecretFlag(name string) bool {
	for _, f := range secretFlags {
		if name == f {
			return true
		}
	}
	return false
}
