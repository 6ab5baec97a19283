package writers

import (
	"context"
	"fmt"
	"slices"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// Refresh uploads new segment files, then publishes a new reference set — the newest
// MaxRefs files — if the publish gate allows (it refuses only when a higher term owns the
// fence, and fails open). A refused gate records Publish with Outcome fail and the gate's
// reason, and returns published false with a nil error. Only an active writer refreshes (a
// superseded one that has not noticed is still active: that is the case the gate exists for).
func (w *Writer) Refresh(ctx context.Context) (published bool, err error) {
	w.mu.Lock()
	if w.state != StateActive {
		st := w.state
		w.mu.Unlock()
		return false, fmt.Errorf("refresh %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	term := w.term
	first := w.segFile
	w.segFile += w.c.cfg.Segments.FilesPerRefresh
	w.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()

	sh := w.c.cfg.Shard
	var added []string
	for i := range w.c.cfg.Segments.FilesPerRefresh {
		name := fmt.Sprintf("%s_%d.seg", w.alloc, first+i)
		key := sh.SegmentKey(term, name)
		o := origin{Writer: w.id, Alloc: w.alloc, Node: w.node, Term: term}
		if _, err := w.st.Put(ctx, key, encodeSegment(o, name)); err != nil {
			return false, fmt.Errorf("refresh %s: %w", w.id, err)
		}
		added = append(added, key)
	}

	ok, reason := w.f.PublishAllowed(ctx)
	if !ok {
		w.record(history.Event{Kind: history.Publish, Term: term, Outcome: history.Fail, Err: reason})
		return false, nil
	}
	w.mu.Lock()
	refs := append(slices.Clone(w.segRefs), added...)
	if n := w.c.cfg.Segments.MaxRefs; len(refs) > n {
		refs = refs[len(refs)-n:]
	}
	w.segGen++
	gen := w.segGen
	w.mu.Unlock()
	key := sh.SegmentMetadataKey(term, gen)
	o := origin{Writer: w.id, Alloc: w.alloc, Node: w.node, Term: term, Gen: gen}
	sp := w.begin(history.Event{Kind: history.Publish, Term: term, Key: key, Detail: reason})
	_, err = w.st.Put(ctx, key, encodeList(segMetaMagic, o, refs))
	ev := sp.End(storeOutcome(err), err)
	if err != nil {
		return false, fmt.Errorf("refresh %s: publish: %w", w.id, err)
	}
	w.mu.Lock()
	w.segRefs = refs
	w.segSets = append(w.segSets, refs)
	w.mu.Unlock()
	w.emit(history.SigPublished, ev, 0)
	return true, nil
}

// GC deletes every segment file that an older reference set named and none of the writer's
// latest Retain reference sets (hydrated or published) references, if the collection gate allows (it refuses when a higher
// term owns the fence or the fence cannot be read). Each deleted file records Collect with its
// Key; a refused gate records one Collect with Outcome fail, no Key, and the reason.
func (w *Writer) GC(ctx context.Context) (deleted int, err error) {
	w.mu.Lock()
	if w.state != StateActive {
		st := w.state
		w.mu.Unlock()
		return 0, fmt.Errorf("gc %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	term := w.term
	w.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()

	ok, reason := w.f.CollectAllowed(ctx)
	if !ok {
		w.record(history.Event{Kind: history.Collect, Term: term, Outcome: history.Fail, Err: reason})
		return 0, nil
	}
	es, err := w.st.List(ctx, w.c.cfg.Shard.SegmentDataPrefix())
	if err != nil {
		return 0, fmt.Errorf("gc %s: %w", w.id, err)
	}
	// Garbage is what an older reference set this writer knows named and no retained set
	// names. The sets are read after the listing, so a refresh running concurrently is seen,
	// and a file nobody has referenced yet (an upload whose set is not published yet) is never
	// garbage.
	keep, known := map[string]bool{}, map[string]bool{}
	w.mu.Lock()
	sets := w.segSets
	for _, set := range sets {
		for _, k := range set {
			known[k] = true
		}
	}
	if n := w.c.cfg.Segments.Retain; len(sets) > n {
		sets = sets[len(sets)-n:]
	}
	if w.c.cfg.Variant == fence.NoRetention {
		sets = nil // only the current reference set, below, is kept
	}
	for _, set := range sets {
		for _, k := range set {
			keep[k] = true
		}
	}
	for _, k := range w.segRefs {
		keep[k] = true
	}
	w.mu.Unlock()
	for _, e := range es {
		if keep[e.Key] || !known[e.Key] {
			continue
		}
		sp := w.begin(history.Event{Kind: history.Collect, Term: term, Key: e.Key, Detail: reason})
		err := w.st.Delete(ctx, e.Key)
		sp.End(storeOutcome(err), err)
		if err != nil {
			return deleted, fmt.Errorf("gc %s: %w", w.id, err)
		}
		deleted++
	}
	w.emit(history.SigCollected, history.Event{Writer: w.id, Kind: history.Collect, Term: term}, 0)
	return deleted, nil
}
