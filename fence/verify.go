package fence

import (
	"context"
	"errors"
	"fmt"

	"github.com/fencebench/fencebench/store"
)

// Verify reads the instance's key and reports whether it still holds the version the
// instance last wrote or adopted: nil when it does; ErrFenced (the instance fenced) when the
// key is gone (a higher term swept it) or holds another version (an equal-term twin took it
// by arbitration since); and, when the key cannot be read, the read's error classified as any
// read's (retryable, or a configuration error returned as is). It writes nothing.
//
// A promotion verifies its seal after reading its restore point: a copy superseded within
// its term between its seal and that read has read a restore point its successor wrote, and
// the generations it would write from there collide with the successor's.
func (f *Fence) Verify(ctx context.Context) error {
	const op = "verify"
	f.ops.Lock()
	defer f.ops.Unlock()
	if err := f.stickyFence(); err != nil {
		return err
	}
	if f.transferred {
		return f.transferredErr(op)
	}
	if f.token == "" {
		return f.fence(op, "does not own the chain: no token held", nil)
	}
	obj, err := f.o.Store.Get(ctx, f.key)
	if errors.Is(err, store.ErrNotFound) {
		return f.fence(op, "key gone: the term's key was swept"+f.diagnose(ctx), err)
	}
	if err != nil {
		return f.ioErr(op, "verify read", err)
	}
	if obj.ETag == f.token {
		return nil
	}
	c, err := f.decode(obj.Body)
	if err != nil {
		return f.identityErr(op, err)
	}
	return f.fence(op, fmt.Sprintf("superseded within the term: the key moved past the held token to allocation %s (node %s, seq %d)",
		c.AllocationID, c.NodeID, c.Seq), nil)
}
