package env

import (
	"context"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
)

// Options choose and describe the store of a run or a certification: what the command line
// says, before any default from the environment is applied.
type Options struct {
	// Stack is local, containers, external or sim.
	Stack string
	// Speed is the sim stack's clock: 0 virtual time, else scenario seconds per real second.
	Speed float64
	// Prefix is the key prefix the run confines itself to; "" means "<run-id>/" (external:
	// "fencebench/<run-id>/").
	Prefix string
	// Keep leaves an external store's run objects in place.
	Keep bool
	// MinIOImage is the containers stack's image ("" means compose.MinIOImage).
	MinIOImage string
	// Drives is the local stack's drive count: 0 or 1 runs MinIO on one folder, 2 to
	// MaxDrives as an erasure-coded server over that many folders.
	Drives int
	// Endpoint, Region, Bucket, Profile, AccessKey, SecretKey, CAFile, Addressing and
	// CreateBucket describe an external store; each falls back to the AWS environment.
	Endpoint     string
	Region       string
	Bucket       string
	Profile      string
	AccessKey    string
	SecretKey    string
	CAFile       string
	Addressing   string
	CreateBucket bool
	// Server says what an external store runs (its software and release), as reports name
	// it; "" means "S3-compatible store" ("AWS S3" for an AWS endpoint).
	Server string

	// Secret, when set, is told every credential the store is reached with, so that the
	// caller can keep it out of everything it prints.
	Secret func(string)
	// Hold, when set, is told what the opened store would leave behind if the process died;
	// the returned release is called once it no longer would.
	Hold func(what string) (release func())
}

// Opened is the store of a run and what to undo afterwards.
type Opened struct {
	Env Env
	// Prefix is the run's key prefix, defaults applied.
	Prefix string
	// Cleanup says whether the run deletes its objects when it ends (an external store).
	Cleanup bool
	// Stop stops what Open started; it is never nil.
	Stop func()
}

// badf is an option the store cannot be opened with.
func badf(format string, a ...any) error { return outcome.BadInput(fmt.Errorf(format, a...)) }

// Open prepares the chosen stack for the run runID. dir is the run's results folder (for the
// store's log). A bad option wraps outcome.ErrBadInput; a store that cannot be started or
// reached is any other error.
func Open(ctx context.Context, o Options, runID, dir string, log *slog.Logger) (*Opened, error) {
	o.defaults()
	if o.Prefix != "" {
		if err := store.ValidatePrefix(o.Prefix); err != nil {
			return nil, badf("--prefix: %v", err)
		}
	}
	if o.Stack != "external" {
		// In the order of the flags, so the message names the same one every time.
		for _, f := range [][2]string{{"endpoint", o.Endpoint}, {"region", o.Region}, {"bucket", o.Bucket}, {"profile", o.Profile},
			{"access-key", o.AccessKey}, {"secret-key", o.SecretKey}, {"ca-file", o.CAFile}} {
			if f[1] != "" {
				return nil, badf("--%s applies to --stack external only", f[0])
			}
		}
	}
	if o.Drives < 0 || o.Drives > MaxDrives {
		return nil, badf("--drives %d: want 1 to %d", o.Drives, MaxDrives)
	}
	if o.Drives > 1 && o.Stack != "local" {
		return nil, badf("--drives applies to --stack local only")
	}
	if o.MinIOImage != "" && o.Stack != "containers" {
		return nil, badf("--minio-image applies to --stack containers only")
	}
	op := &Opened{Prefix: o.Prefix, Stop: func() {}}
	if op.Prefix == "" {
		op.Prefix = runID + "/"
	}
	switch o.Stack {
	case "local":
		srv, err := compose.StartLocal(ctx, compose.LocalOptions{LogPath: filepath.Join(dir, "store.log"), Drives: o.Drives})
		if err != nil {
			return nil, fmt.Errorf("start the embedded MinIO: %w", err)
		}
		o.Secret(srv.SecretKey)
		release := o.Hold("the embedded MinIO's data folder " + srv.DataDir())
		op.Env, op.Stop = Local{Local: srv}, func() { srv.Stop(); release() }
		log.Info("store started", "stack", "local", "endpoint", srv.Endpoint, "drives", srv.Drives())
		return op, nil
	case "containers":
		return openContainer(ctx, o, dir, log, op)
	case "sim":
		// The in-memory store lives as long as the process: a run deletes what it wrote once
		// its reports are written, so rounds of stability runs do not pile up in memory.
		op.Env, op.Cleanup = NewSim(o.Speed), true
		log.Info("store started", "stack", "sim", "clock", op.Env.(*Sim).Clock().String())
		return op, nil
	case "external":
		if o.Prefix == "" {
			op.Prefix = "fencebench/" + runID + "/"
		}
		return openExternal(ctx, o, log, op)
	default:
		return nil, badf("--stack %q: want local, containers, external or sim", o.Stack)
	}
}

func (o *Options) defaults() {
	if o.Stack == "" {
		o.Stack = "local"
	}
	if o.Addressing == "" {
		o.Addressing = "auto"
	}
	if o.Secret == nil {
		o.Secret = func(string) {}
	}
	if o.Hold == nil {
		o.Hold = func(string) func() { return func() {} }
	}
}

