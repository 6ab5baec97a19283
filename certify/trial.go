package certify

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

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

	failed, errored, info bool
	observed              string
	problems              []string
	details               []string
	facts                 map[string]string
	witness               *checker.Witness // a minimal non-linearizable part of what the probe saw
}

// maxDetails bounds the detail lines of one result.
const maxDetails = 40

func (t *trial) detail(format string, a ...any) {
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
	t.failed = true
	t.problems = append(t.problems, msg)
	t.detail("FAIL: %s", msg)
}

// errorf records that something could not be judged.
func (t *trial) errorf(format string, a ...any) {
	msg := fmt.Sprintf(format, a...)
	t.errored = true
	t.problems = append(t.problems, msg)
	t.detail("ERROR: %s", msg)
}

// observe sets the one-sentence observation.
func (t *trial) observe(format string, a ...any) { t.observed = fmt.Sprintf(format, a...) }

// record marks the result as an observation only (verdict info unless something failed).
func (t *trial) record() { t.info = true }

func (t *trial) fact(k, v string) { t.facts[k] = v }

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
	s, err := s3store.New(t.client, cfg)
	if err != nil {
		return nil, err
	}
	if t.opts.Wrap != nil {
		s = t.opts.Wrap(t.client, s)
	}
	return s, nil
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
		t.errorf("%s: %s (want %s): %s", what, answer(err), want, cause(err))
		return
	}
	t.failf("%s answered %s, want %s", what, answer(err), want)
}
