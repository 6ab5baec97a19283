package runner

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/fencebench/fencebench/outcome"
)

// maxShards bounds N in --shard K/N.
const maxShards = 1000

// ShardSpec selects one part of a run's plan: shard K (0-based) of N.
type ShardSpec struct {
	K, N int
}

// String is the spec as the command line writes it, "K/N".
func (s ShardSpec) String() string { return fmt.Sprintf("%d/%d", s.K, s.N) }

// ParseShard reads "K/N" with 0 <= K < N <= 1000 (K is 0-based, as a Kubernetes Indexed
// Job's JOB_COMPLETION_INDEX). Anything else wraps outcome.ErrBadInput.
func ParseShard(s string) (ShardSpec, error) {
	ks, ns, ok := strings.Cut(s, "/")
	k, kerr := strconv.Atoi(ks)
	n, nerr := strconv.Atoi(ns)
	if !ok || kerr != nil || nerr != nil || n < 1 || n > maxShards || k < 0 || k >= n {
		return ShardSpec{}, fmt.Errorf("%w: --shard %q: want K/N with 0 <= K < N <= %d", outcome.ErrBadInput, s, maxShards)
	}
	return ShardSpec{K: k, N: n}, nil
}

// selectShard keeps the cells of shard spec from the whole, ordered plan: cell i belongs to
// shard i mod N. The split depends only on the plan's order, never on where a shard runs, so
// the N shards of one plan run every cell exactly once. The returned record lists every cell
// id of the whole plan, for the merge to check.
func selectShard(plan []Cell, spec ShardSpec) ([]Cell, *outcome.Shard) {
	rec := &outcome.Shard{K: spec.K, N: spec.N, Cells: make([]string, 0, len(plan))}
	var keep []Cell
	for i, c := range plan {
		rec.Cells = append(rec.Cells, c.ID())
		if i%spec.N == spec.K {
			keep = append(keep, c)
		}
	}
	return keep, rec
}