func openContainer(ctx context.Context, o Options, dir string, log *slog.Logger, op *Opened) (*Opened, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	c, err := compose.StartContainer(ctx, compose.ContainerOptions{Image: o.MinIOImage,
		LogPath: filepath.Join(dir, "store.log"), Logger: log})
	if err != nil {
		_ = os.Remove(filepath.Join(dir, "store.log"))
		_ = os.Remove(dir) // only when empty: a run folder that never held a run
		return nil, err
	}
	o.Secret(c.SecretKey)
	release := o.Hold("the MinIO container " + c.ID())
	op.Env, op.Stop = Container{Container: c}, func() { c.Stop(); release() }
	log.Info("store started", "stack", "containers", "endpoint", c.Endpoint, "image", c.Image, "container", c.ID())
	return op, nil
}

func openExternal(ctx context.Context, o Options, log *slog.Logger, op *Opened) (*Opened, error) {
	cfg, err := externalConfig(ctx, o)
	if err != nil {
		return nil, err
	}
	// The access key id is not a secret (and often an ordinary word): only the secret key and
	// the session token are redacted.
	o.Secret(cfg.SecretKey)
	o.Secret(cfg.SessionToken)
	aws, err := addressing(&cfg, o)
	if err != nil {
		return nil, err
	}
	server := "S3-compatible store"
	if aws {
		server = "AWS S3"
	}
	if o.Server != "" {
		server = o.Server
	}
	e, err := NewExternal(cfg, server, op.Prefix)
	if err != nil {
		return nil, badf("%v", err)
	}
	if o.CreateBucket {
		bctx, cancel := context.WithTimeout(ctx, time.Minute)
		err := compose.MakeBucket(bctx, e.Config())
		cancel()
		if err != nil {
			return nil, err
		}
	}
	op.Env, op.Cleanup = e, !o.Keep
	if op.Cleanup {
		op.Stop = o.Hold(fmt.Sprintf("the run's objects under s3://%s/%s", cfg.Bucket, op.Prefix))
	}
	log.Info("store", "stack", "external", "endpoint", e.Info().Endpoint, "bucket", cfg.Bucket, "region", cfg.Region,
		"path_style", cfg.PathStyle, "prefix", op.Prefix, "cleanup", op.Cleanup)
	return op, nil
}

// externalConfig is the external store's configuration from the options, then the AWS
// environment, then the shared AWS configuration (profiles, SSO, web identity, instance
// roles).
func externalConfig(ctx context.Context, o Options) (store.Config, error) {
	cfg := store.Config{
		Endpoint:  firstSet(o.Endpoint, os.Getenv("AWS_ENDPOINT_URL_S3"), os.Getenv("AWS_ENDPOINT_URL")),
		Region:    firstSet(o.Region, os.Getenv("AWS_REGION"), os.Getenv("AWS_DEFAULT_REGION")),
		Bucket:    firstSet(o.Bucket, os.Getenv("FENCEBENCH_BUCKET")),
		AccessKey: o.AccessKey,
		SecretKey: o.SecretKey,
	}
	if o.AccessKey == "" && o.Profile == "" {
		// The environment's keys, unless the options or an explicit profile say otherwise.
		cfg.AccessKey, cfg.SecretKey = os.Getenv("AWS_ACCESS_KEY_ID"), os.Getenv("AWS_SECRET_ACCESS_KEY")
		if cfg.AccessKey != "" && cfg.SecretKey != "" {
			cfg.SessionToken = os.Getenv("AWS_SESSION_TOKEN")
		}
	}
	if cfg.Bucket == "" {
		return cfg, badf("--stack external needs --bucket (or $FENCEBENCH_BUCKET)")
	}
	if (o.AccessKey == "") != (o.SecretKey == "") {
		return cfg, badf("--access-key and --secret-key go together")
	}
	if cfg.AccessKey != "" && cfg.SecretKey != "" && cfg.Region != "" {
		return cfg, nil
	}
	var opts []func(*awsconfig.LoadOptions) error
	if o.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(o.Profile))
	}
	ac, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, badf("AWS configuration: %v", err)
	}
	if cfg.Region == "" {
		cfg.Region = ac.Region
	}
	if cfg.AccessKey == "" || cfg.SecretKey == "" {
		if ac.Credentials == nil {
			return cfg, badf("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --profile")
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		creds, err := ac.Credentials.Retrieve(cctx)
		cancel()
		if err != nil {
			return cfg, badf("no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or --profile (%v)", err)
		}
		cfg.AccessKey, cfg.SecretKey, cfg.SessionToken = creds.AccessKeyID, creds.SecretAccessKey, creds.SessionToken
	}
	return cfg, nil
}

// addressing completes cfg's region, endpoint, addressing style and trusted CAs, and says
// whether the endpoint is AWS S3.
func addressing(cfg *store.Config, o Options) (aws bool, err error) {
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = "https://s3." + cfg.Region + ".amazonaws.com"
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return false, badf("--endpoint is not a URL")
	}
	aws = strings.HasSuffix(u.Hostname(), ".amazonaws.com")
	switch o.Addressing {
	case "path":
		cfg.PathStyle = true
	case "virtual":
	case "auto":
		cfg.PathStyle = !aws
	default:
		return false, badf("--addressing %q: want path, virtual or auto", o.Addressing)
	}
	if o.CAFile != "" {
		pem, err := os.ReadFile(o.CAFile)
		if err != nil {
			return false, badf("--ca-file: %v", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return false, badf("--ca-file %s holds no PEM certificate", o.CAFile)
		}
	}
	return aws, nil
}

func firstSet(xs ...string) string {
	for _, x := range xs {
		if x != "" {
			return x
		}
	}
	return ""
}
