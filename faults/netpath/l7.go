package netpath

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

const (
	// maxErrorBody is the largest error body the proxy buffers to read the S3 error code.
	maxErrorBody = 64 << 10
	// maxDuplicateBody bounds the body a faults.Duplicate rule buffers to send it twice.
	maxDuplicateBody = 64 << 20
)

// errDrop is returned by ModifyResponse to turn a store answer into a cut connection.
var errDrop = errors.New("faults: response dropped by rule")

type ctxKey struct{}

// exchange is the state of one request while the reverse proxy handles it.
type exchange struct {
	e         *history.LedgerEntry
	rule      *faults.Rule
	failed    []string // FailDeleteKeys: the keys cut from the batch, reported as failed
	finishing bool     // counted in Bench.finishing
}

func exchangeOf(ctx context.Context) *exchange {
	x, _ := ctx.Value(ctxKey{}).(*exchange)
	return x
}

// serveHTTP is the faults.L7 proxy of one path. A request is admitted (signature, payload, bucket
// and prefix) before any rule sees it; what is forwarded is re-signed with the store's
// credentials.
func (p *Path) serveHTTP(w http.ResponseWriter, r *http.Request) {
	b := p.b
	if !b.enter() {
		panic(http.ErrAbortHandler)
	}
	defer b.leave()

	e := history.LedgerEntry{ID: b.nextID.Add(1), Time: b.clock(), Writer: p.writer, Method: r.Method}
	e.Key, e.Query = b.target(r)
	e.IfMatch = strings.Trim(r.Header.Get("If-Match"), `"`)
	e.IfNoneMatch = strings.Trim(r.Header.Get("If-None-Match"), `"`)
	x := &exchange{e: &e}
	// Recorded even when the handler aborts the connection (panic(http.ErrAbortHandler)).
	defer func() {
		e.Done = b.clock()
		b.record(x)
	}()
	in, refused := p.admit(r, &e)
	if refused != nil {
		p.refuse(w, r, x, refused)
		return
	}
	q := faults.Request{Method: r.Method, Keys: []string{matchKey(r, e.Key)}, Header: r.Header}
	if in.batch != nil && in.batch.parsed {
		q.Keys, q.Batch = e.Keys, true
	}
	var rule *faults.Rule
	fired, keyMatches, ok := p.rules.Fire(q)
	if ok {
		rule = &fired
	}
	x.rule = rule
	if rule != nil {
		e.Rule, e.Action = rule.Name, string(rule.Action)
		b.log.Debug("faults: rule fired", "writer", p.writer, "rule", rule.Name, "action", string(rule.Action),
			"method", r.Method, "key", e.Key)
	}

	// The request towards the store is not canceled when the client goes away (a real store
	// keeps executing a request whose client vanished); only Close cancels it.
	ctx, cancel := context.WithCancel(context.WithoutCancel(r.Context()))
	defer cancel()
	stop := context.AfterFunc(b.ctx, cancel)
	defer stop()

	if rule != nil && rule.Until != nil {
		select {
		case <-rule.Until:
		case <-ctx.Done():
			e.Err = "bench closed while the request was held for an event"
			panic(http.ErrAbortHandler)
		}
	}
	if rule != nil && rule.Delay > 0 {
		t := time.NewTimer(rule.Delay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			e.Err = "bench closed during delay"
			panic(http.ErrAbortHandler)
		}
	}
	if rule != nil && rule.Action == faults.DropRequest {
		e.Err = "request dropped by fault rule " + rule.Name
		panic(http.ErrAbortHandler)
	}
	if rule != nil && rule.Action == faults.SyntheticStatus {
		e.Injected = rule.Status
		b.finish(x)
		writeS3Error(w, r, rule.Status, rule.Code, fmt.Sprintf("injected by fault rule %s", rule.Name),
			e.Key, b.o.Bucket, fmt.Sprintf("faults-%d", e.ID))
		e.Delivered = http.NewResponseController(w).Flush() == nil
		return
	}
	out := p.outgoing(w, r, x, in, keyMatches)
	if out == nil {
		return
	}
	b.rp.ServeHTTP(w, out.WithContext(context.WithValue(ctx, ctxKey{}, x)))
	// The reverse proxy panics (and we never get here) when copying the answer to the client
	// fails; otherwise the answer is in the server's buffer: push it to the connection.
	e.Delivered = e.Status != 0 && http.NewResponseController(w).Flush() == nil
}

// admitted is a request whose signature and payload verified.
type admitted struct {
	sig     *sigV4
	payload []byte // the body, aws-chunked framing removed
	chunked bool   // the body came aws-chunked
	batch   *deleteBatch
}

