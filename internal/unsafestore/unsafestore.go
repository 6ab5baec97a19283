package unsafestore

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencebench/fencebench/store"
	"github.com/minio/minio-go/v7/pkg/signer"
)

// Front is a running front.
type Front struct {
	// Gap is the wait between the check and the write.
	Gap      time.Duration
	opts     Options
	inFlight atomic.Int64
	stale    staleCache
	upstream store.Config
	target   *url.URL
	srv      *http.Server
	ln       net.Listener
	proxy    *httputil.ReverseProxy
	client   *http.Client
	closing  chan struct{}
	once     sync.Once
}

// Start serves a check-then-act front over the store of cfg (an http endpoint, path-style)
// on a loopback port, waiting gap between each check and its write.
func Start(cfg store.Config, gap time.Duration) (*Front, error) {
	return Open(cfg, Options{Mode: CheckThenAct, Gap: gap})
}

// Open serves a front of o.Mode over the store of cfg (an http endpoint, path-style) on a
// loopback port.
func Open(cfg store.Config, o Options) (*Front, error) {
	target, err := url.Parse(cfg.Endpoint)
	if err != nil || target.Host == "" || target.Scheme != "http" {
		return nil, fmt.Errorf("unsafestore: want an http endpoint, got %q", cfg.Endpoint)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	if err := o.check(); err != nil {
		return nil, err
	}
	f := &Front{Gap: o.Gap, opts: o, stale: staleCache{m: map[string]staleEntry{}}, upstream: cfg, target: target, ln: ln, client: &http.Client{Timeout: 30 * time.Second}, closing: make(chan struct{})}
	f.proxy = &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) {
		r.SetURL(target)
		r.Out.Host = r.In.Host // the client signed this host
	}}
	f.srv = &http.Server{Handler: f, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = f.srv.Serve(ln) }()
	return f, nil
}

// Config is cfg with the front as its endpoint.
func (f *Front) Config() store.Config {
	c := f.upstream
	c.Endpoint = "http://" + f.ln.Addr().String()
	return c
}

// Close stops the front.
func (f *Front) Close() {
	f.once.Do(func() { close(f.closing) })
	_ = f.srv.Close()
}

// ServeHTTP breaks conditional PUTs (and, for StaleAfterCAS, the reads after them) the way
// its mode says and passes everything else through.
func (f *Front) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.inFlight.Add(1)
	defer f.inFlight.Add(-1)
	if f.opts.Mode == StaleAfterCAS && f.serveStale(w, r) {
		return
	}
	if !conditionalPut(r) {
		f.proxy.ServeHTTP(w, r)
		return
	}
	switch f.opts.Mode {
	case IgnoreUnderLoad:
		f.ignoreUnderLoad(w, r)
	case CreateOnIfMatch:
		f.createOnIfMatch(w, r)
	case StaleAfterCAS:
		f.casThenStale(w, r)
	case Stall, NoConditionalCreate:
		if strings.HasSuffix(r.URL.Path, "/"+store.MarkerName) {
			// A run's claim of its prefix is not what these fronts model.
			f.proxy.ServeHTTP(w, r)
		} else if f.opts.Mode == Stall {
			f.stall(r)
		} else {
			f.notImplemented(w, r)
		}
	default:
		f.checkThenAct(w, r)
	}
}

// objectRequest reports whether r names an object with no sub-resource (aws-sdk-go-v2's
// x-id names the operation; any other parameter is not a plain object request).
func objectRequest(r *http.Request) bool {
	q := r.URL.Query()
	q.Del("x-id")
	return len(q) == 0
}

