package runner

import (
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strings"

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
	return &ExternalEnv{cfg: cfg, upstream: net.JoinHostPort(u.Hostname(), port), server: server}, nil
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

// Alive implements Env: the bench cannot watch an external store; its failures show as
// harness errors of the calls that met them.
func (e *ExternalEnv) Alive() bool { return true }

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