// admit verifies r against the path's credential, reads its body, and checks it stays inside
// the bench's bucket and prefix. A DeleteObjects batch's keys go to e.Keys.
func (p *Path) admit(r *http.Request, e *history.LedgerEntry) (*admitted, *refusal) {
	s, f := verifySigV4(r, p.cred, time.Now())
	if f != nil {
		return nil, f
	}
	in := &admitted{sig: s}
	if in.payload, in.chunked, f = verifyPayload(r, s); f != nil {
		return nil, f
	}
	if isDeleteObjects(r, e.Key) {
		// Read before matching: a batch is matched on the keys it names.
		in.batch = &deleteBatch{streamed: in.chunked, payload: in.payload}
		in.batch.objects, in.batch.parsed = parseDeleteObjects(in.payload)
		e.Keys = in.batch.keys()
	}
	return in, p.b.confine(r, in.batch)
}

// refuse answers a request the proxy will not forward with an S3 error and records why.
func (p *Path) refuse(w http.ResponseWriter, r *http.Request, x *exchange, f *refusal) {
	x.e.Refused = f.Error()
	p.b.log.Debug("faults: request refused", "writer", p.writer, "method", r.Method, "key", x.e.Key, "why", f.code)
	p.b.finish(x)
	writeS3Error(w, r, f.status, f.code, f.msg, x.e.Key, p.b.o.Bucket, fmt.Sprintf("faults-%d", x.e.ID))
	x.e.Delivered = http.NewResponseController(w).Flush() == nil
}

// outgoing builds the request to forward, re-signed with the store's credentials, after
// applying faults.FailDeleteKeys and faults.StripConditions. It returns nil when the proxy answered itself
// (every key of a batch failed).
func (p *Path) outgoing(w http.ResponseWriter, r *http.Request, x *exchange, in *admitted, keyMatches func(string) bool) *http.Request {
	b, rule, payload := p.b, x.rule, in.payload
	var edit func(http.Header)
	switch {
	case rule != nil && rule.Action == faults.FailDeleteKeys:
		body, failed, rest := in.batch.without(keyMatches)
		x.failed = failed
		if !rest {
			b.finish(x)
			writeDeleteResult(w, r, failed, fmt.Sprintf("injected by fault rule %s", rule.Name), fmt.Sprintf("faults-%d", x.e.ID))
			x.e.Delivered = http.NewResponseController(w).Flush() == nil
			return nil
		}
		payload = body
		// The DeleteResult is rewritten: ask the store for an uncompressed one.
		edit = func(h http.Header) { h.Del("Accept-Encoding") }
	case rule != nil && rule.Action == faults.StripConditions:
		edit = func(h http.Header) {
			h.Del("If-Match")
			h.Del("If-None-Match")
		}
	}
	return b.resign(r, in.sig, payload, in.chunked, edit)
}

// matchKey is the key rules match a request on: the object key, or for a listing
// (ListObjects, whose object key is "") the prefix it lists, so a rule on "*fence__*" also
// catches the listing of the fence objects.
func matchKey(r *http.Request, key string) string {
	if key == "" && r.Method == http.MethodGet {
		if q := r.URL.Query(); q.Has("prefix") {
			return q.Get("prefix")
		}
	}
	return key
}

// target extracts the object key and a credential-free query from a request, path-style
// ("/bucket/key") or virtual-hosted (Host "bucket.…", path "/key").
func (b *Bench) target(r *http.Request) (key, query string) {
	_, key = b.split(r)
	if r.URL.RawQuery != "" {
		q, err := url.ParseQuery(r.URL.RawQuery)
		if err != nil {
			return key, ""
		}
		for k := range q {
			switch strings.ToLower(k) {
			case "x-amz-signature", "x-amz-credential", "x-amz-security-token", "signature", "awsaccesskeyid":
				delete(q, k)
			}
		}
		query = q.Encode()
	}
	return key, query
}

// modifyResponse records the store's answer and applies faults.DropResponse and faults.FailDeleteKeys.
func (b *Bench) modifyResponse(resp *http.Response) error {
	x := exchangeOf(resp.Request.Context())
	if x == nil {
		return nil
	}
	b.finish(x)
	x.e.Forwarded = true
	x.e.Copies = max(x.e.Copies, 1)
	x.e.Status = resp.StatusCode
	x.e.ETag = strings.Trim(resp.Header.Get("ETag"), `"`)
	if resp.StatusCode >= 300 && resp.Request.Method != http.MethodHead && resp.Body != nil {
		code, body := peekErrorCode(resp.Body)
		x.e.Code = code
		resp.Body = body
	}
	if x.rule != nil && x.rule.Action == faults.DropResponse {
		return errDrop
	}
	if len(x.failed) > 0 && resp.StatusCode == http.StatusOK {
		if err := addDeleteErrors(resp, x.failed, fmt.Sprintf("injected by fault rule %s", x.rule.Name)); err != nil {
			// Recorded by proxyError, which cuts the client's connection.
			return fmt.Errorf("fail-delete-keys: %w", err)
		}
	}
	return nil
}

