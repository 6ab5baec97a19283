package writers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// State is where a writer is in its life. A Writer lives once: standby -> (promoting or
// relocation target) -> active -> a terminal state. A restart is a new Writer (Restart).
type State string

// States.
const (
	StateStandby    State = "standby"    // idle copy; may be promoted, recover, or receive a handoff
	StateRecovering State = "recovering" // a standby copy recovering from the primary (Recover)
	StatePromoting  State = "promoting"  // seal -> restore read -> hydrate in progress
	StateTarget     State = "target"     // relocation target waiting for (or processing) the handoff
	StateActive     State = "active"     // believes it is primary: takes ops and syncs
	StateRelocating State = "relocating" // relocation source: ops blocked, draining/transferring/handing off
	StateRelocated  State = "relocated"  // relocation source after a completed handoff
	StateStoodDown  State = "stood-down" // relocation source after a refused revert
	StateFenced     State = "fenced"     // learned it is fenced; acknowledges nothing, ever
	StateCrashed    State = "crashed"    // stopped at once
	StateClosed     State = "closed"     // stopped by Close at the end of a run
)

// ErrNotServing is returned (wrapped) when a writer is asked to do something its state does
// not allow: take an op while not active, promote while not standby, and so on.
var ErrNotServing = errors.New("writer is not in a state that allows this")

// genStride spaces the generation bands of successive grants of a term's lineage; see
// grantBase.
const genStride = 1024

// Writer is one simulated shard copy. Every exported method is safe for concurrent use.
//
// A Writer composes the parts of its state, each with its own methods: its role (where it is
// in its life, its term and grant), its write log (buffered ops, the lineage it serves and
// the generations of its syncs), its segments (the reference sets it hydrated or published),
// its replication (the copies recovering from it, or its own recovery), the sync loop's
// plumbing, and the link its relocation handoffs travel. One mutex, mu, guards role, log,
// segs and repl together: a step that reads one and changes another (an op taken only while
// active, a grant that sets the term, the lineage and the segments) happens at once.
type Writer struct {
	c     *Cluster
	id    string
	node  string
	alloc string
	raw   store.Store
	rec   *RecordingStore
	st    store.Store // the writer's path: pause gate -> recording -> raw client
	gate  gate

	life context.Context // ends on Crash or Close
	kill context.CancelFunc
	loop syncLoop

	// f is the writer's guarded translog fence instance, set once before the sync loop starts
	// and never replaced.
	f *fence.Fence

	mu   sync.Mutex
	role role
	log  writeLog
	segs segments
	repl replication

	// link carries the handoffs this writer sends as a relocation source.
	link HandoffLink
}

func newWriter(c *Cluster, spec WriterSpec, alloc string) *Writer {
	w := &Writer{c: c, id: spec.ID, node: spec.NodeID, alloc: alloc, raw: spec.Store,
		role: role{state: StateStandby, changed: make(chan struct{})},
		loop: syncLoop{kick: make(chan struct{}, 1), drainReq: make(chan chan error)}}
	w.rec = NewRecordingStore(spec.Store, c.cfg.Recorder, spec.ID)
	w.st = gatedStore{g: &w.gate, inner: w.rec}
	w.life, w.kill = context.WithCancel(context.Background())
	return w
}

// Handoffs is the link the writer's relocation handoffs travel to their target: the target
// of the handoff faults (faults.HandoffFault) of its relocations.
func (w *Writer) Handoffs() *HandoffLink { return &w.link }

// ID is the writer's id. Node is its node id. Alloc is its allocation id.
func (w *Writer) ID() string { return w.id }

// Node is the writer's node id.
func (w *Writer) Node() string { return w.node }

// Alloc is the writer's allocation id (unique per incarnation).
func (w *Writer) Alloc() string { return w.alloc }

// State returns the writer's state.
func (w *Writer) State() State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.role.state
}

// Term returns the term the writer was promoted at (or took over by relocation), 0 before.
func (w *Writer) Term() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.role.term
}

// Acked returns how many ops the writer has acknowledged.
func (w *Writer) Acked() int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.log.acked
}

// BelievesPrimary reports whether the writer currently believes it is primary: it is active.
// A paused writer, or one superseded without having noticed, still believes it.
func (w *Writer) BelievesPrimary() bool { return w.State() == StateActive }

// Paused reports whether the writer is frozen.
func (w *Writer) Paused() bool { return w.gate.isPaused() }

// Store returns the writer's recorded path to the store (pause gate included), for callers
// that must act exactly as the writer would.
func (w *Writer) Store() store.Store { return w.st }

// Fence returns the writer's guarded translog fence instance, nil before it became active.
func (w *Writer) Fence() *fence.Fence {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.f
}

func (w *Writer) setState(s State) {
	w.mu.Lock()
	w.role.become(s)
	w.mu.Unlock()
}

