package store

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// ErrPrefixInUse is returned by ClaimFreshPrefix when the prefix already holds objects.
var ErrPrefixInUse = errors.New("the prefix is in use")

// ClaimFreshPrefix refuses a prefix that already holds objects. A run that works only inside
// a fresh prefix knows that everything it later finds or deletes there is its own.
func ClaimFreshPrefix(ctx context.Context, s Store, prefix string) error {
	if !strings.HasSuffix(prefix, "/") || strings.HasPrefix(prefix, "/") {
		return fmt.Errorf("prefix %q must end in / and not start with one", prefix)
	}
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	es, err := s.List(lctx, prefix)
	if err != nil {
		return fmt.Errorf("cannot list the prefix %q: %w", prefix, err)
	}
	if len(es) > 0 {
		return fmt.Errorf("%w: %q already holds %d objects (first: %s); only a fresh prefix is used", ErrPrefixInUse,
			prefix, len(es), es[0].Key)
	}
	return nil
}

// DeletePrefix deletes every object under prefix (a prefix the caller owns entirely, see
// ClaimFreshPrefix) and reports how many it deleted.
func DeletePrefix(ctx context.Context, s Store, prefix string) (int, error) {
	es, err := s.List(ctx, prefix)
	if err != nil {
		return 0, err
	}
	keys := make([]string, 0, len(es))
	for _, e := range es {
		if strings.HasPrefix(e.Key, prefix) {
			keys = append(keys, e.Key)
		}
	}
	failed, err := s.DeleteMany(ctx, keys)
	if err != nil {
		return 0, err
	}
	if len(failed) > 0 {
		return len(keys) - len(failed), fmt.Errorf("%d objects not deleted, first: %v", len(failed), failed[0])
	}
	return len(keys), nil
}