// addDeleteErrors adds an Error entry per key to the store's DeleteResult and fixes the
// response's length.
func addDeleteErrors(resp *http.Response, keys []string, msg string) error {
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return fmt.Errorf("DeleteResult with Content-Encoding %q", enc)
	}
	doc, err := io.ReadAll(io.LimitReader(resp.Body, maxDeleteBody+1))
	_ = resp.Body.Close()
	if err != nil {
		return fmt.Errorf("read DeleteResult: %w", err)
	}
	if len(doc) > maxDeleteBody {
		return fmt.Errorf("DeleteResult larger than %d bytes", maxDeleteBody)
	}
	out, ok := injectDeleteErrors(doc, deleteErrors(keys, msg))
	if !ok {
		return errors.New("the store's answer is not a DeleteResult")
	}
	resp.Body = io.NopCloser(bytes.NewReader(out))
	resp.ContentLength = int64(len(out))
	resp.Header.Set("Content-Length", strconv.Itoa(len(out)))
	resp.TransferEncoding = nil
	return nil
}

// peekErrorCode reads the S3 error code of a small XML error body and returns a body that
// still yields every byte.
func peekErrorCode(body io.ReadCloser) (string, io.ReadCloser) {
	buf, err := io.ReadAll(io.LimitReader(body, maxErrorBody+1))
	rest := struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(buf), body), body}
	if err != nil || len(buf) > maxErrorBody {
		return "", rest
	}
	var doc struct {
		Code string `xml:"Code"`
	}
	if xml.Unmarshal(buf, &doc) != nil {
		return "", rest
	}
	return doc.Code, rest
}

// proxyError handles a failed exchange with the store and DropResponse: either way the client's
// connection is closed without an answer, as a lost connection to a store would look.
func (b *Bench) proxyError(w http.ResponseWriter, r *http.Request, err error) {
	if x := exchangeOf(r.Context()); x != nil && !errors.Is(err, errDrop) {
		b.finish(x)
		x.e.Forwarded = true
		x.e.Copies = max(x.e.Copies, 1)
		x.e.Err = err.Error()
		b.log.Debug("faults: store exchange failed", "writer", x.e.Writer, "key", x.e.Key, "err", err)
	}
	panic(http.ErrAbortHandler)
}

// upstreamTransport sends requests to the store and implements faults.Duplicate.
type upstreamTransport struct {
	base http.RoundTripper
}

func (t *upstreamTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	x := exchangeOf(req.Context())
	if x == nil || x.rule == nil || x.rule.Action != faults.Duplicate {
		return t.base.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil {
		var err error
		body, err = io.ReadAll(io.LimitReader(req.Body, maxDuplicateBody+1))
		_ = req.Body.Close()
		if err != nil {
			return nil, err
		}
		if len(body) > maxDuplicateBody {
			return nil, fmt.Errorf("faults: duplicate: body larger than %d bytes", maxDuplicateBody)
		}
	}
	send := func() (*http.Response, error) {
		c := req.Clone(req.Context())
		if req.Body != nil {
			c.Body = io.NopCloser(bytes.NewReader(body))
			c.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		}
		return t.base.RoundTrip(c)
	}
	first, err := send()
	if err != nil {
		return nil, err
	}
	firstBody, err := io.ReadAll(first.Body)
	_ = first.Body.Close()
	if err != nil {
		return nil, err
	}
	first.Body = io.NopCloser(bytes.NewReader(firstBody))
	x.e.Copies = 2
	second, err := send()
	if err != nil {
		x.e.Err = "duplicate: second copy: " + err.Error()
		return first, nil
	}
	note := fmt.Sprintf("duplicate: second copy answered %d", second.StatusCode)
	if second.StatusCode >= 300 && req.Method != http.MethodHead {
		code, rest := peekErrorCode(second.Body)
		second.Body = rest
		if code != "" {
			note += " " + code
		}
	}
	if etag := strings.Trim(second.Header.Get("ETag"), `"`); etag != "" {
		note += " etag " + etag
	}
	_, _ = io.Copy(io.Discard, second.Body)
	_ = second.Body.Close()
	x.e.Err = note
	return first, nil
}

// writeS3Error answers with an S3 XML error document.
func writeS3Error(w http.ResponseWriter, r *http.Request, status int, code, msg, key, bucket, reqID string) {
	doc := struct {
		XMLName    xml.Name `xml:"Error"`
		Code       string   `xml:"Code"`
		Message    string   `xml:"Message"`
		Key        string   `xml:"Key,omitempty"`
		BucketName string   `xml:"BucketName,omitempty"`
		Resource   string   `xml:"Resource"`
		RequestID  string   `xml:"RequestId"`
		HostID     string   `xml:"HostId"`
	}{Code: code, Message: msg, Key: key, BucketName: bucket, Resource: r.URL.Path, RequestID: reqID, HostID: "fencebench-faults"}
	body, _ := xml.Marshal(doc)
	body = append([]byte(xml.Header), body...)
	h := w.Header()
	h.Set("Content-Type", "application/xml")
	h.Set("X-Amz-faults.Request-Id", reqID)
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	if r.Method != http.MethodHead {
		_, _ = w.Write(body)
	}
}
