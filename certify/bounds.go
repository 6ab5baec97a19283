package certify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/store"
)

// The bounds of a certification: every probe run (one probe, one client, one round) ends at
// its own deadline, and the whole run at its own; a probe the whole run's deadline leaves no
// time for is not started.
const (
	// DefaultProbeTimeout is the default of [Options.ProbeTimeout]. The slowest probes on the
	// pinned MinIO (B9, B10 at 50 keys) take a few seconds on two busy cores.
	DefaultProbeTimeout = time.Minute
	// DefaultTimeoutPerRound is the default of [Options.Timeout]: that much per round. One
	// round of every probe with both clients takes under a minute on the pinned MinIO.
	DefaultTimeoutPerRound = 4 * time.Minute
	// abandonGrace is how long a probe may take to return once its deadline passed before
	// the run goes on without it (every store call honours its context, so only a bench bug
	// would use it).
	abandonGrace = 10 * time.Second
	// liveWait bounds how long a store that stopped answering the liveness probe between two
	// probes is given to answer again before the next probe is given up.
	liveWait = 30 * time.Second
)

// ErrorClass says why a probe could not be judged; it is set on every result whose verdict
// is [Error], beside its Cause.
type ErrorClass string

// The error classes. A store that answers a conditional write wrongly is a [Fail], never
// one of these.
const (
	// Overloaded: the store could not take the bench's load: no answer within the deadline,
	// a timeout, a reset connection, 503 SlowDown or another 5xx.
	Overloaded ErrorClass = "overloaded"
	// UnsupportedHeader: the store refused a conditional header itself (400, or 501
	// NotImplemented, to If-None-Match or If-Match): it cannot carry fencing as asked.
	UnsupportedHeader ErrorClass = "unsupported-header"
	// Harness: the bench could not run the probe (bad credentials or bucket, a client or a
	// fault path that could not be built, a panic, an interruption, the store's process died).
	Harness ErrorClass = "harness"
	// NotRun: the whole run's deadline passed before the probe could start.
	NotRun ErrorClass = "not-run"
)

// deadline is the cause of a context that ended at one of the run's bounds.
type deadline struct {
	d     time.Duration
	whole bool // the whole run's deadline, not the probe's
}

func (d *deadline) Error() string {
	if d.whole {
		return fmt.Sprintf("whole-run deadline %v exceeded", d.d)
	}
	return fmt.Sprintf("deadline %v exceeded", d.d)
}

// deadlineOf returns the bound that ended ctx, or nil when ctx did not end at one.
func deadlineOf(ctx context.Context) *deadline {
	var d *deadline
	if ctx.Err() != nil && errors.As(context.Cause(ctx), &d) {
		return d
	}
	return nil
}

// call is one request a probe's client sent.
type call struct {
	n        int // the probe's request number, from 1
	method   string
	key      string // without the probe's prefix
	attempts int    // the client's SDK attempts per call
	start    time.Time
}

func (c call) String() string {
	return fmt.Sprintf("%s %s (request %d of the probe, attempt %s)", c.method, c.key, c.n, attemptText(c.attempts))
}

func attemptText(attempts int) string {
	if attempts <= 1 {
		return "1 of 1, retries off"
	}
	return fmt.Sprintf("%d of %d", attempts, attempts)
}

// tracedError is a store error with the request that met it.
type tracedError struct {
	err  error
	call call
}

func (e *tracedError) Error() string { return e.err.Error() }
func (e *tracedError) Unwrap() error { return e.err }

// tracker records what a probe's clients are doing: the requests in flight, the last one
// answered and the last failure no later success followed, so a deadline and an error can
// name the request they came after.
type tracker struct {
	base     string
	mu       sync.Mutex
	n        int
	inflight map[int]call
	last     *call
	lastAns  string
	lastFail *tracedError
	// cut is the earliest request the end of the probe's context cut short (one that was
	// in flight at its deadline), and cutAfter how long it had waited.
	cut      *call
	cutAfter time.Duration
}

func newTracker(base string) *tracker { return &tracker{base: base, inflight: map[int]call{}} }

func (tr *tracker) begin(method, key string, attempts int) call {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.n++
	c := call{n: tr.n, method: method, key: strings.TrimPrefix(key, tr.base), attempts: attempts, start: time.Now()}
	tr.inflight[c.n] = c
	return c
}

// end records c's answer and returns err, traced.
func (tr *tracker) end(ctx context.Context, c call, err error) error {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	delete(tr.inflight, c.n)
	if ctx.Err() != nil && (tr.cut == nil || c.n < tr.cut.n) {
		if dl, ok := ctx.Deadline(); !ok || c.start.Before(dl) {
			tr.cut, tr.cutAfter = &c, time.Since(c.start)
		}
	}
	tr.last, tr.lastAns = &c, answer(err)
	if err == nil {
		tr.lastFail = nil
		return nil
	}
	te := &tracedError{err: err, call: c}
	if errors.Is(err, store.ErrAmbiguous) || errors.Is(err, store.ErrConfig) {
		tr.lastFail = te
	}
	return te
}

