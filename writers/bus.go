package writers

import (
	"context"
	"sync"

	"github.com/fencebench/fencebench/history"
)

// Signal is one protocol event of one writer. Its Kind is one of history's Sig constants (the
// `after: {event: ...}` vocabulary of scenario files), emitted right after the history event it
// stands for was recorded; every constant is emitted by some writer (internal/deps holds it).
type Signal struct {
	Writer string
	Kind   history.SignalKind
	Term   int64
	// N is the occurrence number: this is the N-th signal of Kind from Writer (from 1). For
	// history.SigAcked it counts acks (syncs), not ops; Acked counts ops.
	N int
	// Acked is the writer's running total of acknowledged ops (after this signal).
	Acked int64
	// Event is the history event the signal stands for (zero for signals without one).
	Event history.Event
}

// Bus delivers writer signals to subscribers and lets a caller wait for the n-th occurrence
// of one. It is safe for concurrent use. Counts start with the bus, so a wait for an
// occurrence that already happened returns at once.
type Bus struct {
	mu     sync.Mutex
	counts map[busKey]int
	acked  map[string]int64
	subs   map[int]func(Signal)
	nextID int
	// changed is closed and replaced on every signal, waking every waiter.
	changed chan struct{}
}

type busKey struct {
	writer string
	kind   history.SignalKind
}

// NewBus returns an empty bus.
func NewBus() *Bus {
	return &Bus{counts: map[busKey]int{}, acked: map[string]int64{}, subs: map[int]func(Signal){},
		changed: make(chan struct{})}
}

// Subscribe calls fn for every later signal, synchronously on the goroutine of the writer that
// emitted it, before that writer makes its next store call. fn must return promptly and must
// not call a blocking Writer method (it may call Pause, which only closes the writer's gate);
// start a goroutine for anything longer. cancel stops the subscription.
func (b *Bus) Subscribe(fn func(Signal)) (cancel func()) {
	b.mu.Lock()
	defer b.mu.Unlock()
	id := b.nextID
	b.nextID++
	b.subs[id] = fn
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}

func (b *Bus) emit(s Signal, ackedOps int) {
	b.mu.Lock()
	k := busKey{s.Writer, s.Kind}
	b.counts[k]++
	s.N = b.counts[k]
	b.acked[s.Writer] += int64(ackedOps)
	s.Acked = b.acked[s.Writer]
	subs := make([]func(Signal), 0, len(b.subs))
	for _, fn := range b.subs {
		subs = append(subs, fn)
	}
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
	for _, fn := range subs {
		fn(s)
	}
}

// Count returns how many signals of kind writer has emitted.
func (b *Bus) Count(writer string, kind history.SignalKind) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.counts[busKey{writer, kind}]
}

// Acked returns the number of ops writer has acknowledged.
func (b *Bus) Acked(writer string) int64 {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.acked[writer]
}

// Wait blocks until writer has emitted kind at least n times (n >= 1), or ctx ends.
func (b *Bus) Wait(ctx context.Context, writer string, kind history.SignalKind, n int) error {
	return b.waitFor(ctx, func() bool { return b.counts[busKey{writer, kind}] >= n })
}

// WaitAcked blocks until writer has acknowledged at least ops ops, or ctx ends.
func (b *Bus) WaitAcked(ctx context.Context, writer string, ops int64) error {
	return b.waitFor(ctx, func() bool { return b.acked[writer] >= ops })
}

// waitFor evaluates cond under the bus lock until it holds.
func (b *Bus) waitFor(ctx context.Context, cond func() bool) error {
	for {
		b.mu.Lock()
		ok, ch := cond(), b.changed
		b.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// waitAckedOrStopped blocks until writer has acknowledged at least ops ops (served), or has
// emitted one of stops since the wait began (it stopped before it served), or ctx ends.
func (b *Bus) waitAckedOrStopped(ctx context.Context, writer string, ops int64, stops ...history.SignalKind) (served bool, err error) {
	b.mu.Lock()
	before := make([]int, len(stops))
	for i, k := range stops {
		before[i] = b.counts[busKey{writer, k}]
	}
	b.mu.Unlock()
	err = b.waitFor(ctx, func() bool {
		if served = b.acked[writer] >= ops; served {
			return true
		}
		for i, k := range stops {
			if b.counts[busKey{writer, k}] > before[i] {
				return true
			}
		}
		return false
	})
	return served, err
}
