package certify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
	"github.com/fencebench/fencebench/storeprobe"
)

// trial is one probe running with one client. Its methods collect what the probe saw; the
// verdict is the worst of what was reported: fail, then error, then info, then pass.
type trial struct {
	*bench
	ctx    context.Context
	client store.Client
	base   string      // the probe's key prefix
	s      store.Store // the probe's client
	peer   store.Store // a second client with its own connections

	// tr records the requests of the probe's clients; idle are their transports, whose
	// connections are closed when the probe ends.
	tr   *tracker
	idle []interface{ CloseIdleConnections() }

	// mu guards what the probe records, which the run reads when it gives up on a probe that
	// did not return by its deadline; closed is set then, and later records are dropped.
	mu                    sync.Mutex
	closed                bool
	failed, errored, info bool
	observed              string
	problems              []string
	details               []string
	facts                 map[string]string
	witness               *checker.Witness // a minimal non-linearizable part of what the probe saw
	// cause and class say, in one line, why the probe could not be judged: set by the first
	// error recorded.
	cause string
	class ErrorClass
}

// maxDetails bounds the detail lines of one result.
const maxDetails = 40

func (t *trial) detail(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.addDetail(format, a...)
}

func (t *trial) addDetail(format string, a ...any) {
	if t.closed {
		return
	}
	if len(t.details) == maxDetails {
		t.details = append(t.details, "(further details omitted)")
	}
	if len(t.details) < maxDetails {
		t.details = append(t.details, fmt.Sprintf(format, a...))
	}
}

// failf records a violation: the store did something the probe rules out.
func (t *trial) failf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.failed = true
	t.problems = append(t.problems, msg)
	t.addDetail("FAIL: %s", msg)
}

// errorf records that something could not be judged. Its cause is the last request of the
// probe that failed with no success after it, when there is one, else the message itself.
func (t *trial) errorf(format string, a ...any) {
	var f *tracedError
	if t.tr != nil {
		f = t.tr.takeFail()
	}
	if f != nil {
		t.errorOn(f, format, a...)
		return
	}
	t.errorOn(nil, format, a...)
}

// errorOn records that something could not be judged because of err (nil when no request
// failed), with the message.
func (t *trial) errorOn(err error, format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return
	}
	t.errored = true
	t.problems = append(t.problems, msg)
	t.addDetail("ERROR: %s", msg)
	if t.cause != "" {
		return
	}
	if err != nil {
		t.cause, t.class = describe(err), classOf(err)
		return
	}
	t.cause, t.class = oneLine(msg), Harness
}

// observe sets the one-sentence observation.
func (t *trial) observe(format string, a ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.observed = fmt.Sprintf(format, a...)
	}
}

// record marks the result as an observation only (verdict info unless something failed).
func (t *trial) record() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.info = true
	}
}

func (t *trial) fact(k, v string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.facts[k] = v
	}
}

func (t *trial) verdict() Verdict {
	switch {
	case t.failed:
		return Fail
	case t.errored:
		return Error
	case t.info:
		return Info
	default:
		return Pass
	}
}

// bad reports whether the probe already holds a failure or an error.
func (t *trial) bad() bool { return t.failed || t.errored }

// short is key without the probe's prefix, for messages.
func (t *trial) short(key string) string { return strings.TrimPrefix(key, t.base) }

// key returns a fresh key under the probe's prefix.
func (t *trial) key(name string) string { return t.base + name + "-" + nonce() }

