package writers

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// A recovery is a standby copy becoming a replica of the primary while the primary works:
// the situation of Elasticsearch's fix for primary relocation during replica recoveries. It
// runs in the order that fix relies on:
//
//  1. start: the copy registers with its source primary, which from then on replicates every
//     op it acknowledges to the copy (the source refuses while it is relocating, so a
//     relocation's handoff carries every recovery its source started);
//  2. phase 1: the copy hydrates the segment files from the store;
//  3. the copy opens its engine: only from now on does it apply replicated ops (an op
//     replicated before is dropped, as a recovering shard that is not ready ignores it);
//  4. the check: if the primary relocated (or another copy was promoted) since the start,
//     the recovery fails and starts over from the current primary;
//  5. phase 2: the source takes its snapshot (the .tlog files of the lineage it knows) and
//     the copy reads those files from the store;
//  6. finish: the copy's ops are the snapshot's plus every op applied since step 3.
//
// Every op acknowledged before the finish is then in the copy: acknowledged by the source
// before step 3, it is in the snapshot; after, it was replicated to an open engine. Two
// invariants make that hold across a relocation: the relocation target replicates to every
// recovery its source had started (the variant target-ignores-recoveries breaks it), and an
// op the target replicated before the engine opened is in no snapshot, which the check of
// step 4 catches (the variant recovery-no-relocation-check skips it).

// replication is a writer's part in recoveries: the copies with an ongoing or finished
// recovery from it, which it replicates every acknowledged op to; the number of times it
// handed its primary context over (a recovery that started before a handoff fails its
// check); and, while it recovers itself, its replica state. Guarded by the writer's mu.
type replication struct {
	recoveries []*Writer
	epoch      int64
	replica    *replica
}

// follow adds the copies rs to those w replicates to (once each).
func (p *replication) follow(rs ...*Writer) {
	for _, r := range rs {
		if !slices.Contains(p.recoveries, r) {
			p.recoveries = append(p.recoveries, r)
		}
	}
}

// begin starts a recovery attempt of the writer's own: an engine not open yet, no ops.
func (p *replication) begin() { p.replica = &replica{ops: map[int64]struct{}{}} }

// open opens the recovering engine: replicated ops are applied from now on.
func (p *replication) open() { p.replica.open = true }

// end ends the recovery attempt: replicated ops are ignored from now on.
func (p *replication) end() { p.replica.done = true }

// finish ends the recovery attempt with the snapshot's ops: it returns the copy's op set
// (sorted, distinct) and how many replicated ops were dropped before the engine opened.
func (p *replication) finish(snapshot []int64) (ops []int64, dropped int) {
	for _, op := range snapshot {
		p.replica.ops[op] = struct{}{}
	}
	p.end()
	return sortedUnique(mapKeys(p.replica.ops)), p.replica.dropped
}

// apply is a replicated batch reaching the copy: applied once its engine is open, dropped
// before, ignored once its recovery ended (or when it never recovered).
func (p *replication) apply(ops []int64) {
	switch r := p.replica; {
	case r == nil || r.done:
	case !r.open:
		r.dropped += len(ops)
	default:
		for _, op := range ops {
			r.ops[op] = struct{}{}
		}
	}
}

// replica is the state of a recovering copy, guarded by its writer's mu.
type replica struct {
	open    bool // the engine is open: replicated ops are applied
	done    bool // the recovery finished or failed: replicated ops are ignored
	ops     map[int64]struct{}
	dropped int // ops replicated before the engine opened
}

// Recovery is the result of Recover.
type Recovery struct {
	// Source is the primary the successful attempt recovered from.
	Source string
	// Snapshot is the source's lineage when it took its snapshot: the .tlog files read.
	Snapshot []string
	// Ops is the copy's op set when the recovery finished: the snapshot's ops and every op
	// replicated to it after its engine opened; sorted and distinct.
	Ops []int64
	// Missing lists snapshot .tlog files that were not found.
	Missing []string
	// Segments are the segment files hydrated.
	Segments []string
	// Attempts is the number of attempts, the successful one included.
	Attempts int
}

