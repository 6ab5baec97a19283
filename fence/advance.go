package fence

import (
	"context"
	"errors"
	"fmt"

	"github.com/fencebench/fencebench/store"
)

// Advance is validate-and-advance, called after the metadata upload and before the ack:
// claim if the instance holds no token, else write seq+1 with If-Match on the held token. A
// refused CAS or a vanished key fences; an unknown outcome is resolved by identity and is
// otherwise retryable. The ack is legitimate only when Advance returns nil.
func (f *Fence) Advance(ctx context.Context) error {
	return f.AdvanceAt(ctx, f.Term())
}

// AdvanceAt is Advance for a caller that names the term it acts at. A term other than the
// instance's fences it: an instance belongs to one copy at one term and never claims a term
// it was not built for.
func (f *Fence) AdvanceAt(ctx context.Context, term int64) error {
	f.ops.Lock()
	defer f.ops.Unlock()
	if err := f.stickyFence(); err != nil {
		return err
	}
	if f.transferred {
		return f.transferredErr("advance")
	}
	if term != f.term {
		return f.fence("advance", fmt.Sprintf("asked to act at term %d; this instance is for term %d", term, f.term), nil)
	}
	if f.token == "" {
		return f.claim(ctx)
	}
	return f.advance(ctx)
}

// refusedAfterUnknown judges a CAS refused at seq attempted when an earlier attempt at that
// seq went unanswered: the previous attempt may have landed after all (its answer was lost and
// its read-back failed), and then the refusal is its own write, not a successor. Until a read
// tells which, the outcome stays unknown: fencing on it would fence a healthy owner whose own
// write moved the key. decided is false when the key holds another writer's version (or is
// gone): the caller fences.
func (f *Fence) refusedAfterUnknown(ctx context.Context, op string, attempted int64, alloc string, cause error) (err error, decided bool) {
	obj, gerr := f.o.Store.Get(ctx, f.key)
	switch {
	case gerr == nil:
		if rerr := f.judgeOwn(op, obj, attempted, alloc, cause); !errors.Is(rerr, ErrRetryable) {
			if rerr != nil {
				f.unresolved = attempted // an unreadable key told nothing about the write either
			}
			return rerr, true // our own write (nil), or an unreadable key
		}
		return nil, false // another writer's version: the CAS was lost
	case errors.Is(gerr, store.ErrConfig):
		f.unresolved = attempted // still unknown: the configuration error told nothing
		return f.harnessErr(op, gerr), true
	case errors.Is(gerr, store.ErrNotFound):
		return nil, false
	}
	f.unresolved = attempted
	return f.retryable(op, fmt.Sprintf("refused, and the read-back that tells whether by our own earlier write failed (%v)", gerr), cause), true
}

// stillUnknown tells whether a write whose outcome was unknown is still unknown after its
// read-back: the read-back failed (retryable), met a configuration error or returned a body
// that is no version of the key (a misdirected or garbled answer), none of which tells
// anything about the write. The next attempt at the same seq must then take a refusal for
// possibly its own write, or a healthy owner would fence itself once the store answers again.
func stillUnknown(err error) bool {
	return errors.Is(err, ErrRetryable) || errors.Is(err, store.ErrConfig) || errors.Is(err, ErrIdentity)
}

// keepUnknown keeps an earlier attempt at seq attempted unresolved after a retry the store
// refused for its configuration (a 403): that answer says nothing about the earlier write,
// which may still be what refuses the next retry.
func (f *Fence) keepUnknown(earlier bool, attempted int64) {
	if earlier {
		f.unresolved = attempted
	}
}

func (f *Fence) advance(ctx context.Context) error {
	const op = "advance"
	attempted := f.next(f.seq)
	etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(f.o.AllocationID, attempted), f.token)
	outcome := f.classify(err)
	earlier := f.unresolved == attempted
	f.unresolved = 0
	switch outcome {
	case applied:
		f.setToken(etag, attempted)
		return nil
	case refused:
		if earlier {
			if rerr, decided := f.refusedAfterUnknown(ctx, op, attempted, f.o.AllocationID, err); decided {
				return rerr
			}
		}
		return f.fence(op, "lost the CAS: the key moved past the held token"+f.diagnose(ctx), err)
	case gone:
		return f.fence(op, "key gone: the term's key was swept"+f.diagnose(ctx), err)
	case assumed:
		return f.assume(ctx, attempted)
	case harness:
		f.keepUnknown(earlier, attempted)
		return f.harnessErr(op, err)
	default:
		rerr := f.resolve(ctx, op, attempted, f.o.AllocationID, err)
		if stillUnknown(rerr) {
			f.unresolved = attempted
		}
		return rerr
	}
}