// leave moves the writer from state from to state to, if it is still in from: a relocation
// source that did not get as far as transferring serves again, a reserved target is a
// standby copy again.
func (w *Writer) leave(from, to State) {
	w.mu.Lock()
	w.role.leave(from, to)
	w.mu.Unlock()
}

// bind returns a context that ends when ctx or the writer's life ends.
func (w *Writer) bind(ctx context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(w.life, cancel)
	return ctx, func() { stop(); cancel() }
}

func (w *Writer) record(e history.Event) history.Event {
	e.Writer = w.id
	return w.c.cfg.Recorder.Record(e)
}

func (w *Writer) begin(e history.Event) *history.Span {
	e.Writer = w.id
	return w.c.cfg.Recorder.Begin(e)
}

func (w *Writer) emit(kind history.SignalKind, e history.Event, ackedOps int) {
	w.c.bus.emit(Signal{Writer: w.id, Kind: kind, Term: e.Term, Event: e}, ackedOps)
}

func (w *Writer) fenceOptions(term int64, guarded bool, variant fence.Variant) fence.Options {
	return fence.Options{Store: w.st, Prefix: w.c.cfg.Shard.TranslogMetadataPrefix(),
		IndexUUID: w.c.cfg.Shard.IndexUUID, ShardID: w.c.cfg.Shard.ID, AllocationID: w.alloc,
		NodeID: w.node, Term: term, Guarded: guarded, Variant: variant}
}

// Submit hands client op to the writer. An active writer buffers it (recording an Op event)
// and it is acknowledged by a later sync, or never; any other writer refuses it (an Op event
// with Outcome fail) and returns an error wrapping ErrNotServing.
func (w *Writer) Submit(op int64) error {
	w.mu.Lock()
	if w.role.state != StateActive {
		st := w.role.state
		w.record(history.Event{Kind: history.Op, Ops: []int64{op}, Term: w.role.term, Outcome: history.Fail,
			Err: fmt.Sprintf("writer %s is %s", w.id, st)})
		w.mu.Unlock()
		return fmt.Errorf("writer %s is %s: %w", w.id, st, ErrNotServing)
	}
	n := w.log.add(op)
	// Recorded under the lock so the op's event precedes any sync that takes it.
	w.record(history.Event{Kind: history.Op, Ops: []int64{op}, Term: w.role.term})
	w.role.notify()
	w.mu.Unlock()
	if n >= w.c.cfg.SyncEvery {
		w.loop.wake()
	}
	return nil
}

// Pause freezes the writer: its next store call (and every one after it) waits until
// Resume, while everything else — buffering ops, believing it is primary — goes on, as in a
// long GC pause. A call already on the wire completes. Pausing a paused writer does nothing.
func (w *Writer) Pause() {
	if w.gate.pause() {
		e := w.record(history.Event{Kind: history.Pause, Term: w.Term()})
		w.emit(history.SigPaused, e, 0)
	}
}

// Resume thaws a paused writer; it carries on with the state it had, unaware of anything
// that happened meanwhile.
func (w *Writer) Resume() {
	if w.gate.resume() {
		e := w.record(history.Event{Kind: history.Resume, Term: w.Term()})
		w.emit(history.SigResumed, e, 0)
	}
}

// Crash stops the writer at once: its context is cancelled (a request on the wire is
// abandoned mid-flight), buffered ops are dropped unacknowledged, and Crash waits for its
// goroutines to exit. It must not be called from a Bus subscriber. A crashed writer never
// acts again; Restart builds its next incarnation.
func (w *Writer) Crash() {
	w.mu.Lock()
	if w.role.state == StateCrashed || w.role.state == StateClosed {
		w.mu.Unlock()
		return
	}
	w.log.drop()
	w.role.become(StateCrashed)
	term := w.role.term
	w.mu.Unlock()
	e := w.record(history.Event{Kind: history.Crash, Term: term})
	w.kill()
	w.loop.wg.Wait()
	w.emit(history.SigCrashed, e, 0)
}

// Close stops the writer like Crash but records nothing: the end of a run.
func (w *Writer) Close() {
	w.mu.Lock()
	if w.role.state != StateCrashed {
		w.role.state = StateClosed
	}
	w.log.drop()
	w.role.notify()
	w.mu.Unlock()
	w.kill()
	w.loop.wg.Wait()
}

