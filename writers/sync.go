package writers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
)

// errStopped ends a sync whose writer stopped serving (fenced, crashed, closed).
var errStopped = errors.New("writer stopped")

// writeLog is the translog side of a writer: the ops buffered for the next sync, whether a
// sync is in flight, every .tlog of the lineage it serves, the generation of the last
// successful sync and the next one to use, and how many ops it acknowledged. Written by the
// sync loop, and by the relocation code while the loop is idle; guarded by the writer's mu.
type writeLog struct {
	buf     []int64
	syncing bool
	lineage []string
	lastGen int64
	nextGen int64
	acked   int64
}

// add buffers op for the next sync and returns how many ops are buffered.
func (l *writeLog) add(op int64) int {
	l.buf = append(l.buf, op)
	return len(l.buf)
}

// drop discards the buffered ops: they are never acknowledged.
func (l *writeLog) drop() { l.buf = nil }

// settled reports that no op is buffered and no sync is in flight.
func (l *writeLog) settled() bool { return len(l.buf) == 0 && !l.syncing }

// take starts a sync of every buffered op at term, in the next generation.
func (l *writeLog) take(term int64) batch {
	b := batch{term: term, gen: l.nextGen, ops: l.buf}
	l.nextGen++
	l.buf = nil
	l.syncing = true
	return b
}

// synced ends the sync in flight and reports whether another is due: every SyncEvery ops
// buffered, or any op when all is set.
func (l *writeLog) synced(every int, all bool) (more bool) {
	l.syncing = false
	return len(l.buf) >= every || (all && len(l.buf) > 0)
}

// commit records a successful sync of b, whose metadata named lineage: its ops are durable
// and about to be acknowledged.
func (l *writeLog) commit(b batch, lineage []string) {
	l.lineage = lineage
	l.lastGen = b.gen
	l.acked += int64(len(b.ops))
}

// grant takes over a lineage whose last generation is last, granted at fence chain seq s: the
// next generation is in the grant's band (grantBase).
func (l *writeLog) grant(lineage []string, last, s int64) {
	l.lineage, l.lastGen = lineage, last
	l.nextGen = grantBase(last, s)
}

// resume moves a resumed relocation source's next generation into the band of its revert,
// at chain seq s.
func (l *writeLog) resume(s int64) { l.nextGen = max(l.nextGen, grantBase(l.lastGen, s)) }

// syncLoop is the plumbing of a writer's sync loop: the kick that a full buffer sends, the
// drain requests of a relocation, done (closed when the loop exits; set with the writer's
// fence) and the loop's goroutine.
type syncLoop struct {
	kick     chan struct{}
	drainReq chan chan error
	done     chan struct{}
	wg       sync.WaitGroup
}

// start starts run as the sync loop, with done closed when it exits. The caller holds the
// writer's mu and has set its fence.
func (l *syncLoop) start(g *guard.Sink, name string, run func()) {
	l.done = make(chan struct{})
	l.wg.Add(1)
	g.Go(name, run, func() { close(l.done) }, l.wg.Done)
}

// wake asks the loop for a sync now, unless one is asked for already.
func (l *syncLoop) wake() {
	select {
	case l.kick <- struct{}{}:
	default:
	}
}

