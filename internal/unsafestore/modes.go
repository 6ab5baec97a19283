package unsafestore

import (
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/fencebench/fencebench/store"
)

// Mode is how a front breaks the store's conditional writes.
type Mode int

// The modes.
const (
	// CheckThenAct checks the condition with a HEAD, waits Gap and writes unconditionally.
	CheckThenAct Mode = iota
	// IgnoreUnderLoad strips the conditions when more than MaxInFlight requests are in
	// flight.
	IgnoreUnderLoad
	// CreateOnIfMatch creates the object on If-Match to a missing key.
	CreateOnIfMatch
	// StaleAfterCAS serves the replaced version of a key for Stale after a PUT If-Match.
	StaleAfterCAS
	// Stall holds every conditional PUT without an answer until the client gives up (or the
	// front closes).
	Stall
	// NoConditionalCreate answers 501 NotImplemented to a PUT with If-None-Match.
	NoConditionalCreate
)

// String names the mode.
func (m Mode) String() string {
	switch m {
	case CheckThenAct:
		return "check-then-act"
	case IgnoreUnderLoad:
		return "ignores conditions under load"
	case CreateOnIfMatch:
		return "creates on If-Match to a missing key"
	case StaleAfterCAS:
		return "stale read after a CAS"
	case Stall:
		return "stalls conditional writes"
	case NoConditionalCreate:
		return "answers 501 to If-None-Match"
	}
	return fmt.Sprintf("mode %d", int(m))
}

// Options configure [Open].
type Options struct {
	Mode Mode
	// Gap is CheckThenAct's wait between the check and the write.
	Gap time.Duration
	// MaxInFlight is the number of requests in flight at the front (the PUT itself
	// included) up to which IgnoreUnderLoad forwards the conditions; at least 1.
	MaxInFlight int
	// Stale is how long StaleAfterCAS serves the replaced version; more than 0.
	Stale time.Duration
}

func (o Options) check() error {
	switch {
	case o.Mode < CheckThenAct || o.Mode > NoConditionalCreate:
		return fmt.Errorf("unsafestore: unknown %v", o.Mode)
	case o.Mode == IgnoreUnderLoad && o.MaxInFlight < 1:
		return fmt.Errorf("unsafestore: %v wants MaxInFlight of at least 1, got %d", o.Mode, o.MaxInFlight)
	case o.Mode == StaleAfterCAS && o.Stale <= 0:
		return fmt.Errorf("unsafestore: %v wants a Stale duration, got %v", o.Mode, o.Stale)
	}
	return nil
}

// ignoreUnderLoad forwards r with its conditions while at most MaxInFlight requests are in
// flight, and writes it unconditionally otherwise.
func (f *Front) ignoreUnderLoad(w http.ResponseWriter, r *http.Request) {
	if f.inFlight.Load() <= int64(f.opts.MaxInFlight) {
		f.proxy.ServeHTTP(w, r)
		return
	}
	f.stripConditions(w, r)
}

// createOnIfMatch writes a PUT If-Match unconditionally when the key is missing, and
// forwards every other conditional PUT unchanged.
func (f *Front) createOnIfMatch(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("If-Match") == "" {
		f.proxy.ServeHTTP(w, r)
		return
	}
	exists, _, err := f.head(r)
	switch {
	case err != nil:
		http.Error(w, err.Error(), http.StatusBadGateway)
	case exists:
		f.proxy.ServeHTTP(w, r)
	default:
		f.stripConditions(w, r)
	}
}

// stripConditions writes r's body to its key with the front's own unconditional PUT.
func (f *Front) stripConditions(w http.ResponseWriter, r *http.Request) {
	body, err := readPayload(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	f.putUnconditionally(w, r, body)
}

// stall holds r until its client gives up or the front closes, and answers nothing.
func (f *Front) stall(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-f.closing:
	}
}

// notImplemented answers 501 NotImplemented to a PUT with If-None-Match and forwards every
// other conditional PUT unchanged.
func (f *Front) notImplemented(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("If-None-Match") == "" {
		f.proxy.ServeHTTP(w, r)
		return
	}
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(http.StatusNotImplemented)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
		`<Error><Code>NotImplemented</Code><Message>A header you provided implies functionality that is not implemented</Message><Resource>%s</Resource></Error>`, r.URL.Path)
}

// Every returns one front of each mode, with the settings the bench's own tests refuse it
// with: a check-then-act gap of 5ms, conditions stripped above 3 requests in flight, stale
// reads for 200ms after a CAS.
func Every() []Options {
	return []Options{
		{Mode: CheckThenAct, Gap: 5 * time.Millisecond},
		{Mode: IgnoreUnderLoad, MaxInFlight: 3},
		{Mode: CreateOnIfMatch},
		{Mode: StaleAfterCAS, Stale: 200 * time.Millisecond},
	}
}

// Serve returns cfg and the name "pinned MinIO" when o is nil, and otherwise the config of a
// front of o over cfg and the front's name; the front closes when t ends.
func Serve(t testing.TB, cfg store.Config, o *Options) (store.Config, string) {
	t.Helper()
	if o == nil {
		return cfg, "pinned MinIO"
	}
	f, err := Open(cfg, *o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	return f.Config(), o.Mode.String() + " front"
}
