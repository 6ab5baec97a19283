package writers

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/store"
)

// RestorePoint is what a restore read found: the metadata file it followed and the ops of
// every .tlog that file names.
type RestorePoint struct {
	// Key is the metadata file followed, "" when the shard had none.
	Key string
	// Term and Gen are the term and generation in Key's name.
	Term, Gen int64
	// Tlogs are the .tlog keys Key names, in lineage order.
	Tlogs []string
	// Ops is the recovered op set, sorted and distinct.
	Ops []int64
	// Missing lists named .tlog files that were not found.
	Missing []string
}

// Promote makes a standby writer primary at term: seal (an unguarded, throwaway fence
// instance claims the term's fence object), read the restore point, hydrate segments, and
// become active with a new guarded translog fence instance whose first sync re-adopts the
// chain. The variants restore-before-claim and hydrate-before-seal move the read or the
// hydration ahead of the seal. Promote returns when the writer is active or the promotion
// failed: fenced (the writer is then fenced for good), or anything else (the writer is
// standby again and may be promoted anew).
func (w *Writer) Promote(ctx context.Context, term int64) error {
	if term <= 0 {
		return fmt.Errorf("promote %s: term %d must be positive", w.id, term)
	}
	w.mu.Lock()
	if err := w.role.grantable(term); err != nil {
		w.mu.Unlock()
		return fmt.Errorf("promote %s at term %d: %w", w.id, term, err)
	}
	w.role.term = term
	w.role.become(StatePromoting)
	w.mu.Unlock()
	w.c.noteTerm(term)
	g := w.c.grants.Add(1)
	w.mu.Lock()
	w.role.grant, w.role.synced, w.role.seq = g, false, 0
	w.mu.Unlock()

	ctx, cancel := w.bind(ctx)
	defer cancel()
	sp := w.begin(history.Event{Kind: history.Promote, Term: term, Key: w.c.cfg.Shard.FenceKey(term)})
	err := w.promote(ctx, term)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		// The history says why a promotion ended: a retry loop that meets its context's end
		// returns the failure it was retrying, not the end.
		err = fmt.Errorf("%w; the promotion was stopped: %w", err, ctx.Err())
	}
	ev := sp.End(fenceOutcome(err), err)
	switch {
	case err == nil:
		w.emit(history.SigPromoted, ev, 0)
	case fence.IsFenced(err):
		w.becomeFenced(w.c.cfg.Shard.FenceKey(term), err)
	default:
		w.leave(StatePromoting, StateStandby)
	}
	if err != nil {
		return fmt.Errorf("promote %s at term %d: %w", w.id, term, err)
	}
	return nil
}

func (w *Writer) promote(ctx context.Context, term int64) error {
	var (
		sealed *fence.Fence
		rp     RestorePoint
		hy     hydration
		err    error
	)
	seal := func() error { sealed, err = w.seal(ctx, term, w.c.cfg.Variant); return err }
	restore := func() error { rp, err = w.readRestore(ctx, term, true); return err }
	hydrate := func() error { hy, err = w.hydrate(ctx, term, ""); return err }
	order := []func() error{seal, restore, hydrate}
	switch w.c.cfg.Variant {
	case fence.RestoreBeforeClaim:
		order = []func() error{restore, seal, hydrate}
	case fence.HydrateBeforeSeal:
		order = []func() error{hydrate, seal, restore}
	}
	for _, step := range order {
		if err := step(); err != nil {
			return err
		}
	}
	// A restore point at this copy's term (or above) was written by a copy granted at or
	// after it: an equal-term twin that took the key after this seal may have synced, and its
	// lineage would then be this copy's base, from which this copy's generations would collide
	// with the twin's (see grantBase). The seal must still hold. A restore point below the term
	// was written before any grant at it, and a later grantee's bands lie above this copy's.
	if rp.Term >= term {
		if err := w.verifySeal(ctx, sealed); err != nil {
			return err
		}
	}
	sealSeq := sealed.Seq()
	f, err := fence.New(w.fenceOptions(term, true, w.c.cfg.Variant))
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.role.state != StatePromoting {
		return fmt.Errorf("writer became %s while promoting: %w", w.role.state, ErrNotServing)
	}
	w.f = f
	w.log.grant(rp.Tlogs, rp.Gen, sealSeq)
	w.segs.adopt(hy, term, sealSeq)
	w.role.become(StateActive)
	w.startLoop()
	return nil
}