// conditionalPut reports whether r is a plain PUT with If-None-Match or If-Match.
func conditionalPut(r *http.Request) bool {
	return r.Method == http.MethodPut && (r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Match") != "") && objectRequest(r)
}

// checkThenAct reads the key (HEAD), judges the condition on what it saw, waits Gap, and
// writes unconditionally.
func (f *Front) checkThenAct(w http.ResponseWriter, r *http.Request) {
	inm, im := r.Header.Get("If-None-Match"), r.Header.Get("If-Match")
	body, err := readPayload(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	exists, etag, err := f.head(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	switch {
	case inm != "" && exists:
		refuse(w, http.StatusPreconditionFailed, "PreconditionFailed", r.URL.Path)
		return
	case im != "" && !exists:
		refuse(w, http.StatusNotFound, "NoSuchKey", r.URL.Path)
		return
	case im != "" && strings.Trim(im, `"`) != etag:
		refuse(w, http.StatusPreconditionFailed, "PreconditionFailed", r.URL.Path)
		return
	}
	time.Sleep(f.Gap)
	f.putUnconditionally(w, r, body)
}

// head reports whether r's key exists, and its ETag, by the front's own HEAD.
func (f *Front) head(r *http.Request) (exists bool, etag string, err error) {
	resp, err := f.send(r, http.MethodHead, nil)
	if err != nil {
		return false, "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusNotFound {
		return false, "", fmt.Errorf("unsafestore: HEAD %s answered %s", r.URL.Path, resp.Status)
	}
	return resp.StatusCode == http.StatusOK, strings.Trim(resp.Header.Get("ETag"), `"`), nil
}

// putUnconditionally writes body to r's key with the front's own unconditional PUT and
// answers what the store answered.
func (f *Front) putUnconditionally(w http.ResponseWriter, r *http.Request, body []byte) {
	put, err := f.send(r, http.MethodPut, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	relay(w, put)
}

// relay answers resp's status, headers and body, and closes it.
func relay(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// send makes the front's own request for r's object, signed with the store's credentials.
func (f *Front) send(r *http.Request, method string, body []byte) (*http.Response, error) {
	u := *f.target
	u.Path, u.RawPath = r.URL.Path, r.URL.RawPath
	req, err := http.NewRequestWithContext(r.Context(), method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if body == nil {
		req.Body, req.ContentLength = http.NoBody, 0
	}
	if ct := r.Header.Get("Content-Type"); ct != "" && method == http.MethodPut {
		req.Header.Set("Content-Type", ct)
	}
	sum := sha256.Sum256(body)
	req.Header.Set("X-Amz-Content-Sha256", hex.EncodeToString(sum[:]))
	region := f.upstream.Region
	if region == "" {
		region = "us-east-1"
	}
	req = signer.SignV4(*req, f.upstream.AccessKey, f.upstream.SecretKey, f.upstream.SessionToken, region)
	return f.client.Do(req)
}

func refuse(w http.ResponseWriter, status int, code, resource string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>%s</Code><Message>the front refused the condition</Message><Resource>%s</Resource></Error>`, code, resource)
}

// readPayload returns r's body, decoded when it is aws-chunked (signed or not, with or
// without trailers).
func readPayload(r *http.Request) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if !strings.HasPrefix(r.Header.Get("X-Amz-Content-Sha256"), "STREAMING-") &&
		!strings.Contains(r.Header.Get("Content-Encoding"), "aws-chunked") {
		return raw, nil
	}
	br := bufio.NewReader(bytes.NewReader(raw))
	var out []byte
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return nil, fmt.Errorf("unsafestore: aws-chunked body: %w", err)
		}
		size, _, _ := strings.Cut(strings.TrimSpace(line), ";")
		n, err := strconv.ParseInt(size, 16, 64)
		if err != nil || n < 0 || n > int64(len(raw)) {
			return nil, errors.New("unsafestore: aws-chunked body: bad chunk size")
		}
		if n == 0 {
			return out, nil
		}
		chunk := make([]byte, n+2)
		if _, err := io.ReadFull(br, chunk); err != nil {
			return nil, fmt.Errorf("unsafestore: aws-chunked body: %w", err)
		}
		out = append(out, chunk[:n]...)
	}
}
