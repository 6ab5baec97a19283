package fence

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fencebench/fencebench/store"
)

// Claim runs the claim (seal) procedure if the instance holds no token: refuse when a higher
// term exists, create the term's key or win it by equal-term arbitration, sweep every lower
// term, verify the own key, and re-list (a surviving lower term is retryable; a newer term
// withdraws a key this instance created and fences). nil means the instance owns the chain.
// On any failure the instance holds no token, so a retry re-runs the whole claim.
func (f *Fence) Claim(ctx context.Context) error {
	f.ops.Lock()
	defer f.ops.Unlock()
	if err := f.stickyFence(); err != nil {
		return err
	}
	if f.transferred {
		return f.transferredErr("claim")
	}
	if f.token != "" {
		return nil
	}
	return f.claim(ctx)
}

// claim runs the claim procedure. The caller holds ops.
func (f *Fence) claim(ctx context.Context) (err error) {
	const op = "claim"
	f.setToken("", 0)
	defer func() {
		// A failed claim holds nothing, so a retry re-runs the full claim including the
		// sweep verification.
		if err != nil && f.o.Variant != ReuseHalfClaimed {
			f.setToken("", 0)
		}
	}()
	// The term floor and the re-list are the two halves of "a higher term prevails".
	floor := f.o.Variant != NoTermFloor
	reverify := floor && f.o.Variant != NoReverify
	sweep := f.o.Variant != NoSweep
	survivors := sweep && f.o.Variant != NoSurvivorCheck

	// 1. Refuse when a higher term exists: a stale grant must never create its key.
	if floor {
		if err := f.refuseSuperseded(ctx, op); err != nil {
			return err
		}
	}

	// 2. Create the term's key, or arbitrate for it when it exists.
	created, err := f.createOrArbitrate(ctx, op)
	if err != nil {
		return err
	}

	// 3. Sweep every lower term: the act that fences a lower-term incumbent.
	var sweepFailed []store.KeyError
	if sweep {
		if sweepFailed, err = f.sweepLower(ctx, op); err != nil {
			return err
		}
	}

	// 4. Verify the own key.
	if err := f.verifyOwn(ctx, op, created); err != nil {
		return err
	}

	// 5. Re-list.
	if reverify {
		return f.relist(ctx, op, created, survivors, sweepFailed)
	}
	return nil
}

// refuseSuperseded fences when a term higher than the instance's exists.
func (f *Fence) refuseSuperseded(ctx context.Context, op string) error {
	terms, err := listTerms(ctx, f.o.Store, f.o.Prefix)
	if err != nil {
		return f.ioErr(op, "list before claim", err)
	}
	if h, ok := highestAbove(terms, f.term); ok {
		return f.fence(op, fmt.Sprintf("superseded by term %d", h), nil)
	}
	return nil
}

// createOrArbitrate creates the term's key, or arbitrates for it when it exists. created
// reports whether this instance's create made the key.
func (f *Fence) createOrArbitrate(ctx context.Context, op string) (created bool, err error) {
	etag, err := f.o.Store.PutIfAbsent(ctx, f.key, f.body(f.o.AllocationID, 0))
	switch f.classify(err) {
	case applied:
		f.setToken(etag, 0)
		return true, nil
	case refused:
		return false, f.arbitrate(ctx)
	case assumed:
		return false, f.assume(ctx, 0)
	case harness:
		return false, f.harnessErr(op, err)
	default:
		// If the create landed after all, the retry's create conflicts and arbitration finds
		// this copy recorded as owner: self-healing.
		return false, f.retryable(op, "create outcome unknown", err)
	}
}

// sweepLower deletes every term below the instance's and returns the batch delete's per-key
// failures.
func (f *Fence) sweepLower(ctx context.Context, op string) ([]store.KeyError, error) {
	terms, err := listTerms(ctx, f.o.Store, f.o.Prefix)
	if err != nil {
		return nil, f.ioErr(op, "list before sweep", err)
	}
	lower := keysBelow(terms, f.term)
	if len(lower) == 0 {
		return nil, nil
	}
	failed, err := f.o.Store.DeleteMany(ctx, lower)
	if err != nil {
		return nil, f.ioErr(op, "sweep of lower terms", err)
	}
	return failed, nil
}

// verifyOwn reads the own key back: gone means a successor swept it; another ETag means an
// equal-term twin took it mid-claim.
func (f *Fence) verifyOwn(ctx context.Context, op string, created bool) error {
	obj, err := f.o.Store.Get(ctx, f.key)
	if errors.Is(err, store.ErrNotFound) {
		return f.fence(op, "key gone: the term's key vanished before the claim was verified"+f.diagnose(ctx), err)
	}
	if err != nil {
		return f.ioErr(op, "verify read", err)
	}
	if obj.ETag != f.token {
		c, derr := f.decode(obj.Body)
		if derr != nil {
			return f.identityErr(op, derr)
		}
		reason := fmt.Sprintf("taken over mid-claim by allocation %s (node %s, seq %d)", c.AllocationID, c.NodeID, c.Seq)
		reason += f.withdraw(ctx, created, false)
		return f.fence(op, reason, nil)
	}
	return nil
}

