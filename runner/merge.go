package runner

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencebench/fencebench/outcome"
)

// ErrShards marks a merge refused because its shards do not make up one plan exactly: a
// shard missing or given twice, a cell missing or run twice, shards of different plans.
var ErrShards = errors.New("the shards do not make up one run")

// MergeOptions configure a merge.
type MergeOptions struct {
	// Command is the merge's command line, recorded in the merged run.
	Command string
	// NoTrend leaves the trend page of the folder above Out alone.
	NoTrend bool
}

// ShardDirs expands the merge's arguments: a run folder (holding run.json) stands for
// itself, any other folder for the run folders directly inside it, in name order.
func ShardDirs(args []string) ([]string, error) {
	var out []string
	for _, a := range args {
		if _, err := os.Stat(filepath.Join(a, "run.json")); err == nil {
			out = append(out, a)
			continue
		}
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", outcome.ErrBadInput, err)
		}
		n := 0
		for _, e := range entries {
			if _, err := os.Stat(filepath.Join(a, e.Name(), "run.json")); e.IsDir() && err == nil {
				out, n = append(out, filepath.Join(a, e.Name())), n+1
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("%w: %s holds no run folder", outcome.ErrBadInput, a)
		}
	}
	return out, nil
}

// Merge assembles the shard runs in dirs (each written by Run with a Shard) into one run
// folder out, as if one unsharded run had run the whole plan: every cell folder copied intact,
// run.json, the reports, and the trend page of out's parent. It refuses, wrapping ErrShards
// and naming them, shards missing or given twice, cells missing or run twice, and shards of
// different plans; a folder that is not a shard run, or an out folder that is not new or
// empty, wraps outcome.ErrBadInput. Nothing is written before every check passed.
func Merge(out string, dirs []string, opts MergeOptions) (*outcome.Summary, error) {
	if len(dirs) == 0 {
		return nil, fmt.Errorf("%w: no shard runs to merge", outcome.ErrBadInput)
	}
	if err := ValidateRunID(filepath.Base(out)); err != nil {
		return nil, err
	}
	shards := make([]*outcome.Summary, len(dirs))
	for i, d := range dirs {
		s, err := LoadRun(d)
		if err != nil {
			return nil, outcome.BadInput(err)
		}
		if s.Shard == nil {
			return nil, fmt.Errorf("%w: %s is not a shard run (no --shard)", outcome.ErrBadInput, d)
		}
		shards[i] = s
	}
	if err := checkShards(shards); err != nil {
		return nil, err
	}
	if err := newFolder(out); err != nil {
		return nil, err
	}
	sum := mergedSummary(out, shards, opts.Command)
	if err := copyCells(out, shards); err != nil {
		return sum, err
	}
	if err := SaveRun(sum); err != nil {
		return sum, err
	}
	return sum, writeReports(out, sum, !opts.NoTrend)
}

