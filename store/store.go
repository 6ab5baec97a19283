package store

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

// Store is the object-store surface a fencing protocol needs. Every method is safe for
// concurrent use. Keys are full object keys inside the configured bucket.
type Store interface {
	// Get returns the object's body and ETag. A missing key yields ErrNotFound.
	Get(ctx context.Context, key string) (Object, error)
	// Put writes body unconditionally and returns the new ETag.
	Put(ctx context.Context, key string, body []byte) (etag string, err error)
	// PutIfAbsent writes body only when key does not exist (If-None-Match: *). An existing
	// key yields ErrPreconditionFailed.
	PutIfAbsent(ctx context.Context, key string, body []byte) (etag string, err error)
	// PutIfMatch writes body only when the key's current ETag equals etag (If-Match). A
	// different ETag yields ErrPreconditionFailed; a missing key yields ErrNotFound on MinIO and
	// AWS (some stores answer ErrPreconditionFailed).
	PutIfMatch(ctx context.Context, key string, body []byte, etag string) (newETag string, err error)
	// Delete removes key unconditionally. Deleting a missing key succeeds.
	Delete(ctx context.Context, key string) error
	// DeleteMany removes keys in batches. S3 reports per-key failures inside a 200 response;
	// they come back in the returned slice (one entry per key that was not deleted), while err
	// reports a failure of the call as a whole.
	DeleteMany(ctx context.Context, keys []string) (failed []KeyError, err error)
	// List returns every object whose key starts with prefix, across all pages, in ascending
	// byte order of the key.
	List(ctx context.Context, prefix string) ([]Entry, error)
}

// Object is a key's body and ETag as read from the store.
type Object struct {
	Body []byte
	ETag string
}

// Entry is one object in a listing.
type Entry struct {
	Key  string
	ETag string
	Size int64
}

// KeyError is a per-key failure reported by DeleteMany.
type KeyError struct {
	Key string
	Err error
}

func (k KeyError) Error() string { return fmt.Sprintf("%s: %v", k.Key, k.Err) }

// Sentinel errors. Every error returned by a Store wraps exactly one of them.
var (
	// ErrPreconditionFailed is returned when the store refused a conditional write because its
	// condition did not hold (HTTP 412, or the S3 code PreconditionFailed on any status). The
	// write was not applied.
	ErrPreconditionFailed = errors.New("precondition failed")
	// ErrNotFound is returned when the key does not exist (404 NoSuchKey), including an
	// If-Match write to a key that was deleted.
	ErrNotFound = errors.New("not found")
	// ErrConflict is returned for 409 ConditionalRequestConflict: a concurrent operation
	// interfered; AWS documents that the write was not applied, but callers treat the outcome
	// as unknown and re-read.
	ErrConflict = errors.New("conditional request conflict")
	// ErrAmbiguous is returned when the outcome is unknown: transport errors, timeouts, lost
	// responses, 5xx and any answer not classified otherwise. The write may or may not have
	// been applied.
	ErrAmbiguous = errors.New("ambiguous outcome")
	// ErrConfig is returned for answers that mean the bench is misconfigured rather than
	// fenced (NoSuchBucket, bad credentials, access denied). It is a harness problem.
	ErrConfig = errors.New("store configuration error")
)

