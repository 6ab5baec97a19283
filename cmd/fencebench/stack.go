package main

import (
	"context"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/store"
)

// stackFlags choose and describe the store a run talks to.
type stackFlags struct {
	stack        string
	prefix       string
	keep         bool
	minioImage   string
	endpoint     string
	region       string
	bucket       string
	profile      string
	accessKey    string
	secretKey    string
	caFile       string
	addressing   string
	createBucket bool
}

// secretFlags take a credential as their value: the recorded command line never shows it.
var secretFlags = []string{"access-key", "secret-key"}

func (s *stackFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&s.stack, "stack", "local", "the store: local (an embedded MinIO process), containers (a MinIO container through\n"+
		"testcontainers-go), external (an S3 endpoint: --endpoint, --bucket, credentials from the AWS environment)")
	fs.StringVar(&s.prefix, "prefix", "", "key prefix the run confines itself to, ending in / (default <run-id>/; external: fencebench/<run-id>/);\n"+
		"the run claims it with a marker object; a prefix that holds objects, or whose parent or sub-prefix another\n"+
		"run claims, is refused")
	fs.BoolVar(&s.keep, "keep", false, "external: keep the run's objects (default: delete everything under the run prefix, and nothing else)")
	fs.StringVar(&s.minioImage, "minio-image", "", "containers: the MinIO image (default "+compose.MinIOImage+", built FROM scratch from the\nstatic MinIO binary when missing)")
	fs.StringVar(&s.endpoint, "endpoint", "", "external: the S3 endpoint URL (default $AWS_ENDPOINT_URL_S3, $AWS_ENDPOINT_URL, else AWS S3\nin the region)")
	fs.StringVar(&s.region, "region", "", "external: the region (default $AWS_REGION, $AWS_DEFAULT_REGION, the profile's, else us-east-1)")
	fs.StringVar(&s.bucket, "bucket", "", "external: the bucket (default $FENCEBENCH_BUCKET); it must exist unless --create-bucket")
	fs.StringVar(&s.profile, "profile", "", "external: the shared AWS profile for credentials and region (default $AWS_PROFILE)")
	fs.StringVar(&s.accessKey, "access-key", "", "external: access key ID (default $AWS_ACCESS_KEY_ID, else the profile's)")
	fs.StringVar(&s.secretKey, "secret-key", "", "external: secret access key (default $AWS_SECRET_ACCESS_KEY, else the profile's);\n"+
		"prefer the environment: a command line is visible to other users")
	fs.StringVar(&s.caFile, "ca-file", "", "external: PEM file of the CAs that sign the endpoint's certificate (default: the system roots)")
	fs.StringVar(&s.addressing, "addressing", "auto", "external: path, virtual (virtual-hosted) or auto (virtual for AWS S3, path otherwise)")
	fs.BoolVar(&s.createBucket, "create-bucket", false, "external: create the bucket when it does not exist")
}

// openedStack is the store of a run and what to undo afterwards.
type openedStack struct {
	env     runner.Env
	prefix  string
	cleanup bool
	stop    func()
}

// openIn claims the folder dir for the command's results, then opens the stack. The returned
// context carries the sink of the goroutines that run outside the cells (the store's). On
// failure, it prints why and returns a nil stack and the exit code.
func (s *stackFlags) openIn(ctx context.Context, cmd, runID, dir string, log *slog.Logger, r *redactor,
	stderr io.Writer) (context.Context, *guard.Sink, *openedStack, int) {
	// Names are checked before anything is written: a refused run leaves no folder behind.
	if err := s.checkNames(runID); err != nil {
		fmt.Fprintf(stderr, "fencebench %s: %v\n", cmd, err)
		return ctx, nil, nil, exitBadInput
	}
	if err := claimRunDir(dir); err != nil {
		fmt.Fprintf(stderr, "fencebench %s: %v\n", cmd, err)
		return ctx, nil, nil, exitBadInput
	}
	ctx, sink := guard.New(ctx)
	st, err := s.open(ctx, runID, dir, log, r)
	if err != nil {
		fmt.Fprintf(stderr, "fencebench %s: %v\n", cmd, err)
		_ = os.Remove(dir) // only when empty: a folder that never held anything
		if isBadStack(err) {
			return ctx, nil, nil, exitBadInput
		}
		return ctx, nil, nil, exitHarness
	}
	return ctx, sink, st, 0
}

// checkNames refuses a run id or prefix that is not a safe name (a bad-stack error).
func (s *stackFlags) checkNames(runID string) error {
	if err := runner.ValidateRunID(runID); err != nil {
		return badStack("--run-id: %v", err)
	}
	if s.prefix != "" {
		if err := store.ValidatePrefix(s.prefix); err != nil {
			return badStack("--prefix: %v", err)
		}
	}
	return nil
}