// checkShards holds the shards to one plan: the same N and cell list everywhere, every K
// once, every cell of the plan run by exactly one shard.
func checkShards(shards []*outcome.Summary) error {
	plan := shards[0].Shard
	var problems []string
	byK := map[int][]string{}
	ranBy := map[string][]string{}
	for _, s := range shards {
		if s.Shard.N != plan.N || !slices.Equal(s.Shard.Cells, plan.Cells) {
			problems = append(problems, fmt.Sprintf("%s is shard %d/%d of another plan than %s", s.Dir, s.Shard.K, s.Shard.N, shards[0].Dir))
			continue
		}
		byK[s.Shard.K] = append(byK[s.Shard.K], s.Dir)
		for _, c := range s.Cells {
			ranBy[c.ID] = append(ranBy[c.ID], s.Dir)
		}
	}
	for k := range plan.N {
		switch d := byK[k]; {
		case len(d) == 0:
			problems = append(problems, fmt.Sprintf("shard %d/%d is missing", k, plan.N))
		case len(d) > 1:
			problems = append(problems, fmt.Sprintf("shard %d/%d is given twice: %s", k, plan.N, strings.Join(d, ", ")))
		}
	}
	inPlan := map[string]bool{}
	for _, id := range plan.Cells {
		inPlan[id] = true
		if len(byK) == plan.N && len(ranBy[id]) == 0 {
			problems = append(problems, fmt.Sprintf("cell %s is missing", id))
		}
	}
	ids := make([]string, 0, len(ranBy))
	for id := range ranBy {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		switch d := ranBy[id]; {
		case !inPlan[id]:
			problems = append(problems, fmt.Sprintf("cell %s is not in the plan (%s)", id, strings.Join(d, ", ")))
		case len(d) > 1 && !duplicatedShard(d, byK):
			problems = append(problems, fmt.Sprintf("cell %s ran twice: %s", id, strings.Join(d, ", ")))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("%w: %s", ErrShards, strings.Join(problems, "; "))
	}
	return nil
}

// duplicatedShard reports whether the runs in dirs are one shard given twice, already named.
func duplicatedShard(dirs []string, byK map[int][]string) bool {
	for _, d := range byK {
		if len(d) > 1 && slices.Equal(d, dirs) {
			return true
		}
	}
	return false
}

// newFolder creates out, or accepts it empty; anything else wraps outcome.ErrBadInput.
func newFolder(out string) error {
	if err := os.MkdirAll(out, 0o755); err != nil {
		return fmt.Errorf("runner: merge: %w", err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return fmt.Errorf("runner: merge: %w", err)
	}
	if len(entries) > 0 {
		return fmt.Errorf("%w: %s is not empty: a merge writes a new run folder", outcome.ErrBadInput, out)
	}
	return nil
}

// mergedSummary is the summary one run of the whole plan would have written: cells in plan
// order, the earliest start, the span to the last shard's end.
func mergedSummary(out string, shards []*outcome.Summary, command string) *outcome.Summary {
	sort.SliceStable(shards, func(a, b int) bool { return shards[a].Shard.K < shards[b].Shard.K })
	first := shards[0]
	sum := &outcome.Summary{RunID: filepath.Base(out), Dir: out, Store: first.Store, Prefix: first.Prefix,
		Command: command, Version: first.Version, Started: first.Started, Preflight: first.Preflight}
	var end time.Time
	byID := map[string]*outcome.CellResult{}
	for _, s := range shards {
		sum.MergedFrom = append(sum.MergedFrom, s.RunID)
		if s.Started.Before(sum.Started) {
			sum.Started = s.Started
		}
		if e := s.Started.Add(s.Duration); e.After(end) {
			end = e
		}
		if sum.Preflight.Unsafe() == nil && (s.Preflight.Unsafe() != nil || s.Preflight != nil && s.Preflight.Error != "") {
			sum.Preflight = s.Preflight
		}
		for _, n := range s.NotApplicable {
			if !slices.Contains(sum.NotApplicable, n) {
				sum.NotApplicable = append(sum.NotApplicable, n)
			}
		}
		for _, c := range s.Cells {
			byID[c.ID] = c
		}
	}
	sum.Duration = end.Sub(sum.Started)
	for _, id := range first.Shard.Cells {
		if c := byID[id]; c != nil {
			sum.Cells = append(sum.Cells, c)
		}
	}
	return sum
}

// copyCells copies every shard's cell folders into out, file by file, and points the merged
// cells at their copies; each shard's store log is kept as store-<K>.log.
func copyCells(out string, shards []*outcome.Summary) error {
	for _, s := range shards {
		for _, c := range s.Cells {
			if c.Dir == "" {
				continue
			}
			dst := filepath.Join(out, c.ID)
			if err := copyTree(c.Dir, dst); err != nil {
				return fmt.Errorf("runner: merge: cell %s: %w", c.ID, err)
			}
			c.Dir = dst
		}
		log := filepath.Join(s.Dir, "store.log")
		if _, err := os.Lstat(log); err == nil {
			if err := copyFile(log, filepath.Join(out, fmt.Sprintf("store-%d.log", s.Shard.K))); err != nil {
				return fmt.Errorf("runner: merge: %w", err)
			}
		}
	}
	return nil
}

// copyTree copies the folder src to dst: folders and regular files only; a symbolic link or
// any other kind of entry is refused.
func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		target := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(target, 0o755)
		case d.Type().IsRegular():
			return copyFile(p, target)
		default:
			return fmt.Errorf("%s is not a regular file", p)
		}
	})
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return err
	}
	_, cerr := io.Copy(out, in)
	return errors.Join(cerr, out.Close())
}
