package runner

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
)

// LocalEnv adapts an embedded MinIO to Env.
type LocalEnv struct{ *compose.Local }

// Upstream implements Env.
func (l LocalEnv) Upstream() string { return l.Addr() }

// Info implements Env.
func (l LocalEnv) Info() StoreInfo {
	return StoreInfo{Stack: "local", Endpoint: l.Endpoint, Server: "MinIO " + minioVersion(), Bucket: l.Bucket}
}

// LogPath implements Env.
func (l LocalEnv) LogPath() string { return l.Local.LogPath }

func minioVersion() string { return strings.TrimPrefix(compose.MinIOPin, "github.com/minio/minio@") }

// ContainerEnv adapts a MinIO container started with testcontainers-go to Env.
type ContainerEnv struct{ *compose.Container }

// Upstream implements Env.
func (c ContainerEnv) Upstream() string { return c.Addr() }

// Info implements Env.
func (c ContainerEnv) Info() StoreInfo {
	server := "MinIO (image " + c.Image + ")"
	if c.Image == compose.MinIOImage {
		server = "MinIO " + minioVersion() + " (image " + c.Image + ")"
	}
	return StoreInfo{Stack: "containers", Endpoint: c.Endpoint, Server: server, Bucket: c.Bucket}
}

// LogPath implements Env.
func (c ContainerEnv) LogPath() string { return c.Container.LogPath }

// ExternalEnv is an S3 endpoint the bench does not manage: a MinIO cluster, AWS S3, another
// S3-compatible store. Its configuration holds credentials, so it is kept unexported and the
// value prints without them.
type ExternalEnv struct {
	cfg      store.Config
	upstream string
	server   string
	probe    store.Store // a direct client with a short timeout, for Probe
}

// NewExternalEnv checks cfg and wraps it. The endpoint must be an http or https URL with a
// host and nothing else: credentials in the URL (user:password@) are refused, so they cannot
// reach a report or a log through it. server describes the store in reports ("" means "S3").
func NewExternalEnv(cfg store.Config, server string) (*ExternalEnv, error) {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil {
		return nil, errors.New("runner: the endpoint is not a URL")
	}
	if u.User != nil {
		return nil, errors.New("runner: the endpoint URL carries credentials (user:password@); give them as access and secret keys instead")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("runner: endpoint %s: want http://host[:port] or https://host[:port]", u.Redacted())
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("runner: endpoint %s://%s: want no path, query or fragment", u.Scheme, u.Host)
	}
	if cfg.Bucket == "" {
		return nil, errors.New("runner: no bucket")
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
	pcfg.Timeout, pcfg.MaxAttempts = probeTimeout, 1
	probe, err := store.New(store.ClientMinio, pcfg)
	if err != nil {
		return nil, fmt.Errorf("runner: store client: %w", err)
	}
	return &ExternalEnv{cfg: cfg, upstream: net.JoinHostPort(u.Hostname(), port), server: server, probe: probe}, nil
}

// Config implements Env.
func (e *ExternalEnv) Config() store.Config { return e.cfg }

// Upstream implements Env.
func (e *ExternalEnv) Upstream() string { return e.upstream }

// Info implements Env.
func (e *ExternalEnv) Info() StoreInfo {
	return StoreInfo{Stack: "external", Endpoint: e.cfg.Endpoint, Server: e.server, Bucket: e.cfg.Bucket}
}

// LogPath implements Env: an external store's log is not the bench's to read.
func (e *ExternalEnv) LogPath() string { return "" }

// How an external store is probed: a read of a key nobody writes, probeTries times, each
// bounded by probeTimeout, probePause apart.
const (
	probeKey     = ".fencebench-alive"
	probeTries   = 3
	probeTimeout = 2 * time.Second
	probePause   = 300 * time.Millisecond
)

// Alive implements Env: Probe, bounded.
func (e *ExternalEnv) Alive() bool {
	ctx, cancel := context.WithTimeout(context.Background(), probeTries*(probeTimeout+probePause))
	defer cancel()
	return e.Probe(ctx) == nil
}

// Probe reads a key that does not exist, directly (no fault path). Any answer of the store
// (not found, access denied) shows it reachable; only a transport error, a timeout or a 5xx
// on every one of a few tries makes it unreachable, and the error says what the last try met.
func (e *ExternalEnv) Probe(ctx context.Context) error {
	var err error
	for try := 1; try <= probeTries; try++ {
		tctx, cancel := context.WithTimeout(ctx, probeTimeout)
		_, err = e.probe.Get(tctx, probeKey)
		cancel()
		if err == nil || !errors.Is(err, store.ErrAmbiguous) {
			return nil
		}
		if try < probeTries {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s: %w (%v)", e.cfg.Endpoint, ctx.Err(), err)
			case <-time.After(probePause):
			}
		}
	}
	return fmt.Errorf("no answer from %s in %d tries: %w", e.cfg.Endpoint, probeTries, err)
}

// String describes the store without credentials.
func (e *ExternalEnv) String() string { return "external store " + e.cfg.String() }

// upstreamTLS is how the fault paths reach an HTTPS store: verified with the run's trust
// (the user's CA, else the system roots) under the endpoint's host name. nil for plain HTTP.
func upstreamTLS(cfg store.Config) *tls.Config {
	u, err := url.Parse(cfg.Endpoint)
	if err != nil || u.Scheme != "https" {
		return nil
	}
	return &tls.Config{RootCAs: cfg.RootCAs, ServerName: u.Hostname(), MinVersion: tls.VersionTLS12}
}

// prober is an Env that can say why its store is unreachable.
type prober interface {
	Probe(ctx context.Context) error
}

// aliveAfter asks env once more after pause: one failed look at a container's state is not
// yet a dead store.
func aliveAfter(ctx context.Context, env Env, pause time.Duration) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(pause):
	}
	return env.Alive()
}

// watchEvery is how often the store is checked while a cell runs.
const watchEvery = time.Second

// checkStore reports, as a harness error, a store that is unreachable now.
func (r *runner) checkStore(ctx context.Context) error {
	if p, ok := r.env.(prober); ok {
		if err := p.Probe(ctx); err != nil {
			return fmt.Errorf("the store became unreachable: %w", err)
		}
		return nil
	}
	if !r.env.Alive() && !aliveAfter(ctx, r.env, probePause) {
		where := ""
		if lp := r.env.LogPath(); lp != "" {
			where = "; see store.log"
		}
		return errors.New("the store became unreachable: it is no longer running" + where)
	}
	return nil
}

// watchStore checks the store every watchEvery while a cell runs. It returns the cell's
// context, cancelled as soon as the store is found unreachable, and stop, which ends the
// watch, checks the store once more and returns why it is unreachable (nil when it answers).
func (r *runner) watchStore(ctx context.Context) (context.Context, func() error) {
	cctx, cancel := context.WithCancelCause(ctx)
	wctx, endWatch := context.WithCancel(context.WithoutCancel(ctx))
	var down error
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			if err := r.checkStore(wctx); err != nil && wctx.Err() == nil {
				down = err
				cancel(err)
				return
			}
		}
	}()
	return cctx, func() error {
		endWatch()
		<-done
		cancel(nil)
		if down != nil {
			return down
		}
		fctx, cancelFinal := context.WithTimeout(context.WithoutCancel(ctx), probeTries*(probeTimeout+probePause))
		defer cancelFinal()
		return r.checkStore(fctx)
	}
}