// open prepares the chosen stack. dir is the run's results folder (for the store's log).
// A bad flag is errBadStack; a store that cannot be started or reached is any other error.
// Until stop has run, what the stack would leave behind if the process died is in held.
func (s *stackFlags) open(ctx context.Context, runID, dir string, log *slog.Logger, r *redactor) (*openedStack, error) {
	o := &openedStack{prefix: s.prefix, stop: func() {}}
	if err := s.checkNames(runID); err != nil {
		return nil, err
	}
	if s.stack != "external" {
		for name, v := range map[string]string{"endpoint": s.endpoint, "region": s.region, "bucket": s.bucket, "profile": s.profile,
			"access-key": s.accessKey, "secret-key": s.secretKey, "ca-file": s.caFile} {
			if v != "" {
				return nil, badStack("--%s applies to --stack external only", name)
			}
		}
	}
	if s.minioImage != "" && s.stack != "containers" {
		return nil, badStack("--minio-image applies to --stack containers only")
	}
	switch s.stack {
	case "local":
		srv, err := compose.StartLocal(ctx, compose.LocalOptions{LogPath: filepath.Join(dir, "store.log")})
		if err != nil {
			return nil, fmt.Errorf("start the embedded MinIO: %w", err)
		}
		r.add(srv.SecretKey)
		release := held.hold("the embedded MinIO's data folder " + srv.DataDir())
		o.env, o.stop = runner.LocalEnv{Local: srv}, func() { srv.Stop(); release() }
		log.Info("store started", "stack", "local", "endpoint", srv.Endpoint)
		return o, nil
	case "containers":
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		c, err := compose.StartContainer(ctx, compose.ContainerOptions{Image: s.minioImage,
			LogPath: filepath.Join(dir, "store.log"), Logger: log})
		if err != nil {
			_ = os.Remove(filepath.Join(dir, "store.log"))
			_ = os.Remove(dir) // only when empty: a run folder that never held a run
			return nil, err
		}
		r.add(c.SecretKey)
		release := held.hold("the MinIO container " + c.ID())
		o.env, o.stop = runner.ContainerEnv{Container: c}, func() { c.Stop(); release() }
		log.Info("store started", "stack", "containers", "endpoint", c.Endpoint, "image", c.Image, "container", c.ID())
		return o, nil
	case "external":
		return s.openExternal(ctx, runID, log, r, o)
	default:
		return nil, badStack("--stack %q: want local, containers or external", s.stack)
	}
}

func (s *stackFlags) openExternal(ctx context.Context, runID string, log *slog.Logger, r *redactor, o *openedStack) (*openedStack, error) {
	cfg := store.Config{
		Endpoint:  firstSet(s.endpoint, os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL")),
		Region:    firstSet(s.region, os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION")),
		Bucket:    firstSet(s.bucket, os.Getenv("FENCEBENCH_BUCKET")),
		AccessKey: s.accessKey,
		SecretKey: s.secretKey,
	}
	if s.accessKey == "" && s.profile == "" {
		// The environment's keys, unless the flags or an explicit profile say otherwise.
		cfg.AccessKey, cfg.SecretKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		if cfg.AccessKey != "" && cfg.SecretKey != "" {
			cfg.SessionToken = os.Getenv("AWS_SESSION_TOKEN")
		}
	}
	if cfg.Bucket == "" {
		return nil, badStack("--stack external needs --bucket (or $FENCEBENCH_BUCKET)")
	}
	if (s.accessKey == "") != (s.secretKey == "") {
		return nil, badStack("--access-key and --secret-key go together")
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" || cfg.Region == "" {
		// The shared configuration: profiles, SSO, web identity, instance roles.
		var opts []func(*awsconfig.LoadOptions) error
		if s.profile != "" {
			opts = append(opts, awsconfig.WithSharedConfigProfile(s.profile))
		}
		ac, err := awsconfig.LoadDefaultConfig(ctx, opts...)
		if err != nil {
			return nil, badStack("AWS configuration: %v", err)
		}
		if cfg.Region == "" {
			cfg.Region = ac.Region
		}
		if cfg.AccessKey == "" || cfg.SecretKey == "" {
			if ac.Credentials == nil {
				return nil, badStack("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --profile")
			}
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			creds, err := ac.Credentials.Retrieve(cctx)
			cancel()
			if err != nil {
				return nil, badStack("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --profile (%v)", err)
			}
			cfg.AccessKey, cfg.SecretKey, cfg.SessionToken = creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken
		}
	}
	// The access key id is not a secret (and often an ordinary word): only the secret key and
	// the session token are redacted.
	r.add(cfg.SecretKey)
	r.add(cfg.SessionToken)
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = "https://s3." + cfg.Region + ".amazonaws.com"
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, badStack("--endpoint is not a URL")
	}
	aws := strings.HasSuffix(u.Hostname(), ".amazonaws.com")
	switch s.addressing {
	case "path":
		cfg.PathStyle = true
	case "virtual":
	case "auto":
		cfg.PathStyle = !aws
	default:
		return nil, badStack("--addressing %q: want path, virtual or auto", s.addressing)
	}
	if s.caFile != "" {
		pem, err := os.ReadFile(s.caFile)
		if err != nil {
			return nil, badStack("--ca-file: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, badStack("--ca-file %s holds no PEM certificate", s.caFile)
		}
	}
	server := "S3-compatible store"
	if aws {
		server = "AWS S3"
	}
	env, err := runner.NewExternalEnv(cfg, server)
	if err != nil {
		return nil, badStack("%v", err)
	}
	if s.createBucket {
		bctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := compose.MakeBucket(bctx, env.Config())
		cancel()
		if err != nil {
			return nil, err
		}
	}
	if o.prefix == "" {
		o.prefix = "fencebench/" + runID + "/"
	}
	o.env, o.cleanup = env, !s.keep
	if o.cleanup {
		o.stop = held.hold(fmt.Sprintf("the run's objects under s3://%s/%s", cfg.Bucket, o.prefix))
	}
	log.Info("store", "stack", "external", "endpoint", env.Info().Endpoint, "bucket", cfg.Bucket, "region", cfg.Region,
		"path_style", cfg.PathStyle, "prefix", o.prefix, "cleanup", o.cleanup)
	return o, nil
}

type errBadStack struct{ msg string }

func (e errBadStack) Error() string { return e.msg }

func badStack(format string, a ...any) error { return errBadStack{fmt.Sprintf(format, a...)} }

func isBadStack(err error) bool {
	var b errBadStack
	return errors.As(err, &b)
}

func firstSet(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
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