// Error is the classified error every adapter returns. Kind is one of the sentinels above.
type Error struct {
	Op        string // "get", "put", "put-if-absent", "put-if-match", "delete", "delete-many", "list"
	Key       string
	Kind      error
	Status    int    // HTTP status, 0 when no response arrived
	Code      string // S3 error code, "" when none
	RequestID string
	Err       error // the underlying SDK or transport error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s: %v", e.Op, e.Key, e.Kind)
	if e.Status != 0 || e.Code != "" {
		fmt.Fprintf(&b, " (HTTP %d %s", e.Status, e.Code)
		if e.RequestID != "" {
			fmt.Fprintf(&b, ", request %s", e.RequestID)
		}
		b.WriteString(")")
	}
	if e.Err != nil && e.Status == 0 {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap exposes both the sentinel kind and the underlying cause to errors.Is/As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// Classify maps an HTTP status and S3 error code to a sentinel. status 0 means no response
// was received (a transport error), which is always ambiguous.
func Classify(status int, code string) error {
	switch {
	case code == "PreconditionFailed" || status == http.StatusPreconditionFailed:
		return ErrPreconditionFailed
	case code == "NoSuchBucket", code == "InvalidAccessKeyId", code == "SignatureDoesNotMatch",
		code == "AccessDenied", code == "InvalidBucketName", code == "AuthorizationHeaderMalformed":
		return ErrConfig
	case code == "NoSuchKey", status == http.StatusNotFound && code == "":
		return ErrNotFound
	case code == "ConditionalRequestConflict":
		return ErrConflict
	default:
		return ErrAmbiguous
	}
}

// Client names a store adapter.
type Client string

// The adapters.
const (
	ClientMinio Client = "minio-go"
	ClientAWS   Client = "aws-sdk"
)

// Clients lists every adapter, in a stable order.
var Clients = []Client{ClientMinio, ClientAWS}

// Config describes how to reach a bucket. It never appears in logs: String redacts secrets.
type Config struct {
	Endpoint  string // base URL, e.g. http://127.0.0.1:9000
	Region    string // defaults to us-east-1
	Bucket    string
	AccessKey string
	SecretKey string
	// SessionToken is the temporary credentials' token (AWS_SESSION_TOKEN), "" for long-term
	// keys. Like SecretKey it is never printed.
	SessionToken string
	// PathStyle selects path-style addressing (bucket in the path). MinIO needs it.
	PathStyle bool
	// Timeout bounds every call; 0 means 10s.
	Timeout time.Duration
	// MaxAttempts is the SDK's attempt count per call. 0 and 1 mean a single attempt (retries
	// off), which is what fencing requires; larger values exist only to demonstrate the
	// sdk-retries protocol variant.
	MaxAttempts int
	// DialContext, when set, is used by the adapter's transport to open connections: the
	// request still names the real endpoint (Host header and signature stay valid) but the
	// bytes travel the caller's path, e.g. a per-writer fault path.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
	// RootCAs, when set, are the only certificate authorities an https Endpoint is verified
	// against (a private CA, or a fault path's run-local CA); nil means the system roots.
	RootCAs *x509.CertPool
	// Transport, when set, replaces the adapter's transport entirely (DialContext and RootCAs
	// are then ignored). Used by tests that wrap a transport.
	Transport http.RoundTripper
}

// String describes the config without credentials.
func (c Config) String() string {
	return fmt.Sprintf("endpoint=%s bucket=%s region=%s", c.Endpoint, c.Bucket, c.RegionOrDefault())
}

// RegionOrDefault is the region to sign with: Region, or us-east-1.
func (c Config) RegionOrDefault() string {
	if c.Region == "" {
		return "us-east-1"
	}
	return c.Region
}

// CallTimeout is the bound on every call: Timeout, or 10s.
func (c Config) CallTimeout() time.Duration {
	if c.Timeout <= 0 {
		return 10 * time.Second
	}
	return c.Timeout
}

// Attempts is the SDK attempt count per call, at least 1.
func (c Config) Attempts() int {
	if c.MaxAttempts < 1 {
		return 1
	}
	return c.MaxAttempts
}

// NewTransport returns the HTTP transport adapters use when Config.Transport is nil: no
// proxy from the environment, small idle pool, the given dialer.
func NewTransport(dial func(ctx context.Context, network, addr string) (net.Conn, error)) *http.Transport {
	if dial == nil {
		dial = (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	}
	return &http.Transport{
		Proxy:                 nil,
		DialContext:           dial,
		MaxIdleConns:          64,
		MaxIdleConnsPerHost:   64,
		IdleConnTimeout:       30 * time.Second,
		TLSHandshakeTimeout:   5 * time.Second,
		ExpectContinueTimeout: time.Second,
		DisableCompression:    true,
	}
}

// RoundTripper is the transport an adapter uses: Transport, or a [NewTransport] over
// DialContext that trusts RootCAs.
func (c Config) RoundTripper() http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	t := NewTransport(c.DialContext)
	if c.RootCAs != nil {
		t.TLSClientConfig = &tls.Config{RootCAs: c.RootCAs, MinVersion: tls.VersionTLS12}
	}
	return t
}

// HTTPClient returns a plain HTTP client with the config's transport (its dialer and trust),
// for the few calls outside the Store interface (health checks, bucket creation).
func (c Config) HTTPClient(timeout time.Duration) *http.Client {
	return &http.Client{Timeout: timeout, Transport: c.RoundTripper()}
}

// NormalizeETag strips the surrounding double quotes S3 puts around ETags, so tokens from
// Put and from Get compare equal.
func NormalizeETag(etag string) string {
	return strings.Trim(etag, `"`)
}

// QuoteETag is the If-Match form of a token: quoted, except the wildcard.
func QuoteETag(etag string) string {
	if etag == "*" {
		return etag
	}
	return `"` + NormalizeETag(etag) + `"`
}

// Ambiguous wraps a transport-level failure (no response received).
func Ambiguous(op, key string, err error) *Error {
	return &Error{Op: op, Key: key, Kind: ErrAmbiguous, Err: err}
}
