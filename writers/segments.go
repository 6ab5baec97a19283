package writers

import (
	"context"
	"fmt"
	"slices"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// segments is a writer's segment state: the term-scoped reference-set generation, the
// current reference set, the reference sets it hydrated or published (newest last), and the
// number of segment files it uploaded. Guarded by the writer's mu.
type segments struct {
	gen  int64
	refs []string
	sets [][]string
	file int
}

// reserve takes n file numbers for a refresh's uploads and returns the first.
func (g *segments) reserve(n int) int {
	first := g.file
	g.file += n
	return first
}

// next is the reference set a refresh publishes, the newest maxRefs files of the current set
// and added, and the generation it is published at.
func (g *segments) next(added []string, maxRefs int) (refs []string, gen int64) {
	refs = append(slices.Clone(g.refs), added...)
	if len(refs) > maxRefs {
		refs = refs[len(refs)-maxRefs:]
	}
	g.gen++
	return refs, g.gen
}

// published makes refs, just published, the current reference set.
func (g *segments) published(refs []string) {
	g.refs = refs
	g.sets = append(g.sets, refs)
}

// retained says, for a collection, which files to keep (the current set and the latest
// retain sets; with noRetention the current set alone) and which files the writer knows of
// (named by any set it hydrated or published).
func (g *segments) retained(retain int, noRetention bool) (keep, known map[string]bool) {
	keep, known = map[string]bool{}, map[string]bool{}
	sets := g.sets
	for _, set := range sets {
		for _, k := range set {
			known[k] = true
		}
	}
	if len(sets) > retain {
		sets = sets[len(sets)-retain:]
	}
	if noRetention {
		sets = nil // only the current reference set, below, is kept
	}
	for _, set := range sets {
		for _, k := range set {
			keep[k] = true
		}
	}
	for _, k := range g.refs {
		keep[k] = true
	}
	return keep, known
}

// resume moves a resumed relocation source's reference-set generations into the band of its
// revert, at chain seq seq.
func (g *segments) resume(seq int64) { g.gen = max(g.gen, grantBase(g.gen, seq)-1) }

// adopt takes over a hydrated reference set at a grant with chain seq s.
func (g *segments) adopt(hy hydration, term, s int64) {
	last := g.gen
	if hy.term == term {
		// Same-term reference sets (a relocation source's) share the key space: continue
		// above them. A new term starts its own generations.
		last = max(last, hy.gen)
	}
	g.gen = grantBase(last, s) - 1
	g.refs = slices.Clone(hy.refs)
	if hy.refs != nil {
		g.sets = append(g.sets, slices.Clone(hy.refs))
	}
}

// Refresh uploads new segment files, then publishes a new reference set — the newest
// MaxRefs files — if the publish gate allows (it refuses only when a higher term owns the
// fence, and fails open). A refused gate records Publish with Outcome fail and the gate's
// reason, and returns published false with a nil error. Only an active writer refreshes (a
// superseded one that has not noticed is still active: that is the case the gate exists for).
func (w *Writer) Refresh(ctx context.Context) (published bool, err error) {
	w.mu.Lock()
	if w.role.state != StateActive {
		st := w.role.state
		w.mu.Unlock()
		return false, fmt.Errorf("refresh %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	term := w.role.term
	first := w.segs.reserve(w.c.cfg.Segments.FilesPerRefresh)
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

	// A refusal is recorded spanning the gate's reads.
	ok, reason := w.segmentGate(ctx, history.Publish, term, w.f.PublishAllowed)
	if !ok {
		return false, nil
	}
	w.mu.Lock()
	refs, gen := w.segs.next(added, w.c.cfg.Segments.MaxRefs)
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
	w.segs.published(refs)
	w.mu.Unlock()
	w.emit(history.SigPublished, ev, 0)
	return true, nil
}

// GC deletes every segment file that an older reference set named and none of the writer's
// latest Retain reference sets (hydrated or published) references, if the collection gate allows (it refuses when a higher
// term owns the fence or the fence cannot be read). Each deleted file records Collect with its
// Key; a refused gate records one Collect with Outcome fail, no Key, and the reason, and a
// listing of the files that failed one with Outcome fail, no Key, Detail "listing" and its
// error.
func (w *Writer) GC(ctx context.Context) (deleted int, err error) {
	w.mu.Lock()
	if w.role.state != StateActive {
		st := w.role.state
		w.mu.Unlock()
		return 0, fmt.Errorf("gc %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	term := w.role.term
	w.mu.Unlock()
	ctx, cancel := w.bind(ctx)
	defer cancel()

	// A refusal is recorded spanning the gate's reads.
	ok, reason := w.segmentGate(ctx, history.Collect, term, w.f.CollectAllowed)
	if !ok {
		return 0, nil
	}
	sp := w.begin(history.Event{Kind: history.Collect, Term: term, Detail: "listing"})
	es, err := w.st.List(ctx, w.c.cfg.Shard.SegmentDataPrefix())
	if err != nil {
		sp.End(history.Fail, err)
		return 0, fmt.Errorf("gc %s: %w", w.id, err)
	}
	// Garbage is what an older reference set this writer knows named and no retained set
	// names. The sets are read after the listing, so a refresh running concurrently is seen,
	// and a file nobody has referenced yet (an upload whose set is not published yet) is never
	// garbage.
	w.mu.Lock()
	keep, known := w.segs.retained(w.c.cfg.Segments.Retain, w.c.cfg.Variant == fence.NoRetention)
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

// segmentGate asks the fence whether the writer may publish or collect (allowed) and records a
// refusal as a failed event of kind spanning the gate's own reads, so that the history shows
// the store calls behind it.
func (w *Writer) segmentGate(ctx context.Context, kind history.Kind, term int64, allowed func(context.Context) (bool, string)) (bool, string) {
	sp := w.begin(history.Event{Kind: kind, Term: term})
	ok, reason := allowed(ctx)
	if !ok {
		sp.Event().Err = reason
		sp.End(history.Fail, nil)
	}
	return ok, reason
}