// seal claims term's fence object with a throwaway unguarded instance, one per promotion,
// retrying the claim on it while the outcome is retryable. Claim promises that a failed claim
// holds nothing, so its retry re-runs the whole claim; the seal relies on that promise as a
// system built on the fence library would (reuse-half-claimed breaks it). It returns the
// instance, holding the chain seq and token the seal left.
func (w *Writer) seal(ctx context.Context, term int64, variant fence.Variant) (*fence.Fence, error) {
	key := w.c.cfg.Shard.FenceKey(term)
	f, err := fence.New(w.fenceOptions(term, false, variant))
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		sp := w.begin(history.Event{Kind: history.Claim, Term: term, Key: key, Detail: "seal"})
		err = f.Claim(ctx)
		e := sp.Event()
		e.Token, e.Seq = f.Token(), f.Seq()
		ev := sp.End(fenceOutcome(err), err)
		if err == nil {
			w.emit(history.SigClaimed, ev, 0)
			return f, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return nil, err
		}
		if !w.backoff(ctx, attempt) {
			return nil, ctx.Err()
		}
	}
}

// verifySeal checks that the seal's instance still holds the key (fence.Verify), retrying
// while the read's outcome is unknown.
func (w *Writer) verifySeal(ctx context.Context, f *fence.Fence) error {
	for attempt := 1; ; attempt++ {
		err := f.Verify(ctx)
		if err == nil || !retryable(err) || ctx.Err() != nil {
			return err
		}
		if !w.backoff(ctx, attempt) {
			return ctx.Err()
		}
	}
}

// readRestore reads the restore point: the first metadata file in the listing, then every
// .tlog it names. It records one RestoreRead span per attempt and retries attempts whose
// outcome was unknown. strict makes a missing .tlog an error (a promotion must not serve
// from a broken lineage); otherwise missing files are reported in the result.
func (w *Writer) readRestore(ctx context.Context, term int64, strict bool) (RestorePoint, error) {
	for attempt := 1; ; attempt++ {
		sp := w.begin(history.Event{Kind: history.RestoreRead, Term: term})
		rp, err := readRestorePoint(ctx, w.c.cfg.Guard, w.st, w.c.cfg.Shard)
		if err == nil && strict && len(rp.Missing) > 0 {
			err = fmt.Errorf("restore point %s names %d missing .tlog file(s), first %s", rp.Key, len(rp.Missing), rp.Missing[0])
		}
		e := sp.Event()
		e.Ops, e.Detail = rp.Ops, rp.Key
		if err == nil && len(rp.Missing) > 0 {
			e.Err = fmt.Sprintf("%d named .tlog file(s) missing: %v", len(rp.Missing), rp.Missing)
		}
		ev := sp.End(storeOutcome(err), err)
		if err == nil {
			w.emit(history.SigRestoreRead, ev, 0)
			return rp, nil
		}
		if !retryable(err) || ctx.Err() != nil {
			return rp, err
		}
		if !w.backoff(ctx, attempt) {
			return rp, ctx.Err()
		}
	}
}

// readRestorePoint does the store reads of a restore read.
func readRestorePoint(ctx context.Context, g *guard.Sink, s store.Store, sh Shard) (RestorePoint, error) {
	var rp RestorePoint
	es, err := s.List(ctx, sh.MetadataListPrefix())
	if err != nil {
		return rp, err
	}
	var first string
	for _, e := range es {
		if _, _, ok := parseMetadataName(e.Key); ok {
			first = e.Key
			break
		}
	}
	if first == "" {
		return rp, nil
	}
	rp.Key = first
	rp.Term, rp.Gen, _ = parseMetadataName(first)
	obj, err := s.Get(ctx, first)
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			// Metadata is never deleted; a vanished file is an unknown state: read again.
			return rp, &store.Error{Op: "get", Key: first, Kind: store.ErrAmbiguous, Err: err}
		}
		return rp, err
	}
	rp.Tlogs, err = decodeList(metadataMagic, obj.Body)
	if err != nil {
		return rp, err
	}
	rp.Ops, rp.Missing, err = readTlogs(ctx, g, s, rp.Tlogs)
	return rp, err
}