// takeFail returns the last failure no later success followed, and forgets it.
func (tr *tracker) takeFail() *tracedError {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	f := tr.lastFail
	tr.lastFail = nil
	return f
}

// doing says what the probe was doing when its context ended: the oldest request that was
// in flight then (cut short, or still in flight), or else the last request answered.
func (tr *tracker) doing(now time.Time) string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	var oldest call
	var waited time.Duration
	if tr.cut != nil {
		oldest, waited = *tr.cut, tr.cutAfter
	}
	for _, c := range tr.inflight {
		if oldest.n == 0 || c.n < oldest.n {
			oldest, waited = c, now.Sub(c.start)
		}
	}
	if oldest.n != 0 {
		s := fmt.Sprintf("%v, in flight for %v without an answer", oldest, waited.Round(time.Millisecond))
		if more := len(tr.inflight) - 1; more > 0 {
			s += fmt.Sprintf(" (and %d more requests in flight)", more)
		}
		return s
	}
	if tr.last != nil {
		return fmt.Sprintf("%v answered %s; no request in flight", *tr.last, tr.lastAns)
	}
	return "before the probe's first request"
}

// tracked is a store client whose requests its tracker records.
type tracked struct {
	s        store.Store
	tr       *tracker
	attempts int
}

func (t tracked) Get(ctx context.Context, key string) (store.Object, error) {
	c := t.tr.begin("GET", key, t.attempts)
	o, err := t.s.Get(ctx, key)
	return o, t.tr.end(ctx, c, err)
}

func (t tracked) Put(ctx context.Context, key string, body []byte) (string, error) {
	c := t.tr.begin("PUT", key, t.attempts)
	e, err := t.s.Put(ctx, key, body)
	return e, t.tr.end(ctx, c, err)
}

func (t tracked) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	c := t.tr.begin("PUT If-None-Match: *", key, t.attempts)
	e, err := t.s.PutIfAbsent(ctx, key, body)
	return e, t.tr.end(ctx, c, err)
}

func (t tracked) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	c := t.tr.begin("PUT If-Match", key, t.attempts)
	e, err := t.s.PutIfMatch(ctx, key, body, etag)
	return e, t.tr.end(ctx, c, err)
}

func (t tracked) Delete(ctx context.Context, key string) error {
	c := t.tr.begin("DELETE", key, t.attempts)
	return t.tr.end(ctx, c, t.s.Delete(ctx, key))
}

func (t tracked) DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error) {
	first := ""
	if len(keys) > 0 {
		first = keys[0]
	}
	c := t.tr.begin(fmt.Sprintf("DeleteObjects (%d keys)", len(keys)), first, t.attempts)
	failed, err := t.s.DeleteMany(ctx, keys)
	return failed, t.tr.end(ctx, c, err)
}

func (t tracked) List(ctx context.Context, prefix string) ([]store.Entry, error) {
	c := t.tr.begin("LIST", prefix, t.attempts)
	es, err := t.s.List(ctx, prefix)
	return es, t.tr.end(ctx, c, err)
}

// describe says in one line what a failed request met: the request, the HTTP status and S3
// code or the network error, and the attempt it gave up after.
func describe(err error) string {
	var te *tracedError
	var se *store.Error
	errors.As(err, &se)
	var what string
	switch {
	case se == nil:
		what = "error: " + redactURL(err.Error())
	case se.Status == 0 && se.Code == "" && se.Err != nil:
		what = "no response: " + cause(err)
	case se.Status == 0 && se.Code == "":
		what = "no response"
	default:
		what = fmt.Sprintf("HTTP %d %s", se.Status, se.Code)
		if se.RequestID != "" {
			what += " (request id " + se.RequestID + ")"
		}
	}
	if errors.As(err, &te) {
		return fmt.Sprintf("%s %s: %s; gave up after attempt %s (request %d of the probe)", te.call.method, te.call.key, what,
			attemptText(te.call.attempts), te.call.n)
	}
	if se != nil {
		return fmt.Sprintf("%s %s: %s", se.Op, se.Key, what)
	}
	return what
}

// classOf says what kind of trouble a failed request shows.
func classOf(err error) ErrorClass {
	var se *store.Error
	errors.As(err, &se)
	var te *tracedError
	conditional := errors.As(err, &te) && strings.HasPrefix(te.call.method, "PUT If-") ||
		se != nil && (se.Op == "put-if-absent" || se.Op == "put-if-match")
	switch {
	case errors.Is(err, store.ErrConfig):
		return Harness
	case se != nil && (se.Status == 501 || se.Code == "NotImplemented"):
		return UnsupportedHeader
	case se != nil && conditional && se.Status == 400:
		return UnsupportedHeader
	case errors.Is(err, context.Canceled):
		return Harness
	case se != nil && (se.Status == 0 || se.Status >= 500 || se.Status == 429 || se.Code == "SlowDown" ||
		se.Code == "RequestTimeout" || se.Code == "ServiceUnavailable"):
		return Overloaded
	case errors.Is(err, context.DeadlineExceeded):
		return Overloaded
	default:
		return Harness
	}
}
