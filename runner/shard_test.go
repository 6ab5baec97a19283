package runner

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

// TestParseShard accepts K/N with 0 <= K < N and refuses the rest as bad input.
func TestParseShard(t *testing.T) {
	for in, want := range map[string]ShardSpec{"0/1": {0, 1}, "2/3": {2, 3}, "999/1000": {999, 1000}} {
		got, err := ParseShard(in)
		if err != nil || got != want || got.String() != in {
			t.Errorf("ParseShard(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "1", "3/3", "-1/3", "1/0", "a/b", "1/3/4", "0/1001", " 1/3"} {
		if _, err := ParseShard(in); !errors.Is(err, outcome.ErrBadInput) {
			t.Errorf("ParseShard(%q): %v, want bad input", in, err)
		}
	}
}

// TestShardsSplitThePlanExactly: for every N, the N shards of the catalogue's kill-matrix
// plan hold every cell exactly once, each shard records the whole plan, and the split does
// not depend on the seeds drawn.
func TestShardsSplitThePlanExactly(t *testing.T) {
	draws := uint64(0)
	draw := func() uint64 { draws++; return draws }
	plan := Cells(catalogue(t), "", true, 0, draw)
	if len(plan) < 20 {
		t.Fatalf("the plan has %d cells", len(plan))
	}
	for _, n := range []int{1, 2, 3, 7, len(plan), len(plan) + 5} {
		seen := map[string]int{}
		for k := range n {
			cells, rec := selectShard(plan, ShardSpec{K: k, N: n})
			if rec.K != k || rec.N != n || len(rec.Cells) != len(plan) {
				t.Fatalf("shard %d/%d records %d/%d over %d cells", k, n, rec.K, rec.N, len(rec.Cells))
			}
			for _, c := range cells {
				seen[c.ID()]++
			}
			if again, _ := selectShard(Cells(catalogue(t), "", true, 0, draw), ShardSpec{K: k, N: n}); fmt.Sprint(ids(again)) != fmt.Sprint(ids(cells)) {
				t.Fatalf("shard %d/%d depends on the drawn seeds", k, n)
			}
		}
		for _, c := range plan {
			if seen[c.ID()] != 1 {
				t.Errorf("N=%d: cell %s in %d shards", n, c.ID(), seen[c.ID()])
			}
		}
	}
}

func ids(cells []Cell) []string {
	var out []string
	for _, c := range cells {
		out = append(out, c.ID())
	}
	return out
}

// TestCheckShardsNamesWhatIsWrong: shards missing, twice, of another plan, and cells run
// twice or missing are named; a complete set passes.
func TestCheckShardsNamesWhatIsWrong(t *testing.T) {
	plan := []string{"a", "b", "c", "d"}
	shard := func(k, n int, cells ...string) *outcome.Summary {
		s := &outcome.Summary{Dir: fmt.Sprintf("s%d", k), Shard: &outcome.Shard{K: k, N: n, Cells: plan}}
		for _, c := range cells {
			s.Cells = append(s.Cells, &outcome.CellResult{ID: c})
		}
		return s
	}
	if err := checkShards([]*outcome.Summary{shard(0, 2, "a", "c"), shard(1, 2, "b", "d")}); err != nil {
		t.Fatalf("a complete set: %v", err)
	}
	other := shard(1, 2, "b", "d")
	other.Shard.Cells = []string{"a", "b"}
	for _, tc := range []struct {
		shards []*outcome.Summary
		want   string
	}{
		{[]*outcome.Summary{shard(0, 2, "a", "c")}, "shard 1/2 is missing"},
		{[]*outcome.Summary{shard(0, 2, "a", "c"), shard(1, 2, "b", "d"), shard(1, 2, "b", "d")}, "shard 1/2 is given twice"},
		{[]*outcome.Summary{shard(0, 2, "a", "c"), other}, "another plan"},
		{[]*outcome.Summary{shard(0, 2, "a", "c", "b"), shard(1, 2, "b", "d")}, "cell b ran twice"},
		{[]*outcome.Summary{shard(0, 2, "a"), shard(1, 2, "b", "d")}, "cell c is missing"},
		{[]*outcome.Summary{shard(0, 2, "a", "c"), shard(1, 2, "b", "d", "e")}, "cell e is not in the plan"},
	} {
		err := checkShards(tc.shards)
		if !errors.Is(err, ErrShards) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("got %v, want %q", err, tc.want)
		}
	}
}
