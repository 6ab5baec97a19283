package writers

import (
	"context"
	"fmt"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// AuditorID is the writer id the final auditor records under.
const AuditorID = "auditor"

// AuditResult is the final auditor's view of the store.
type AuditResult struct {
	// Term is the term the auditor sealed and recovered at.
	Term int64
	// RestorePoint is what the auditor recovered; RestorePoint.Ops is the durability ground
	// truth: every acknowledged op must be in it.
	RestorePoint
	// Fences is the final listing of fence objects, with bodies.
	Fences []FenceObject
	// SegmentFiles and SegmentMetadata are the final listings of segment files and
	// reference sets.
	SegmentFiles    []string
	SegmentMetadata []string
}

// FenceObject is one fence object in the final listing.
type FenceObject struct {
	Key, ETag, Body string
}

// Audit runs the final auditor: a copy promoted at a term above every term used (term 0
// picks max(cluster's highest term, highest fence term, highest metadata term) + 1) that
// seals and reads the restore point exactly as a real new primary would — always with the
// correct protocol, since it is the judge — and lists the fence objects and segment files.
// It records its seal as Claim (Detail "seal") and its recovery as Audit with Ops; its store
// calls are recorded under AuditorID through st, a client of its own. Stop traffic and let
// in-flight syncs finish (Settle) first.
func (c *Cluster) Audit(ctx context.Context, st store.Store, term int64) (AuditResult, error) {
	var res AuditResult
	rs := NewRecordingStore(st, c.cfg.Recorder, AuditorID)
	sh := c.cfg.Shard
	if term <= 0 {
		t, err := c.auditTerm(ctx, rs)
		if err != nil {
			return res, err
		}
		term = t
	}
	res.Term = term
	c.noteTerm(term)

	// A throwaway Writer gives the auditor the same seal and restore code as a promotion.
	a := &Writer{c: c, id: AuditorID, node: AuditorID, alloc: AuditorID + "-alloc", raw: st, rec: rs, st: rs,
		life: context.Background(), kill: func() {}}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if _, err := a.seal(ctx, term, fence.Correct); err != nil {
		return res, fmt.Errorf("audit: seal at term %d: %w", term, err)
	}
	var rp RestorePoint
	var err error
	for attempt := 1; ; attempt++ {
		sp := c.cfg.Recorder.Begin(history.Event{Kind: history.Audit, Writer: AuditorID, Term: term})
		rp, err = readRestorePoint(ctx, c.cfg.Guard, rs, sh)
		e := sp.Event()
		e.Ops, e.Detail = rp.Ops, rp.Key
		if err == nil && len(rp.Missing) > 0 {
			e.Err = fmt.Sprintf("%d named .tlog file(s) missing: %v", len(rp.Missing), rp.Missing)
		}
		sp.End(storeOutcome(err), err)
		if err == nil {
			break
		}
		if !retryable(err) || ctx.Err() != nil || !a.backoff(ctx, attempt) {
			return res, fmt.Errorf("audit: restore read: %w", err)
		}
	}
	res.RestorePoint = rp

	if err := listFinal(ctx, rs, sh, &res); err != nil {
		return res, err
	}
	return res, nil
}

// auditTerm is the term the auditor takes when none is given: one above the cluster's highest
// term, the highest fence term and the highest metadata term.
func (c *Cluster) auditTerm(ctx context.Context, rs store.Store) (int64, error) {
	sh := c.cfg.Shard
	term := c.MaxTerm()
	h, found, err := fence.HighestTerm(ctx, rs, sh.TranslogMetadataPrefix())
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	if found {
		term = max(term, h)
	}
	es, err := rs.List(ctx, sh.MetadataListPrefix())
	if err != nil {
		return 0, fmt.Errorf("audit: %w", err)
	}
	if len(es) > 0 {
		if t, _, ok := parseMetadataName(es[0].Key); ok {
			term = max(term, t)
		}
	}
	return term + 1, nil
}

// listFinal lists the fence objects (with bodies), the segment files and the segment
// reference sets into res.
func listFinal(ctx context.Context, rs store.Store, sh Shard, res *AuditResult) error {
	fences, err := rs.List(ctx, sh.FencePrefix())
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	for _, e := range fences {
		obj, err := rs.Get(ctx, e.Key)
		if err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		res.Fences = append(res.Fences, FenceObject{Key: e.Key, ETag: obj.ETag, Body: string(obj.Body)})
	}
	files, err := rs.List(ctx, sh.SegmentDataPrefix())
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	for _, e := range files {
		res.SegmentFiles = append(res.SegmentFiles, e.Key)
	}
	metas, err := rs.List(ctx, sh.SegmentMetadataPrefix())
	if err != nil {
		return fmt.Errorf("audit: %w", err)
	}
	for _, e := range metas {
		res.SegmentMetadata = append(res.SegmentMetadata, e.Key)
	}
	return nil
}
