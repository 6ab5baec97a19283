package netpath

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
)

// ErrClosed is returned by operations on a closed [Bench] or its paths.
var ErrClosed = errors.New("faults: bench closed")

// Options configure a [Bench].
type Options struct {
	// Upstream is the store's host:port, reached over plain HTTP (e.g. a local MinIO) unless
	// UpstreamTLS is set.
	Upstream string
	// UpstreamTLS, when set, makes the store an HTTPS endpoint. The proxy then re-originates
	// TLS to Upstream with this configuration (its RootCAs are the user's trust, nil meaning the
	// system roots; its ServerName, the endpoint's host name, "" meaning Upstream's host), and
	// every faults.L7 listener terminates TLS with a certificate for that host name signed by CA.
	// Clients of the paths must then trust [Bench.RootCAs] and nothing else.
	UpstreamTLS *tls.Config
	// CA signs the faults.L7 listeners' certificates when UpstreamTLS is set; nil means New creates one
	// for the bench. A run shares one CA across its benches.
	CA *CA
	// Bucket is the only bucket the paths reach (required). It also lets the faults.L7 proxy
	// recognise virtual-hosted requests (Host "bucket.…") besides path-style ones.
	Bucket string
	// Clock is the run-relative clock stamped on ledger entries, typically a history
	// recorder's Now. nil means the time elapsed since New.
	Clock func() time.Duration
	// Rand is the caller's seeded generator. New draws the bench's seed from it (two values) so
	// the caller's stream advances the same way from run to run; the package makes no random
	// choice today (flapping is planned by the caller, as toggles of a partition). nil draws
	// nothing.
	Rand *rand.Rand
	// Record receives the fault-start and fault-end events of every path's [faults.Set], typically a
	// history recorder's Record. nil discards them.
	Record func(history.Event)
	// Logger receives debug records (rules firing, faults.L4 changes). nil discards them.
	Logger *slog.Logger
	// Prefix is the key prefix every request of a path must stay under (object keys, listing
	// prefixes, DeleteObjects keys, copy sources); it must be non-empty and end in "/".
	Prefix string
	// AccessKey, SecretKey and SessionToken are the store's credentials. The proxy re-signs
	// every request it forwards with them, after verifying the request against the path's own
	// credential ([Path.Credentials]); they are never logged or written to the ledger.
	AccessKey    string
	SecretKey    string
	SessionToken string
	// Guard receives the panics of the bench's goroutines (listeners, request handlers);
	// nil means guard.Default.
	Guard *guard.Sink
}

// Bench owns the fault paths of one run: one embedded Toxiproxy server, one faults.L7 proxy listener
// per writer, the connection pool towards the store and the ledger. Its methods are safe for
// concurrent use.
type Bench struct {
	o      Options
	clock  func() time.Duration
	log    *slog.Logger
	tp     *toxiproxy.ApiServer
	tr     *http.Transport
	rp     *httputil.ReverseProxy
	srvTLS *tls.Config // the faults.L7 listeners' TLS; nil for plain HTTP
	ca     *CA
	ctx    context.Context // canceled by Close: bounds every request towards the store
	cancel context.CancelFunc
	nextID atomic.Int64

	mu       sync.Mutex
	paths    map[string]*Path
	order    []*Path
	closed   bool
	inflight sync.WaitGroup // faults.L7 handlers running
	busy     atomic.Int64   // the same count, readable while handlers still arrive (Drain)

	ledgerMu  sync.Mutex
	ledgerCnd *sync.Cond // signaled when finishing drops to 0
	finishing int        // handlers writing an answer the client may already see
	ledger    []history.LedgerEntry
}

// New starts an empty bench. Paths are created on demand by [Bench.Path].
func New(o Options) (*Bench, error) {
	if _, _, err := net.SplitHostPort(o.Upstream); err != nil {
		return nil, fmt.Errorf("faults: upstream %q: want host:port: %w", o.Upstream, err)
	}
	if o.Bucket == "" || o.AccessKey == "" || o.SecretKey == "" {
		return nil, errors.New("faults: Options.Bucket, AccessKey and SecretKey are required: the proxy re-signs every request it forwards")
	}
	if !strings.HasSuffix(o.Prefix, "/") || strings.HasPrefix(o.Prefix, "/") {
		return nil, fmt.Errorf("faults: Options.Prefix %q must end in / and not start with one", o.Prefix)
	}
	b := &Bench{o: o, clock: o.Clock, log: o.Logger, paths: map[string]*Path{}}
	b.ledgerCnd = sync.NewCond(&b.ledgerMu)
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	if b.clock == nil {
		start := time.Now()
		b.clock = func() time.Duration { return time.Since(start) }
	}
	if o.Rand != nil {
		_, _ = o.Rand.Uint64(), o.Rand.Uint64() // the bench's seed: see Options.Rand
	}
	// The metrics container must be non-nil: Toxiproxy dereferences it once bytes flow.
	b.tp = toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	b.tr = &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 256,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true, // never add Accept-Encoding: forward what the client sent
	}
	up := &url.URL{Scheme: "http", Host: o.Upstream}
	if o.UpstreamTLS != nil {
		host, _, _ := net.SplitHostPort(o.Upstream)
		ct := o.UpstreamTLS.Clone()
		if ct.ServerName == "" {
			ct.ServerName = host
		}
		if ct.MinVersion == 0 {
			ct.MinVersion = tls.VersionTLS12
		}
		b.tr.TLSClientConfig = ct
		b.tr.TLSHandshakeTimeout = 10 * time.Second
		up.Scheme = "https"
		b.ca = o.CA
		if b.ca == nil {
			var err error
			if b.ca, err = NewCA(); err != nil {
				return nil, err
			}
		}
		b.srvTLS = b.ca.serverConfig(ct.ServerName)
	}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	b.rp = &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.Out.Host = pr.In.Host // SigV4 signs Host: keep the client's
		},
		Transport:      &upstreamTransport{base: b.tr},
		ModifyResponse: b.modifyResponse,
		ErrorHandler:   b.proxyError,
		ErrorLog:       slog.NewLogLogger(b.log.Handler(), slog.LevelDebug),
	}
	return b, nil
}