// newStore builds a fresh client (its own transport, so its own connections) of the trial's
// kind. Non-zero fields of tweak override the environment's configuration.
func (t *trial) newStore(tweak store.Config) (store.Store, error) {
	cfg := t.cfg
	if tweak.DialContext != nil {
		cfg.DialContext = tweak.DialContext
	}
	if tweak.RootCAs != nil {
		cfg.RootCAs = tweak.RootCAs
	}
	if tweak.MaxAttempts != 0 {
		cfg.MaxAttempts = tweak.MaxAttempts
	}
	if tweak.AccessKey != "" { // a fault path's own credential
		cfg.AccessKey, cfg.SecretKey, cfg.SessionToken = tweak.AccessKey, tweak.SecretKey, ""
	}
	if cfg.Transport == nil {
		// The client's own transport, whose idle connections the probe closes when it ends,
		// so no probe leaves the store holding connections of the one before.
		rt := cfg.RoundTripper()
		cfg.Transport = rt
		if tr, ok := rt.(*http.Transport); ok {
			t.mu.Lock()
			t.idle = append(t.idle, tr)
			t.mu.Unlock()
		}
	}
	s, err := s3store.New(t.client, cfg)
	if err != nil {
		return nil, err
	}
	if t.opts.Wrap != nil {
		s = t.opts.Wrap(t.client, s)
	}
	if t.tr != nil {
		s = tracked{s: s, tr: t.tr, attempts: cfg.Attempts()}
	}
	return s, nil
}

// closeIdle closes the idle connections of every client the probe built.
func (t *trial) closeIdle() {
	t.mu.Lock()
	idle := t.idle
	t.mu.Unlock()
	for _, c := range idle {
		c.CloseIdleConnections()
	}
}

// stores builds n fresh clients.
func (t *trial) stores(n int) ([]store.Store, error) {
	out := make([]store.Store, n)
	for i := range out {
		s, err := t.newStore(store.Config{})
		if err != nil {
			return nil, err
		}
		out[i] = s
	}
	return out, nil
}

// nonce returns a fresh random token.
var nonce = storeprobe.Nonce

// answer describes a store call's outcome the way the design notes do: "200", "412
// PreconditionFailed", "404 NoSuchKey", "no response (...)".
func answer(err error) string {
	if err == nil {
		return "200"
	}
	var se *store.Error
	if !errors.As(err, &se) {
		return "error: " + err.Error()
	}
	switch {
	case se.Status == 0 && se.Code == "":
		return "no response"
	case se.Status == 0:
		return se.Code
	case se.Code == "":
		return fmt.Sprint(se.Status)
	default:
		return fmt.Sprintf("%d %s", se.Status, se.Code)
	}
}

// cause is the underlying error of a call that got no response, for details.
func cause(err error) string {
	var se *store.Error
	if errors.As(err, &se) && se.Err != nil {
		return redactURL(se.Err.Error())
	}
	return redactURL(err.Error())
}

// redactURL drops the query string of URLs quoted in an error message (a presigned query
// would carry a signature).
func redactURL(msg string) string {
	fields := strings.Fields(msg)
	for i, f := range fields {
		trimmed := strings.Trim(f, `"':,`)
		if u, err := url.Parse(trimmed); err == nil && u.Scheme != "" && u.Host != "" && u.RawQuery != "" {
			u.RawQuery = ""
			fields[i] = strings.Replace(f, trimmed, u.String(), 1)
		}
	}
	return strings.Join(fields, " ")
}

// Outcome classes of a conditional write.
func refused(err error) bool {
	return errors.Is(err, store.ErrPreconditionFailed) || errors.Is(err, store.ErrConflict)
}

func ambiguous(err error) bool { return errors.Is(err, store.ErrAmbiguous) }

func harness(err error) bool {
	return errors.Is(err, store.ErrConfig) || errors.Is(err, context.Canceled)
}

// unexpected records a call whose answer the probe did not expect: a missing answer or a
// configuration problem is an error, anything else a failure.
func (t *trial) unexpected(what string, err error, want string) {
	if ambiguous(err) || harness(err) || t.ctx.Err() != nil {
		t.errorOn(err, "%s: %s (want %s): %s", what, answer(err), want, cause(err))
		return
	}
	t.failf("%s answered %s, want %s", what, answer(err), want)
}
