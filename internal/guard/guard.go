package guard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
)

// Sink collects the panics of the goroutines of one unit of work.
type Sink struct {
	cancel context.CancelCauseFunc // nil for the default sink

	mu     sync.Mutex
	panics []error
}

// Default receives the panics of goroutines started without a sink of their own.
var Default = &Sink{}

type ctxKey struct{}

// New returns a context carrying a new sink, canceled (with the panic as cause) when a
// goroutine of the sink panics.
func New(parent context.Context) (context.Context, *Sink) {
	ctx, cancel := context.WithCancelCause(parent)
	s := &Sink{cancel: cancel}
	return context.WithValue(ctx, ctxKey{}, s), s
}

// From returns the sink ctx carries, or Default.
func From(ctx context.Context) *Sink {
	if s, ok := ctx.Value(ctxKey{}).(*Sink); ok {
		return s
	}
	return Default
}

// Go starts fn on a goroutine of ctx's sink.
func Go(ctx context.Context, name string, fn func(), done ...func()) { From(ctx).Go(name, fn, done...) }

// Go starts fn on a new goroutine; a panic in fn is recovered and reported to s. name says
// which goroutine it was in the error. The done functions run in order when the goroutine
// ends, however it ends, after a panic was reported: whoever waits for them (a WaitGroup, a
// closed channel) sees the panic in s once they ran.
func (s *Sink) Go(name string, fn func(), done ...func()) {
	go func() {
		defer func() {
			for _, d := range done {
				d()
			}
		}()
		defer s.Recover(name)
		hook(name)
		fn()
	}()
}

// Recover, deferred at the top of a goroutine, recovers its panic and reports it to s.
func (s *Sink) Recover(name string) {
	if p := recover(); p != nil {
		s.report(name, p)
	}
}

// Handler wraps h so that a panic while serving a request is reported to s; the connection
// is then aborted, as net/http does for any handler panic.
func (s *Sink) Handler(name string, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if p := recover(); p != nil {
				if p != http.ErrAbortHandler {
					s.report(name, p)
				}
				panic(http.ErrAbortHandler)
			}
		}()
		hook(name)
		h.ServeHTTP(w, r)
	})
}

func (s *Sink) report(name string, p any) {
	if s == nil {
		s = Default
	}
	err := fmt.Errorf("panic in %s: %v\n%s", name, p, debug.Stack())
	s.mu.Lock()
	s.panics = append(s.panics, err)
	s.mu.Unlock()
	if s.cancel != nil {
		s.cancel(err)
	}
}

// Err joins every panic reported so far; nil when there was none.
func (s *Sink) Err() error {
	if s == nil {
		s = Default
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return errors.Join(s.panics...)
}

var hookFn atomic.Pointer[func(name string)]

// SetTestHook makes every guarded goroutine and handler call fn with its name before its own
// work, so a test can make a chosen one panic. It returns a function restoring the previous hook.
func SetTestHook(fn func(name string)) (restore func()) {
	prev := hookFn.Swap(&fn)
	return func() { hookFn.Store(prev) }
}

func hook(name string) {
	if fn := hookFn.Load(); fn != nil && *fn != nil {
		(*fn)(name)
	}
}
