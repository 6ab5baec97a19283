package env

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// Env is the object store a run or a certification talks to.
type Env interface {
	// Config is how clients reach the bucket (credentials included; never printed).
	Config() store.Config
	// Upstream is the host:port the fault paths forward to.
	Upstream() string
	// Info describes the store for reports, without credentials.
	Info() store.Info
	// LogPath is the store's log file, "" when there is none.
	LogPath() string
	// Alive reports whether the store is still up and answering; a store that died or became
	// unreachable is a harness error.
	Alive() bool
}

// Prober is an Env that can say why its store is unreachable.
type Prober interface {
	Probe(ctx context.Context) error
}

// Local adapts an embedded MinIO to Env. It is also a StoreFaults.
type Local struct{ *compose.Local }

// MaxDrives is the most drives a local MinIO runs on: one erasure set.
const MaxDrives = 16

// StoreFaults is a store the bench runs itself and can fault from inside: take a drive away
// (1-based), put it back, kill and restart the server on the same address and data.
type StoreFaults interface {
	Drives() int
	DriveOffline(i int) error
	DriveOnline(i int) error
	Restart(ctx context.Context, down time.Duration) error
}

// DriveSlower is a store whose drives can be slowed: a local MinIO whose drives are served
// through FUSE (Slowable). DriveSlow makes every operation on drive i (1-based) wait delay; 0
// makes it fast again.
type DriveSlower interface {
	Slowable() bool
	DriveSlow(i int, delay time.Duration) error
}

// Upstream implements Env.
func (l Local) Upstream() string { return l.Addr() }

// Info implements Env.
func (l Local) Info() store.Info {
	server := "MinIO " + minioVersion()
	if n := l.Drives(); n > 1 {
		server += fmt.Sprintf(" (erasure-coded, %d drives)", n)
	}
	return store.Info{Stack: "local", Endpoint: l.Endpoint, Server: server, Bucket: l.Bucket}
}

// LogPath implements Env.
func (l Local) LogPath() string { return l.Local.LogPath }

func minioVersion() string { return strings.TrimPrefix(compose.MinIOPin, "github.com/minio/minio@") }

// Container adapts a MinIO container started with testcontainers-go to Env.
type Container struct{ *compose.Container }

// Upstream implements Env.
func (c Container) Upstream() string { return c.Addr() }

// Info implements Env.
func (c Container) Info() store.Info {
	server := "MinIO (image " + c.Image + ")"
	if c.Image == compose.MinIOImage {
		server = "MinIO " + minioVersion() + " (image " + c.Image + ")"
	}
	return store.Info{Stack: "containers", Endpoint: c.Endpoint, Server: server, Bucket: c.Bucket}
}

// LogPath implements Env.
func (c Container) LogPath() string { return c.Container.LogPath }

// External is an S3 endpoint the bench does not manage: a MinIO cluster, AWS S3, another
// S3-compatible store. Its configuration holds credentials, so it is kept unexported and the
// value prints without them.
type External struct {
	cfg      store.Config
	upstream string
	server   string
	probeKey string      // the run's claim marker: the probe reads inside the run's prefix
	probe    store.Store // a direct client with a short timeout, for Probe
}

// NewExternal checks cfg and wraps it. The endpoint must be an http or https URL with a
// host and nothing else: credentials in the URL (user:password@) are refused, so they cannot
// reach a report or a log through it. server describes the store in reports ("" means "S3").
// prefix is the run's key prefix (see store.ValidatePrefix): Probe reads the run's claim
// marker there and never a key outside it.
func NewExternal(cfg store.Config, server, prefix string) (*External, error) {
	if err := store.ValidatePrefix(prefix); err != nil {
		return nil, fmt.Errorf("env: %w", err)
	}
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, errors.New("env: the endpoint is not a URL")
	}
	if u.User != nil {
		return nil, errors.New("env: the endpoint URL carries credentials (user:password@); give them as access and secret keys instead")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("env: endpoint %s: want http://host[:port] or https://host[:port]", u.Redacted())
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("env: endpoint %s://%s: want no path, query or fragment", u.Scheme, u.Host)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("env: no bucket")
	}
	port := u.Port()
	if port == "" {
		port = "80"
		if u.Scheme == "https" {
			port = "443"
		}
	}
	cfg.Endpoint = u.Scheme + "://" + u.Host
	if server == "" {
		server = "S3"
	}
	pcfg := cfg
	pcfg.Timeout, pcfg.MaxAttempts = ProbeTimeout, 1
	probe, err := s3store.New(store.ClientMinio, pcfg)
	if err != nil {
		return nil, fmt.Errorf("env: store client: %w", err)
	}
	return &External{cfg: cfg, upstream: net.JoinHostPort(u.Hostname(), port), server: server,
		probeKey: prefix + store.MarkerName, probe: probe}, nil
}

// Config implements Env.
func (e *External) Config() store.Config { return e.cfg }

// Upstream implements Env.
func (e *External) Upstream() string { return e.upstream }

// Info implements Env.
func (e *External) Info() store.Info {
	return store.Info{Stack: "external", Endpoint: e.cfg.Endpoint, Server: e.server, Bucket: e.cfg.Bucket}
}

// LogPath implements Env: an external store's log is not the bench's to read.
func (e *External) LogPath() string { return "" }

// How an external store is probed: a read of the run's claim marker, ProbeTries times, each
// bounded by ProbeTimeout, ProbePause apart; ProbeBudget bounds the whole probe.
const (
	ProbeTries   = 3
	ProbeTimeout = 2 * time.Second
	ProbePause   = 300 * time.Millisecond
	ProbeBudget  = ProbeTries * (ProbeTimeout + ProbePause)
)

// Alive implements Env: Probe, bounded.
func (e *External) Alive() bool {
	ctx, cancel := context.WithTimeout(context.Background(), ProbeBudget)
	defer cancel()
	return e.Probe(ctx) == nil
}

// Probe reads the run's claim marker (inside the run's prefix), directly (no fault path).
// Any answer of the store (the marker, not found before the claim, access denied) shows it
// reachable; only a transport error, a timeout or a 5xx
// on every one of a few tries makes it unreachable, and the error says what the last try met.
func (e *External) Probe(ctx context.Context) error {
	var err error
	for try := 1; try <= ProbeTries; try++ {
		tctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
		_, err = e.probe.Get(tctx, e.probeKey)
		cancel()
		if err == nil || !errors.Is(err, store.ErrAmbiguous) {
			return nil
		}
		if try < ProbeTries {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w (%v)", e.cfg.Endpoint, ctx.Err(), err)
			case <-time.After(ProbePause):
			}
		}
	}
	return fmt.Errorf("no answer from %s in %d tries: %w", e.cfg.Endpoint, ProbeTries, err)
}

// String describes the store without credentials.
func (e *External) String() string { return "external store " + e.cfg.String() }

// UpstreamTLS is how the fault paths reach an HTTPS store: verified with the run's trust
// (the user's CA, else the system roots) under the endpoint's host name. nil for plain HTTP.
func UpstreamTLS(cfg store.Config) *tls.Config {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Scheme != "https" {
		return nil
	}
	return &tls.Config{RootCAs: cfg.RootCAs, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
}