// relist lists the terms again: a surviving lower term means two terms could reach the ack
// path (retry); a newer grant means this claim went stale while running (withdraw and fence).
func (f *Fence) relist(ctx context.Context, op string, created, survivors bool, sweepFailed []store.KeyError) error {
	terms, err := listTerms(ctx, f.o.Store, f.o.Prefix)
	if err != nil {
		return f.ioErr(op, "re-list after sweep", err)
	}
	if lower := keysBelow(terms, f.term); len(lower) > 0 && survivors {
		reason := fmt.Sprintf("sweep left term(s) %s; retry", termsOf(lower))
		if len(sweepFailed) > 0 {
			reason += fmt.Sprintf(" (batch delete reported %d failure(s): %v)", len(sweepFailed), sweepFailed[0])
		}
		return f.retryable(op, reason, nil)
	}
	if h, ok := highestAbove(terms, f.term); ok {
		reason := fmt.Sprintf("superseded mid-claim by term %d", h)
		reason += f.withdraw(ctx, created, true)
		return f.fence(op, reason, nil)
	}
	return nil
}

// withdraw deletes the own key after a claim lost it, but only when this instance created it
// and a newer term superseded it: a key won by arbitration may already belong to a further
// equal-term claimant. It returns a note for the fenced message.
func (f *Fence) withdraw(ctx context.Context, created, superseded bool) string {
	if !(created && superseded) && f.o.Variant != WithdrawArbitrated {
		return ""
	}
	if err := f.o.Store.Delete(ctx, f.key); err != nil {
		return fmt.Sprintf("; withdrawing the key failed: %v", err)
	}
	return "; withdrew the key"
}

// arbitrate takes an existing equal-term key: read it, check identity and (when guarded)
// recorded ownership, and CAS seq+1 onto the version read. At most maxSameTermAttempts; a
// key that vanished is never re-created.
func (f *Fence) arbitrate(ctx context.Context) error {
	const op = "claim"
	guard := f.o.Guarded && f.o.Variant != NoReadoptionGuard && f.o.Variant != TargetClaimsBlindly
	var last error
	for range maxSameTermAttempts {
		obj, err := f.o.Store.Get(ctx, f.key)
		if errors.Is(err, store.ErrNotFound) {
			if f.o.Variant == RecreateOn404 {
				etag, err := f.o.Store.PutIfAbsent(ctx, f.key, f.body(f.o.AllocationID, 0))
				if err == nil {
					f.setToken(etag, 0)
					return nil
				}
				last = err
				continue
			}
			return f.fence(op, "key gone: found no equal-term fence to adopt"+f.diagnose(ctx), err)
		}
		if err != nil {
			return f.ioErr(op, "arbitration read", err)
		}
		c, err := f.decode(obj.Body)
		if err != nil {
			return f.identityErr(op, err)
		}
		if guard && c.AllocationID != f.o.AllocationID {
			return f.fence(op, fmt.Sprintf("not the recorded owner: the key is owned by allocation %s (node %s, seq %d), this is %s",
				c.AllocationID, c.NodeID, c.Seq, f.o.AllocationID), nil)
		}
		attempted := f.next(c.Seq)
		etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(f.o.AllocationID, attempted), obj.ETag)
		switch f.classify(err) {
		case applied:
			f.setToken(etag, attempted)
			return nil
		case refused:
			last = err
			continue
		case gone:
			return f.fence(op, "key gone: the equal-term key vanished during arbitration"+f.diagnose(ctx), err)
		case assumed:
			return f.assume(ctx, attempted)
		case harness:
			return f.harnessErr(op, err)
		default:
			return f.retryable(op, "arbitration write outcome unknown", err)
		}
	}
	return f.fence(op, fmt.Sprintf("lost equal-term arbitration %d times", maxSameTermAttempts), last)
}

func highestAbove(terms map[int64]string, term int64) (int64, bool) {
	var h int64
	found := false
	for t := range terms {
		if t > term && (!found || t > h) {
			h, found = t, true
		}
	}
	return h, found
}

func keysBelow(terms map[int64]string, term int64) []string {
	var ts []int64
	for t := range terms {
		if t < term {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] > ts[j] })
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = terms[t]
	}
	return keys
}

func termsOf(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		t, _ := ParseKey(k)
		parts[i] = fmt.Sprint(t)
	}
	return strings.Join(parts, ", ")
}
