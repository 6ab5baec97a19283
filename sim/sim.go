package sim

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/store"
)

// Options configure a [Bench].
type Options struct {
	// Prefix is the key prefix every call of a path must stay under; it must end in "/".
	Prefix string
	// Clock converts scenario durations (delays, deadlines) to real ones; nil is real time.
	Clock *wait.Clock
	// Now stamps ledger entries, typically the run's history recorder's Now (scenario time).
	Now func() time.Duration
	// Record receives the fault-start and fault-end events of every path's [faults.Set].
	Record func(history.Event)
	// Timeout is a writer's deadline per call, in scenario time: a call held by a blackhole or
	// a one-way path fails with an unknown outcome when it passes. 0 means 2s.
	Timeout time.Duration
}

// Bench owns the simulated fault paths of one run over one in-memory store, and the ledger.
// Its methods are safe for concurrent use.
type Bench struct {
	mem    *store.Mem
	o      Options
	nextID atomic.Int64
	ctx    context.Context // ended by Close: releases held calls
	cancel context.CancelFunc
	late   sync.WaitGroup // delayed requests still on their way to the store
	busy   atomic.Int64   // the same count, readable while requests still arrive (Drain)

	mu     sync.Mutex
	paths  map[string]*Path
	ledger []history.LedgerEntry
}

// New returns a bench over mem.
func New(mem *store.Mem, o Options) (*Bench, error) {
	if !strings.HasSuffix(o.Prefix, "/") || strings.HasPrefix(o.Prefix, "/") {
		return nil, fmt.Errorf("sim: prefix %q must end in / and not start with one", o.Prefix)
	}
	if o.Now == nil {
		o.Now = o.Clock.Stopwatch()
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	b := &Bench{mem: mem, o: o, paths: map[string]*Path{}}
	b.ctx, b.cancel = context.WithCancel(context.Background())
	return b, nil
}

// Path returns the writer's path, creating it on first use.
func (b *Bench) Path(writer string) *Path {
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.paths[writer]; ok {
		return p
	}
	p := &Path{b: b, writer: writer, rules: faults.NewRules(writer)}
	p.set = faults.NewSet(writer, p, b.o.Record)
	b.paths[writer] = p
	return p
}

// Ledger returns every request the paths received, in arrival order, once the delayed ones
// still on their way have landed.
func (b *Bench) Ledger() []history.LedgerEntry {
	b.late.Wait()
	b.mu.Lock()
	defer b.mu.Unlock()
	out := append([]history.LedgerEntry(nil), b.ledger...)
	sortLedger(out)
	return out
}

// Drain waits until every delayed request has landed at the store, or ctx ends. Call it once
// the writers stopped, before reading the store directly.
func (b *Bench) Drain(ctx context.Context) error {
	// Not late.Wait: a writer may still send meanwhile, and a WaitGroup must not be waited
	// on while it is being added to.
	for b.busy.Load() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("sim: delayed requests still on their way: %w", ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
	return nil
}

// Close releases every held call and waits for delayed requests to land.
func (b *Bench) Close() error {
	b.cancel()
	b.late.Wait()
	return nil
}

func (b *Bench) record(e history.LedgerEntry) {
	b.mu.Lock()
	b.ledger = append(b.ledger, e)
	b.mu.Unlock()
}

// sortLedger puts entries, appended when a request finishes, in arrival order (ID order), as
// the proxy's ledger is.
func sortLedger(l []history.LedgerEntry) {
	slices.SortFunc(l, func(a, b history.LedgerEntry) int { return cmp.Compare(a.ID, b.ID) })
}

// errUnknown is the transport-level failure a writer sees when its call's answer never comes.
var errUnknown = errors.New("connection lost: no answer")

func unknown(op, key string, why string) error {
	return &store.Error{Op: op, Key: key, Kind: store.ErrAmbiguous, Err: fmt.Errorf("%w (%s)", errUnknown, why)}
}