// Recover makes a standby copy a replica of the primary while the primary works; see the
// steps above. from is the source of the first attempt (nil: the current primary); a retry
// always recovers from the current primary. Each attempt is one RestoreRead span at term 0
// from its start to its end, with the copy's ops at the finish (Outcome ok) or the reason
// the attempt failed (Outcome fail); phase 1 records Hydrate events with Detail "recovery".
// Signals: recovery-started, engine-opened, recovered (or recovery-failed). Recover retries
// until an attempt succeeds or ctx ends.
func (w *Writer) Recover(ctx context.Context, from *Writer) (Recovery, error) {
	w.mu.Lock()
	if w.role.state != StateStandby {
		st := w.role.state
		w.mu.Unlock()
		return Recovery{}, fmt.Errorf("recover %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	w.role.become(StateRecovering)
	w.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()
	defer w.leave(StateRecovering, StateStandby)
	src := from
	for attempt := 1; ; attempt++ {
		if src == nil {
			src = w.c.currentPrimary()
		}
		var (
			rc  Recovery
			err error
		)
		if src != nil && src != w {
			rc, err = w.recoverOnce(ctx, src)
			if err == nil {
				rc.Attempts = attempt
				return rc, nil
			}
		}
		if ctx.Err() != nil {
			return Recovery{}, fmt.Errorf("recover %s: %w", w.id, ctx.Err())
		}
		if !w.backoff(ctx, min(attempt, 4)) {
			return Recovery{}, fmt.Errorf("recover %s: %w", w.id, ctx.Err())
		}
		src = nil
	}
}

// recoverOnce is one attempt from src.
func (w *Writer) recoverOnce(ctx context.Context, src *Writer) (Recovery, error) {
	rc := Recovery{Source: src.id}
	grants := w.c.grants.Load()
	term, epoch, ok := src.register(w)
	if !ok {
		return rc, fmt.Errorf("recover %s: %s is not serving", w.id, src.id)
	}
	w.mu.Lock()
	w.repl.begin()
	w.mu.Unlock()
	start := w.c.cfg.Recorder.Now()
	e := history.Event{Kind: history.RestoreRead, Writer: w.id, Invoke: start, Detail: "recovery from " + src.id}
	w.emit(history.SigRecoveryStarted, e, 0)
	fail := func(err error) (Recovery, error) {
		w.mu.Lock()
		w.repl.end()
		w.mu.Unlock()
		e.Outcome, e.Err, e.Complete = history.Fail, err.Error(), max(start, w.c.cfg.Recorder.Now())
		ev := w.c.cfg.Recorder.Record(e)
		w.emit(history.SigRecoveryFailed, ev, 0)
		return rc, fmt.Errorf("recover %s: %w", w.id, err)
	}

	hy, err := w.hydrate(ctx, 0, "recovery")
	if err != nil {
		return fail(err)
	}
	rc.Segments = hy.refs
	w.mu.Lock()
	w.repl.open()
	w.mu.Unlock()
	w.emit(history.SigEngineOpened, history.Event{Writer: w.id}, 0)
	if w.c.cfg.Variant != fence.RecoveryNoRelocationCheck {
		if why := w.c.primaryMoved(src, term, epoch, grants); why != "" {
			return fail(errors.New(why + " after the recovery started: the recovery fails and starts over"))
		}
	}

	src.mu.Lock()
	rc.Snapshot = slices.Clone(src.log.lineage)
	src.mu.Unlock()
	ops, missing, err := w.readSnapshot(ctx, rc.Snapshot)
	if err != nil {
		return fail(err)
	}
	rc.Missing = missing
	if why := w.c.sourceLost(src, term, grants); why != "" {
		return fail(errors.New(why + " before the recovery finished"))
	}

	// The finish: the op set and the instant are taken together, under the lock replicated
	// ops are applied under, so an op acknowledged before the instant is in the set.
	w.mu.Lock()
	var dropped int
	rc.Ops, dropped = w.repl.finish(ops)
	e.Complete = max(start, w.c.cfg.Recorder.Now())
	w.mu.Unlock()
	e.Ops = rc.Ops
	e.Detail = fmt.Sprintf("recovery from %s: a snapshot of %d .tlog files; %d replicated ops dropped before the engine opened",
		src.id, len(rc.Snapshot), dropped)
	if len(missing) > 0 {
		e.Err = fmt.Sprintf("%d snapshot .tlog file(s) missing: %v", len(missing), missing)
	}
	ev := w.c.cfg.Recorder.Record(e)
	w.emit(history.SigRecovered, ev, 0)
	return rc, nil
}

// readSnapshot reads the .tlog files of a source's snapshot, retrying unknown outcomes.
func (w *Writer) readSnapshot(ctx context.Context, keys []string) (ops []int64, missing []string, err error) {
	for attempt := 1; ; attempt++ {
		ops, missing, err = readTlogs(ctx, w.c.cfg.Guard, w.st, keys)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return ops, missing, err
		}
		if !w.backoff(ctx, attempt) {
			return nil, nil, ctx.Err()
		}
	}
}

// register adds r to the copies w replicates to, if w is an active primary. It returns w's
// term and relocation epoch at that moment.
func (w *Writer) register(r *Writer) (term, epoch int64, ok bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.role.state != StateActive {
		return 0, 0, false
	}
	w.repl.follow(r)
	return w.role.term, w.repl.epoch, true
}

// replicate sends ops, just made durable and about to be acknowledged, to every copy with an
// ongoing or finished recovery from w.
func (w *Writer) replicate(ops []int64) {
	w.mu.Lock()
	to := slices.Clone(w.repl.recoveries)
	w.mu.Unlock()
	for _, r := range to {
		r.mu.Lock()
		r.repl.apply(ops)
		r.mu.Unlock()
	}
}

// currentPrimary is the copy a recovery starts from when none is named: the active writer
// at the highest term, preferring one that holds its fence chain, then the one promoted
// last (an equal-term twin supersedes the copy it was promoted beside).
func (c *Cluster) currentPrimary() *Writer {
	var best *Writer
	var bestTerm, bestGrant int64
	bestOwns := false
	for _, w := range c.Writers() {
		w.mu.Lock()
		st, term, f, grant := w.role.state, w.role.term, w.f, w.role.grant
		w.mu.Unlock()
		if st != StateActive {
			continue
		}
		owns := f != nil && f.Token() != ""
		better := best == nil || term > bestTerm ||
			(term == bestTerm && owns && !bestOwns) ||
			(term == bestTerm && owns == bestOwns && grant > bestGrant)
		if better {
			best, bestTerm, bestOwns, bestGrant = w, term, owns, grant
		}
	}
	return best
}

// primaryMoved is the check after the engine opened: why the primary a recovery started
// from is no longer the one to follow (relocated, lost, or another copy promoted), or "".
func (c *Cluster) primaryMoved(src *Writer, term, epoch, grants int64) string {
	src.mu.Lock()
	moved := src.repl.epoch != epoch
	src.mu.Unlock()
	if moved {
		return fmt.Sprintf("primary %s relocated", src.id)
	}
	return c.sourceLost(src, term, grants)
}

// sourceLost says why the source of a recovery can no longer complete it, or "": it stopped
// (fenced, crashed, closed), or another copy was promoted since the recovery started. A
// relocated source is not lost: its target carries the recovery on.
func (c *Cluster) sourceLost(src *Writer, term, grants int64) string {
	switch st := src.State(); st {
	case StateFenced, StateCrashed, StateClosed:
		return fmt.Sprintf("primary %s is %s", src.id, st)
	}
	if c.grants.Load() != grants || c.MaxTerm() > term {
		return "another copy was promoted"
	}
	if w := c.supersedes(src, term); w != "" {
		return fmt.Sprintf("%s was promoted after %s", w, src.id)
	}
	return ""
}

// supersedes names a copy promoted after src that is taking or holds its place: promoting or
// active at a higher term, or at src's term with a later grant (an equal-term twin), or one
// that synced there and has crashed or been fenced since, unless src synced past it on the
// term's key (src's chain is no longer its own, and what that copy acknowledged is not in
// src's snapshot), "" if none; a relocation target is none: it carries src's recoveries on.
func (c *Cluster) supersedes(src *Writer, term int64) string {
	src.mu.Lock()
	own, ownSeq := src.role.grant, src.role.seq
	src.mu.Unlock()
	for _, w := range c.Writers() {
		if w == src {
			continue
		}
		w.mu.Lock()
		st, t, g, synced, seq := w.role.state, w.role.term, w.role.grant, w.role.synced, w.role.seq
		w.mu.Unlock()
		stopped := (st == StateCrashed || st == StateFenced) && synced && (t != term || seq >= ownSeq)
		if (st == StatePromoting || st == StateActive || stopped) && g > 0 && (t > term || (t == term && g > own)) {
			return w.id
		}
	}
	return ""
}

func mapKeys(m map[int64]struct{}) []int64 {
	out := make([]int64, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	return out
}