// readTlogs fetches and decodes the .tlog files keys names: the ops they hold, sorted and
// distinct, and the keys that were not found.
func readTlogs(ctx context.Context, g *guard.Sink, s store.Store, keys []string) (ops []int64, missing []string, err error) {
	bodies, missing, err := fetchAll(ctx, g, s, keys)
	if err != nil {
		return nil, nil, err
	}
	var all []int64
	for i, b := range bodies {
		if b == nil {
			continue
		}
		got, err := decodeTlog(b)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", keys[i], err)
		}
		all = append(all, got...)
	}
	return sortedUnique(all), missing, nil
}

// fetchAll GETs keys with bounded parallelism. A missing key leaves a nil body and is
// listed in missing; any other error fails the whole fetch.
func fetchAll(ctx context.Context, g *guard.Sink, s store.Store, keys []string) (bodies [][]byte, missing []string, err error) {
	bodies = make([][]byte, len(keys))
	errs := make([]error, len(keys))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		sem <- struct{}{}
		g.Go("a translog fetch", func() {
			obj, err := s.Get(ctx, k)
			bodies[i], errs[i] = obj.Body, err
		}, func() { <-sem }, wg.Done)
	}
	wg.Wait()
	for i, e := range errs {
		switch {
		case e == nil:
		case errors.Is(e, store.ErrNotFound):
			bodies[i] = nil
			missing = append(missing, keys[i])
		default:
			return nil, nil, e
		}
	}
	return bodies, missing, nil
}

// hydration is what a hydration fetched: the reference set it followed.
type hydration struct {
	key       string
	term, gen int64
	refs      []string
}

// hydrate lists the latest segment reference set and fetches every file it names, recording
// one Hydrate event per file (Detail marks why: "" for a promotion, "relocation-target",
// "recovery"). A listed file that is missing fails the attempt (recorded with Status 404);
// the hydration starts over from the listing, up to 5 attempts.
func (w *Writer) hydrate(ctx context.Context, term int64, why string) (hydration, error) {
	const attempts = 5
	var last error
	for attempt := 1; attempt <= attempts; attempt++ {
		hy, err := w.hydrateOnce(ctx, term, why)
		if err == nil {
			w.emit(history.SigHydrated, history.Event{Writer: w.id, Kind: history.Hydrate, Term: term, Key: hy.key, Detail: why}, 0)
			return hy, nil
		}
		last = err
		if ctx.Err() != nil || !(retryable(err) || errors.Is(err, store.ErrNotFound)) {
			return hy, err
		}
		if !w.backoff(ctx, attempt) {
			return hy, ctx.Err()
		}
	}
	return hydration{}, fmt.Errorf("hydration failed %d times: %w", attempts, last)
}

func (w *Writer) hydrateOnce(ctx context.Context, term int64, why string) (hydration, error) {
	var hy hydration
	sh := w.c.cfg.Shard
	es, err := w.st.List(ctx, sh.SegmentMetadataPrefix())
	if err != nil {
		return hy, err
	}
	for _, e := range es {
		if t, g, ok := parseMetadataName(e.Key); ok {
			hy.key, hy.term, hy.gen = e.Key, t, g
			break
		}
	}
	if hy.key == "" {
		return hy, nil
	}
	obj, err := w.st.Get(ctx, hy.key)
	if err != nil {
		return hy, err
	}
	if hy.refs, err = decodeList(segMetaMagic, obj.Body); err != nil {
		return hy, err
	}
	w.emit(history.SigHydrating, history.Event{Writer: w.id, Kind: history.Hydrate, Term: term, Key: hy.key, Detail: why}, 0)
	errs := make([]error, len(hy.refs))
	sem := make(chan struct{}, 8)
	var wg sync.WaitGroup
	for i, k := range hy.refs {
		wg.Add(1)
		sem <- struct{}{}
		w.c.cfg.Guard.Go("a segment fetch of "+w.id, func() {
			sp := w.begin(history.Event{Kind: history.Hydrate, Term: term, Key: k, Detail: why})
			_, err := w.st.Get(ctx, k)
			var se *store.Error
			if errors.As(err, &se) {
				sp.Event().Status, sp.Event().Code = se.Status, se.Code
			}
			sp.End(storeOutcome(err), err)
			errs[i] = err
		}, func() { <-sem }, wg.Done)
	}
	wg.Wait()
	for _, e := range errs {
		if e != nil {
			return hy, e
		}
	}
	return hy, nil
}