// Restart builds the next incarnation of a crashed (or otherwise finished) writer and
// promotes it at term, which must be above every term in use for the seal to succeed. The
// incarnation is a new Writer with id as ("" means the old id followed by "'"; ids never
// repeat within a cluster), the same node and store path, and a new allocation id. It is
// returned even when the promotion fails.
func (w *Writer) Restart(ctx context.Context, as string, term int64) (*Writer, error) {
	switch w.State() {
	case StateCrashed, StateClosed, StateFenced, StateStoodDown, StateRelocated:
	default:
		return nil, fmt.Errorf("restart %s: it is %s: %w", w.id, w.State(), ErrNotServing)
	}
	if as == "" {
		as = w.id + "'"
	}
	nw, err := w.c.AddWriter(WriterSpec{ID: as, NodeID: w.node, Store: w.raw})
	if err != nil {
		return nil, err
	}
	w.c.cfg.Recorder.Record(history.Event{Kind: history.Restart, Writer: as, Detail: w.id})
	return nw, nw.Promote(ctx, term)
}

// Settle waits until the writer has no buffered op and no sync in flight, or is no longer
// serving. A paused writer does not settle: bound ctx.
func (w *Writer) Settle(ctx context.Context) error {
	for {
		w.mu.Lock()
		done := !w.role.serving() || w.log.settled()
		ch := w.role.changed
		w.mu.Unlock()
		if done {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return fmt.Errorf("settle %s: %w", w.id, ctx.Err())
		}
	}
}

// becomeFenced makes the writer fail for good after its fence said so, and records Fenced.
func (w *Writer) becomeFenced(key string, cause error) {
	w.mu.Lock()
	closed := w.role.state == StateClosed
	switch w.role.state {
	case StateFenced, StateCrashed:
		w.mu.Unlock()
		return
	case StateClosed:
		// The run ended while the answer came back: the writer stays closed and signals
		// nothing, but the history still says what it learned.
	default:
		w.log.drop()
		w.role.become(StateFenced)
	}
	term := w.role.term
	w.mu.Unlock()
	e := w.record(history.Event{Kind: history.Fenced, Term: term, Key: key, Outcome: history.FencedOut,
		Err: errText(cause)})
	if !closed {
		w.emit(history.SigFenced, e, 0)
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// fenceOutcome classifies a fence method's error for the history.
func fenceOutcome(err error) history.Outcome {
	switch {
	case err == nil:
		return history.OK
	case fence.IsFenced(err):
		return history.FencedOut
	case retryable(err):
		return history.Ambiguous
	default:
		return history.Fail
	}
}

// retryable reports whether an error leaves the outcome unknown or transient, so the step is
// tried again: an ambiguous store answer, a 409 conflict, a fence "retryable", a cancelled
// call.
func retryable(err error) bool {
	return fence.IsRetryable(err) || errors.Is(err, store.ErrAmbiguous) ||
		errors.Is(err, store.ErrConflict) || errors.Is(err, context.DeadlineExceeded)
}

// backoff sleeps before retry attempt n (from 1); false when ctx ended.
func (w *Writer) backoff(ctx context.Context, n int) bool {
	d := w.c.cfg.RetryBackoff
	for i := 1; i < n && d < 16*w.c.cfg.RetryBackoff; i++ {
		d *= 2
	}
	return w.c.cfg.Clock.For(ctx, d)
}

// grantBase is the first generation a writer uses after it was granted a lineage whose last
// generation is last, at fence chain seq s (the seal's seq for a promotion, the transfer's
// seq for a relocation target, the revert's seq for a resumed source).
//
// Why bands: the restore read follows the first metadata file in the listing, the highest
// (term, generation). Two copies can hold the same term — a relocation source and target, or
// an equal-term twin that sealed over a paused copy — and the one superseded within the term
// may still upload one metadata file before its fence step refuses it. Its generation must
// sort below every generation of the copy that superseded it, or the orphan would become the
// restore point and hide the newer copy's acknowledged ops (and its .tlog would overwrite
// theirs). Seqs grow along the term's chain in grant order, and every sync advances the seq,
// so placing each grant's generations at last+1+s*genStride puts a later grant strictly
// above anything an earlier grantee can still write.
func grantBase(last, s int64) int64 { return last + 1 + s*genStride }

// untold reports whether err is a refusal that says nothing about the request (the store's
// configuration refused it: a 403, a credential rotated, a policy not yet propagated). A
// relocation source's revert tries again after one, as after an unknown outcome: its
// retained token is still the only way back to the chain, and giving up would leave the
// source blocked for good, owning the chain or not.
func untold(err error) bool { return errors.Is(err, store.ErrConfig) }

// garbled reports whether err is a fence step's read-back that the instance could not
// recognise (an identity error: a misdirected or damaged answer about its own key after a
// write whose answer was lost). The write's outcome is still unknown, and the instance checks
// a retry's refusal by identity, so a relocation's transfer and revert try again after one:
// given up, the revert would leave its source blocked for good, and the transfer would leave
// it serving a chain it may have handed to a target that never adopts.
func garbled(err error) bool { return errors.Is(err, fence.ErrIdentity) }
