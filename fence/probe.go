package fence

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencebench/fencebench/store"
)

// ErrUnenforced is returned by Probe when the store accepted a write whose precondition did
// not hold. Fencing on such a store is worse than running unfenced: two writers would each
// believe they hold the chain.
var ErrUnenforced = errors.New("store does not enforce conditional writes")

// Probe checks that s enforces If-None-Match: * and If-Match by writing a scratch key under
// prefix (outside the fence key space) and presenting conditions that must fail. It removes
// the key afterwards. A store that accepts either write yields ErrUnenforced; an I/O failure
// is returned as is.
func Probe(ctx context.Context, s Store, prefix string) error {
	key := fmt.Sprintf("%sfence-probe__%d", prefix, time.Now().UnixNano())
	etag, err := s.PutIfAbsent(ctx, key, []byte("probe|0"))
	if err != nil {
		return fmt.Errorf("fence probe: create %s: %w", key, err)
	}
	defer s.Delete(context.WithoutCancel(ctx), key)
	if _, err := s.PutIfAbsent(ctx, key, []byte("probe|1")); err == nil {
		return fmt.Errorf("%w: If-None-Match: * on an existing key was accepted", ErrUnenforced)
	} else if !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("fence probe: second create of %s: %w", key, err)
	}
	stale := "00000000000000000000000000000000"
	if store.NormalizeETag(etag) == stale {
		stale = "11111111111111111111111111111111"
	}
	if _, err := s.PutIfMatch(ctx, key, []byte("probe|2"), stale); err == nil {
		return fmt.Errorf("%w: If-Match with a wrong ETag was accepted", ErrUnenforced)
	} else if !errors.Is(err, store.ErrPreconditionFailed) {
		return fmt.Errorf("fence probe: stale If-Match on %s: %w", key, err)
	}
	return nil
}
