package fence

import (
	"context"
	"fmt"
	"strings"
)

// Transfer hands the chain to a relocation target at the same term: it writes the target's
// allocation as recorded owner (with this node and seq+1) under If-Match and retains the
// returned ETag. Afterwards the instance may only Revert. A refused CAS fences; an unknown
// outcome is resolved by identity (recorded allocation = target) and is otherwise retryable,
// in which case nothing was transferred as far as the instance knows.
func (f *Fence) Transfer(ctx context.Context, targetAllocation string) error {
	const op = "transfer"
	f.ops.Lock()
	defer f.ops.Unlock()
	if err := f.stickyFence(); err != nil {
		return err
	}
	if f.transferred {
		return f.transferredErr(op)
	}
	if targetAllocation == "" || strings.Contains(targetAllocation, "|") {
		return fmt.Errorf("fence: invalid target allocation %q", targetAllocation)
	}
	if f.token == "" {
		return f.fence(op, "does not own the chain: no token held", nil)
	}
	attempted := f.next(f.seq)
	recorded := targetAllocation
	if f.o.Variant == TransferKeepsSource {
		recorded = f.o.AllocationID
	}
	etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(recorded, attempted), f.token)
	earlier := f.unresolved == attempted
	f.unresolved = 0
	switch f.classify(err) {
	case applied:
		f.setToken(etag, attempted)
	case refused:
		if earlier && f.o.Variant != NoAdoptionOnTransfer {
			if rerr, decided := f.refusedAfterUnknown(ctx, op, attempted, recorded, err); decided {
				if rerr != nil {
					return rerr
				}
				break // our own earlier transfer landed
			}
		}
		return f.fence(op, "lost the CAS: the key moved past the held token"+f.diagnose(ctx), err)
	case gone:
		return f.fence(op, "key gone: the term's key was swept"+f.diagnose(ctx), err)
	case assumed:
		if err := f.assume(ctx, attempted); err != nil {
			return err
		}
	case harness:
		f.keepUnknown(earlier, attempted)
		return f.harnessErr(op, err)
	default:
		if f.o.Variant == NoAdoptionOnTransfer {
			return f.retryable(op, "transfer outcome unknown", err)
		}
		if err := f.resolve(ctx, op, attempted, recorded, err); err != nil {
			if stillUnknown(err) {
				f.unresolved = attempted
			}
			return err
		}
	}
	f.setTransferred(true, targetAllocation)
	return nil
}

// Revert aborts a relocation: it writes the own allocation back with If-Match on the token
// retained from Transfer. Success means nothing wrote since the transfer, so the target never
// took over: resumed is true and the instance owns the chain again. A refused CAS or a
// vanished key means the target adopted or a higher term swept the key: the instance stands
// down (resumed false, err nil, and it is fenced from then on). An unknown outcome is
// resolved by identity; unresolved it is ErrRetryable, and a retry that the unknown revert
// itself refuses is recognised by identity too (the key holds this instance's write at the
// attempted seq: it resumes). A fenced instance, or one holding no
// token, answers (false, nil). After a Transfer that returned ErrRetryable, Revert presents
// the token held before the transfer: it resumes if the transfer never landed.
func (f *Fence) Revert(ctx context.Context) (resumed bool, err error) {
	const op = "revert"
	f.ops.Lock()
	defer f.ops.Unlock()
	if f.fenced != nil || f.token == "" {
		return false, nil
	}
	if f.o.Variant == RevertStandsDown {
		f.fence(op, "stood down without trying the retained token", nil)
		return false, nil
	}
	token := f.token
	if f.o.Variant == RevertWithFreshToken {
		if obj, err := f.o.Store.Get(ctx, f.key); err == nil {
			token = obj.ETag
		}
	}
	attempted := f.next(f.seq)
	etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(f.o.AllocationID, attempted), token)
	earlier := f.unresolved == attempted
	f.unresolved = 0
	switch f.classify(err) {
	case applied:
		f.setToken(etag, attempted)
	case refused:
		// A retry after a revert whose outcome stayed unknown may be refused by that very
		// revert: the key then holds this instance's own write at the attempted seq, and it
		// owns the chain again.
		if earlier && f.o.Variant != RevertRetryBlind {
			if rerr, decided := f.refusedAfterUnknown(ctx, op, attempted, f.o.AllocationID, err); decided {
				if rerr != nil {
					return false, rerr
				}
				break
			}
		}
		f.fence(op, "stood down: the key moved past the retained token (the target adopted, or a higher term swept it)"+f.diagnose(ctx), err)
		return false, nil
	case gone:
		// Standing down is the expected answer when the target took over; it is not an
		// error. The instance still never writes again.
		f.fence(op, "stood down: the key moved past the retained token (the target adopted, or a higher term swept it)"+f.diagnose(ctx), err)
		return false, nil
	case assumed:
		if err := f.assume(ctx, attempted); err != nil {
			return false, err
		}
	case harness:
		f.keepUnknown(earlier, attempted)
		return false, f.harnessErr(op, err)
	default:
		if err := f.resolve(ctx, op, attempted, f.o.AllocationID, err); err != nil {
			if stillUnknown(err) {
				f.unresolved = attempted
			}
			return false, err
		}
	}
	f.setTransferred(false, "")
	return true, nil
}