// RootCAs is the trust a client of the paths needs: the pool of the CA that signs the faults.L7
// listeners' certificates, or nil when the paths speak plain HTTP.
func (b *Bench) RootCAs() *x509.CertPool {
	if b.ca == nil {
		return nil
	}
	return b.ca.Pool()
}

// Path returns the writer's fault path, creating it (its Toxiproxy proxy and its faults.L7 listener)
// on first use. Later calls with the same writer return the same Path.
func (b *Bench) Path(writer string) (*Path, error) {
	if writer == "" {
		return nil, errors.New("faults: empty writer name")
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return nil, ErrClosed
	}
	if p, ok := b.paths[writer]; ok {
		return p, nil
	}
	p, err := newPath(b, writer)
	if err != nil {
		return nil, err
	}
	b.paths[writer] = p
	b.order = append(b.order, p)
	return p, nil
}

// Ledger returns a copy of the ledger, ordered by ID (the order in which requests arrived).
// A request appears once the proxy has finished with it. Ledger waits for the handlers that
// are answering, so every request whose answer (or cut connection) a client may already have
// seen is in it; requests still waiting for the store or held by a faults.Delay rule are not.
func (b *Bench) Ledger() []history.LedgerEntry {
	b.ledgerMu.Lock()
	for b.finishing > 0 {
		b.ledgerCnd.Wait()
	}
	out := slices.Clone(b.ledger)
	b.ledgerMu.Unlock()
	slices.SortFunc(out, func(x, y history.LedgerEntry) int {
		switch {
		case x.ID < y.ID:
			return -1
		case x.ID > y.ID:
			return 1
		}
		return 0
	})
	return out
}

// WriteLedger writes the ledger as JSON Lines (history.EncodeLedger), ordered by ID.
func (b *Bench) WriteLedger(w io.Writer) error {
	return history.EncodeLedger(w, b.Ledger())
}

// finish marks a handler as about to answer: from now on its client may see the outcome, so
// Ledger must wait for its entry.
func (b *Bench) finish(x *exchange) {
	if x.finishing {
		return
	}
	x.finishing = true
	b.ledgerMu.Lock()
	b.finishing++
	b.ledgerMu.Unlock()
}

func (b *Bench) record(x *exchange) {
	b.ledgerMu.Lock()
	b.ledger = append(b.ledger, *x.e)
	if x.finishing {
		b.finishing--
		if b.finishing == 0 {
			b.ledgerCnd.Broadcast()
		}
	}
	b.ledgerMu.Unlock()
}

// enter registers an faults.L7 handler; it fails once Close has begun.
func (b *Bench) enter() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return false
	}
	b.inflight.Add(1)
	b.busy.Add(1)
	return true
}

// leave ends an faults.L7 handler that enter admitted.
func (b *Bench) leave() {
	b.busy.Add(-1)
	b.inflight.Done()
}

func (b *Bench) isClosed() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.closed
}

// Drain waits until no request is in the faults.L7 proxies any more (a request held by a delay rule
// lands at the store first), or ctx ends. Call it once the clients stopped sending, before
// reading the store directly: nothing of a path reaches the store after it returns nil.
func (b *Bench) Drain(ctx context.Context) error {
	// Not inflight.Wait: a client may still open a request meanwhile, and a WaitGroup must
	// not be waited on while it is being added to.
	for b.busy.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("faults: requests still in flight: %w", ctx.Err())
		case <-time.After(5 * time.Millisecond):
		}
	}
	return nil
}

// Close stops everything the bench started: Toxiproxy proxies, faults.L7
// listeners and handlers, every connection a path handed out and the idle connections towards
// the store. It is idempotent; the ledger stays readable afterwards.
func (b *Bench) Close() error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	paths := slices.Clone(b.order)
	b.mu.Unlock()

	b.cancel()
	var errs []error
	if err := b.tp.Collection.Clear(); err != nil {
		errs = append(errs, fmt.Errorf("faults: stop toxiproxy: %w", err))
	}
	for _, p := range paths {
		if err := p.srv.Close(); err != nil {
			errs = append(errs, fmt.Errorf("faults: close faults.L7 listener of %s: %w", p.writer, err))
		}
		p.closeClientConns(0)
	}
	b.inflight.Wait()
	for _, p := range paths {
		<-p.served
	}
	b.tr.CloseIdleConnections()
	return errors.Join(errs...)
}
