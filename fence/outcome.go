package fence

import (
	"context"
	"errors"
	"fmt"

	"github.com/fencebench/fencebench/store"
)

// outcome is the classification of a conditional write's result.
type outcome int

const (
	applied outcome = iota // the write landed
	refused                // 412: the precondition did not hold; nothing was written
	gone                   // If-Match answered 404: the key does not exist
	unknown                // the write may or may not have landed
	assumed                // a broken variant takes an unknown outcome as applied
	harness                // a configuration error: neither fenced nor retryable
)

// classify maps a conditional write's error to an outcome. It is the one place the
// classification variants are read.
func (f *Fence) classify(err error) outcome {
	switch {
	case err == nil:
		return applied
	case errors.Is(err, store.ErrConfig):
		return harness
	case errors.Is(err, store.ErrPreconditionFailed):
		return refused
	case errors.Is(err, store.ErrNotFound):
		// What a swept writer sees on If-Match: lost, so a zombie fails promptly.
		if f.o.Variant == NotFoundIsRetryable {
			return unknown
		}
		return gone
	case errors.Is(err, store.ErrConflict):
		// 409 ConditionalRequestConflict: another request on the key was in flight; this
		// request's precondition outcome is unknown, and only a re-read settles it.
		switch f.o.Variant {
		case ConflictIsFenced:
			return refused
		case ConflictIsSuccess:
			return assumed
		}
		return unknown
	default:
		switch f.o.Variant {
		case AmbiguousIsFenced:
			return refused
		case AmbiguousIsSuccess:
			return assumed
		}
		return unknown
	}
}

func (f *Fence) harnessErr(op string, err error) error {
	return fmt.Errorf("fence %s %s: %w", op, f.key, err)
}

// assume adopts the key's current version as if the unknown write had landed, without any
// identity check. Only broken variants get here.
func (f *Fence) assume(ctx context.Context, attempted int64) error {
	obj, err := f.o.Store.Get(ctx, f.key)
	if err != nil {
		f.setToken(f.token, attempted)
		return nil
	}
	seq := attempted
	if c, err := Decode(obj.Body); err == nil {
		seq = c.Seq
	}
	f.setToken(obj.ETag, seq)
	return nil
}

// resolve settles a write with an unknown outcome by reading the key back: the write is
// adopted only if the key now holds exactly this term, the attempted seq, the allocation the
// write recorded and this node. Anything else did not land as far as this instance can
// prove, which is retryable and never fenced.
func (f *Fence) resolve(ctx context.Context, op string, attempted int64, alloc string, cause error) error {
	obj, err := f.o.Store.Get(ctx, f.key)
	if err != nil {
		if errors.Is(err, store.ErrConfig) {
			return f.harnessErr(op, err)
		}
		return f.retryable(op, fmt.Sprintf("write outcome unknown and the read-back failed (%v)", err), cause)
	}
	return f.judgeOwn(op, obj, attempted, alloc, cause)
}

// judgeOwn decides from the key's current version whether it is this instance's write at seq
// attempted: nil (adopted), retryable (another version), or an unreadable key's error.
func (f *Fence) judgeOwn(op string, obj store.Object, attempted int64, alloc string, cause error) error {
	c, derr := f.decode(obj.Body)
	if f.o.Variant == AdoptWithoutIdentity {
		seq := attempted
		if derr == nil {
			seq = c.Seq
		}
		f.setToken(obj.ETag, seq)
		return nil
	}
	if derr != nil {
		return f.identityErr(op, derr)
	}
	if c.Seq == attempted && c.AllocationID == alloc && c.NodeID == f.o.NodeID {
		f.setToken(obj.ETag, attempted)
		return nil
	}
	return f.retryable(op, fmt.Sprintf("write outcome unknown; the key holds allocation %s node %s seq %d, not this write (allocation %s seq %d)",
		c.AllocationID, c.NodeID, c.Seq, alloc, attempted), cause)
}

// diagnose names the highest term present, for a fenced message. It is a read for the
// message only; no decision depends on it.
func (f *Fence) diagnose(ctx context.Context) string {
	h, found, err := HighestTerm(ctx, f.o.Store, f.o.Prefix)
	switch {
	case err != nil:
		return ""
	case !found:
		return " (no fence key is present)"
	case h > f.term:
		return fmt.Sprintf(" (superseded by term %d)", h)
	default:
		return fmt.Sprintf(" (highest term present: %d)", h)
	}
}