// drain asks the sync loop to sync every buffered op (and, if the writer never synced, to
// re-adopt the chain so it holds a token to transfer).
func (l *syncLoop) drain(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case l.drainReq <- reply:
	case <-l.done:
		return errStopped
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// startLoop starts the writer's sync loop. The caller holds w.mu and has set w.f.
func (w *Writer) startLoop() { w.loop.start(w.c.cfg.Guard, "the sync loop of "+w.id, w.syncLoop) }

// syncLoop runs the writer's syncs, one at a time and in generation order: when SyncEvery ops
// are buffered, every SyncInterval, and on a relocation's drain request.
// It ends when the writer's life does; startLoop then closes the loop's done.
func (w *Writer) syncLoop() {
	t := w.c.cfg.Clock.NewTicker(w.c.cfg.SyncInterval)
	defer t.Stop()
	for {
		var reply chan error
		select {
		case <-w.life.Done():
			return
		case <-w.loop.kick:
		case <-t.C:
		case reply = <-w.loop.drainReq:
		}
		err := w.flush(reply != nil)
		if reply != nil && err == nil && !w.c.cfg.NoFence && w.f.Token() == "" {
			// A source that never synced holds no token yet; transfer needs one.
			if _, err = w.advance(w.life); fence.IsFenced(err) {
				w.becomeFenced(w.f.Key(), err)
			}
		}
		if reply != nil {
			reply <- err
		}
		if errors.Is(err, errStopped) || fence.IsFenced(err) {
			return
		}
	}
}

// flush syncs buffered ops: everything buffered, batch after batch while at least SyncEvery
// are waiting (or until the buffer is empty when all is set).
func (w *Writer) flush(all bool) error {
	for {
		w.mu.Lock()
		if !w.role.serving() {
			w.mu.Unlock()
			return errStopped
		}
		if len(w.log.buf) == 0 {
			w.mu.Unlock()
			return nil
		}
		b := w.log.take(w.role.term)
		w.role.notify()
		w.mu.Unlock()

		err := w.syncBatch(b)

		w.mu.Lock()
		more := w.log.synced(w.c.cfg.SyncEvery, all)
		w.role.notify()
		w.mu.Unlock()
		if err != nil {
			return err
		}
		if !more {
			return nil
		}
	}
}

type batch struct {
	term, gen int64
	ops       []int64
}

// syncBatch runs sync attempts for one generation until one fully succeeds (its ops are
// acknowledged), the writer is fenced, or it stops. Its ops stay unacknowledged until then.
func (w *Writer) syncBatch(b batch) error {
	for attempt := 1; ; attempt++ {
		err := w.syncOnce(b, attempt)
		if err == nil {
			return nil
		}
		if fence.IsFenced(err) {
			w.becomeFenced(w.f.Key(), err)
			return err
		}
		if w.life.Err() != nil {
			return errStopped
		}
		if !w.backoff(w.life, attempt) {
			return errStopped
		}
	}
}

// syncOnce is one sync attempt: upload the generation's .tlog, upload the metadata file
// naming the whole lineage and wait for it, then the fence step, then acknowledge. With the
// cas-concurrent-with-metadata variant the fence step runs concurrently with the metadata
// upload; the ack still needs both.
func (w *Writer) syncOnce(b batch, attempt int) error {
	ctx := w.life
	sh := w.c.cfg.Shard
	o := origin{Writer: w.id, Alloc: w.alloc, Node: w.node, Term: b.term, Gen: b.gen, Attempt: attempt}
	tlog := sh.TlogKey(b.term, b.gen, w.alloc)
	meta := sh.MetadataKey(b.term, b.gen, w.alloc)
	sp := w.begin(history.Event{Kind: history.Sync, Term: b.term, Key: meta, Ops: b.ops,
		Detail: fmt.Sprintf("gen=%d attempt=%d", b.gen, attempt)})
	fail := func(err error) error {
		sp.End(fenceOutcome(err), err)
		return err
	}

	if _, err := w.st.Put(ctx, tlog, encodeTlog(o, b.ops)); err != nil {
		return fail(err)
	}
	w.mu.Lock()
	lineage := append(slices.Clone(w.log.lineage), tlog)
	w.mu.Unlock()
	body := encodeList(metadataMagic, o, lineage)

	var (
		casInvoke time.Duration
		metaErr   error
		casErr    error
	)
	switch {
	case w.c.cfg.NoFence:
		_, metaErr = w.st.Put(ctx, meta, body)
		casInvoke = w.c.cfg.Recorder.Now()
	case w.c.cfg.Variant == fence.CASConcurrentWithMetadata:
		done := make(chan struct{})
		w.c.cfg.Guard.Go("the metadata write of "+w.id, func() { _, metaErr = w.st.Put(ctx, meta, body) }, func() { close(done) })
		casInvoke, casErr = w.advance(ctx)
		<-done
	default:
		if _, metaErr = w.st.Put(ctx, meta, body); metaErr == nil {
			casInvoke, casErr = w.advance(ctx)
		}
	}
	if casErr != nil {
		return fail(casErr)
	}
	if metaErr != nil {
		return fail(metaErr)
	}

	var seq int64
	var key string
	if !w.c.cfg.NoFence {
		seq, key = w.f.Seq(), w.f.Key()
	}
	w.mu.Lock()
	w.log.commit(b, lineage)
	w.role.synced, w.role.seq = true, seq
	w.role.notify()
	w.mu.Unlock()
	// Replicated after the lineage names the ops and before they are acknowledged, as a
	// primary acknowledges a write only once its replicas were sent it.
	w.replicate(b.ops)
	sp.Event().Seq = seq
	sync := sp.End(history.OK, nil)
	ack := w.record(history.Event{Kind: history.Ack, Invoke: casInvoke, Term: b.term, Ops: b.ops, Seq: seq, Key: key})
	w.emit(history.SigSynced, sync, 0)
	w.emit(history.SigAcked, ack, len(b.ops))
	return nil
}

// advance runs the fence step of a sync and records it: the re-adoption claim (Claim with
// Detail "readopt") or, for a relocation target, the adoption (Adopt) when the instance
// holds no token yet; a CAS otherwise. It returns the step's invoke time, which is the Ack's.
func (w *Writer) advance(ctx context.Context) (time.Duration, error) {
	f := w.f
	w.mu.Lock()
	term, target := w.role.term, w.role.target
	w.mu.Unlock()
	presented := f.Token()
	e := history.Event{Term: term, Key: f.Key()}
	var sig history.SignalKind
	switch {
	case presented == "" && target:
		e.Kind, sig = history.Adopt, history.SigAdopted
	case presented == "":
		e.Kind, e.Detail, sig = history.Claim, "readopt", history.SigClaimed
	default:
		e.Kind, e.Token, e.Seq, sig = history.CAS, presented, f.Seq()+1, history.SigCAS
	}
	sp := w.begin(e)
	invoke := sp.Event().Invoke
	err := f.Advance(ctx)
	if err == nil {
		sp.Event().Token, sp.Event().Seq = f.Token(), f.Seq()
	}
	ev := sp.End(fenceOutcome(err), err)
	if err == nil {
		w.emit(sig, ev, 0)
	}
	return invoke, err
}
