package system

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"
)

// ErrUnsupported is a process fault a launcher cannot inflict (pausing a node that runs
// inside the bench's process).
var ErrUnsupported = errors.New("not supported by this launcher")

// Handle is a started node as the runner drives it.
type Handle interface {
	Node
	Relocator // a node without the capability answers unsupported
	// WriteAt is Write, also saying when the answer arrived: for a process, when its line was
	// read (in the order of the node's stdout, events included); in process, when the node
	// returned.
	WriteAt(ctx context.Context, op int64, payload string) (term int64, at time.Time, err error)
	// Hello is the node's answer to init.
	Hello() Hello
	// Err is the node's first harness error, nil while it behaves.
	Err() error
	// Pause and Resume freeze and continue the node (ErrUnsupported when they cannot).
	Pause() error
	Resume() error
	// Kill ends the node at once; requests in flight fail with ErrCrashed.
	Kill()
}

// Launcher starts nodes of one system.
type Launcher interface {
	// Launch starts node cfg.Node; dir is the folder its stderr is kept in (the cell's).
	Launch(ctx context.Context, cfg Config, dir string, emit func(Event)) (Handle, error)
	// Describe names the system's command (or Go type) for reports.
	Describe() string
	// Pausable says whether Pause works on its nodes.
	Pausable() bool
}

// Command launches every node as a process of o.Command, its stderr in the folder Launch
// is given (o.Dir when that is empty).
func Command(o ProcOptions) Launcher { return cmdLauncher{o} }

type cmdLauncher struct{ o ProcOptions }

func (l cmdLauncher) Launch(ctx context.Context, cfg Config, dir string, emit func(Event)) (Handle, error) {
	o := l.o
	if dir != "" {
		o.Dir = dir
	}
	return StartProc(ctx, o, cfg, emit)
}
func (l cmdLauncher) Describe() string { return strings.Join(l.o.Command, " ") }
func (l cmdLauncher) Pausable() bool   { return true }

// InProcess launches nodes of a Go system inside the bench's process: the same messages as
// method calls, no pipes. Crash cancels the node's context; pause is not supported.
func InProcess(name string, sys System) Launcher { return goLauncher{name, sys} }

// RunsInProcess reports whether l starts its nodes inside the bench's process (InProcess):
// such nodes can run on the simulated stack, with its store and its clock.
func RunsInProcess(l Launcher) bool {
	_, ok := l.(goLauncher)
	return ok
}

type goLauncher struct {
	name string
	sys  System
}

func (l goLauncher) Describe() string { return l.name + " (in process)" }
func (l goLauncher) Pausable() bool   { return false }

func (l goLauncher) Launch(ctx context.Context, cfg Config, _ string, emit func(Event)) (Handle, error) {
	nctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	h := &goHandle{cancel: cancel, ctx: nctx}
	if emit == nil {
		emit = func(Event) {}
	}
	n, hello, err := l.sys.Start(nctx, cfg, func(e Event) {
		if h.ctx.Err() == nil {
			e.Node = cfg.Node
			emit(e)
		}
	})
	if err != nil {
		cancel()
		return nil, &HarnessError{Node: cfg.Node, Msg: "start: " + err.Error()}
	}
	h.n, h.hello = n, hello
	return h, nil
}

type goHandle struct {
	n      Node
	hello  Hello
	ctx    context.Context
	cancel context.CancelFunc
	once   sync.Once
}

func (h *goHandle) Hello() Hello  { return h.hello }
func (h *goHandle) Err() error    { return nil }
func (h *goHandle) Pause() error  { return ErrUnsupported }
func (h *goHandle) Resume() error { return ErrUnsupported }
func (h *goHandle) Kill()         { h.once.Do(h.cancel) }
func (h *goHandle) killed() error {
	if h.ctx.Err() != nil {
		return ErrCrashed
	}
	return nil
}

// both ends a call when either the caller's context or the node's ends.
func (h *goHandle) both(ctx context.Context) (context.Context, context.CancelFunc) {
	c, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(h.ctx, cancel)
	return c, func() { stop(); cancel() }
}

func (h *goHandle) Write(ctx context.Context, op int64, payload string) (int64, error) {
	t, _, err := h.WriteAt(ctx, op, payload)
	return t, err
}

func (h *goHandle) WriteAt(ctx context.Context, op int64, payload string) (int64, time.Time, error) {
	c, done := h.both(ctx)
	defer done()
	t, err := h.n.Write(c, op, payload)
	at := time.Now()
	if e := h.killed(); e != nil {
		return 0, at, e
	}
	return t, at, err
}

func (h *goHandle) Promote(ctx context.Context, term int64) error {
	c, done := h.both(ctx)
	defer done()
	err := h.n.Promote(c, term)
	if e := h.killed(); e != nil {
		return e
	}
	return err
}

func (h *goHandle) Relocate(ctx context.Context, term int64, target string) error {
	r, ok := h.n.(Relocator)
	if !ok {
		return &Error{Code: CodeUnsupported, Text: "the node does not implement relocate"}
	}
	c, done := h.both(ctx)
	defer done()
	err := r.Relocate(c, term, target)
	if e := h.killed(); e != nil {
		return e
	}
	return err
}

func (h *goHandle) Read(ctx context.Context, term int64) ([]int64, error) {
	c, done := h.both(ctx)
	defer done()
	ops, err := h.n.Read(c, term)
	if e := h.killed(); e != nil {
		return nil, e
	}
	return ops, err
}
