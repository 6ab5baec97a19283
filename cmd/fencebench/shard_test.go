package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

// shardScenarios is the fixed part of the catalogue the shard tests run, kill matrix on.
var shardScenarios = []string{"aba-etag", "missing-key-404", "stale-grant", "steady-state", "conflict-409"}

// runAsMain runs the fencebench command in a process of its own and returns its exit code
// and standard error.
func runAsMain(t *testing.T, args ...string) (int, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FENCEBENCH_AS_MAIN=1", "TMPDIR="+t.TempDir(), "FENCEBENCH_ARGS="+strings.Join(args, " "))
	var stderr strings.Builder
	cmd.Stderr = &stderr
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), stderr.String()
	}
	if err != nil {
		t.Fatal(err)
	}
	return 0, stderr.String()
}

// runShards runs the scenarios as n shards, each in its own process, all at once, into
// <dir>/s<K>.
func runShards(t *testing.T, dir string, n int) {
	t.Helper()
	var wg sync.WaitGroup
	codes, errs := make([]int, n), make([]string, n)
	for k := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := append([]string{"run", "--stack", "sim", "--matrix", "--seed", "7", "--shard", strconv.Itoa(k) + "/" + strconv.Itoa(n),
				"--out", dir, "--run-id", "s" + strconv.Itoa(k)}, shardScenarios...)
			codes[k], errs[k] = runAsMain(t, args...)
		}()
	}
	wg.Wait()
	for k := range n {
		if codes[k] != outcome.ExitPass {
			t.Fatalf("shard %d/%d: exit %d\n%s", k, n, codes[k], errs[k])
		}
	}
}

// cellVerdicts reads a run folder's run.json: cell id -> verdict and seed.
func cellVerdicts(t *testing.T, dir string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum outcome.Summary
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, c := range sum.Cells {
		if _, dup := out[c.ID]; dup {
			t.Fatalf("%s: cell %s twice", dir, c.ID)
		}
		out[c.ID] = string(c.Verdict) + " seed " + strconv.FormatUint(c.Seed, 10)
		if _, err := os.Stat(filepath.Join(dir, c.ID, "history.jsonl")); err != nil {
			t.Errorf("%s: cell folder %s incomplete: %v", dir, c.ID, err)
		}
	}
	return out
}

// TestShardedRunMergesToOneRun runs a fixed part of the catalogue with the kill matrix as
// three shards in separate processes, merges them, and finds exactly the cells, seeds and
// verdicts of one unsharded run with the same seed, in one run folder with its reports.
func TestShardedRunMergesToOneRun(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	runShards(t, shards, 3)
	whole := append([]string{"run", "--stack", "sim", "--matrix", "--seed", "7", "--out", filepath.Join(dir, "results"), "--run-id", "whole"}, shardScenarios...)
	if code, stderr := runAsMain(t, whole...); code != outcome.ExitPass {
		t.Fatalf("unsharded run: exit %d\n%s", code, stderr)
	}
	merged := filepath.Join(dir, "results", "merged")
	code, stdout, stderr := runCLI("merge", merged, shards)
	if code != outcome.ExitPass {
		t.Fatalf("merge: exit %d\n%s\n%s", code, stdout, stderr)
	}
	want, got := cellVerdicts(t, filepath.Join(dir, "results", "whole")), cellVerdicts(t, merged)
	if len(want) < 10 || len(got) != len(want) {
		t.Fatalf("merged %d cells, unsharded %d (want at least 10)", len(got), len(want))
	}
	for id, v := range want {
		if got[id] != v {
			t.Errorf("cell %s: merged %q, unsharded %q", id, got[id], v)
		}
	}
	for _, f := range []string{"index.html", "junit.xml", "summary.json"} {
		if st, err := os.Stat(filepath.Join(merged, f)); err != nil || st.Size() == 0 {
			t.Errorf("merged run lacks %s: %v", f, err)
		}
	}
	trend, err := os.ReadFile(filepath.Join(dir, "results", "index.html"))
	if err != nil || !strings.Contains(string(trend), "merged/index.html") {
		t.Errorf("the trend page does not list the merged run: %v", err)
	}
}

// TestMergeRefusesIncompleteShards: a missing shard and a shard given twice are refused with
// exit 255, naming the shard, and nothing is written.
func TestMergeRefusesIncompleteShards(t *testing.T) {
	dir := t.TempDir()
	shards := filepath.Join(dir, "shards")
	runShards(t, shards, 3)
	s := func(k int) string { return filepath.Join(shards, "s"+strconv.Itoa(k)) }
	for _, tc := range []struct {
		name string
		dirs []string
		want string
	}{
		{"missing", []string{s(0), s(2)}, "shard 1/3 is missing"},
		{"duplicated", []string{s(0), s(1), s(2), s(2)}, "shard 2/3 is given twice"},
	} {
		out := filepath.Join(dir, "results", tc.name)
		code, _, stderr := runCLI(append([]string{"merge", out}, tc.dirs...)...)
		if code != outcome.ExitHarness || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want %d naming %q", tc.name, code, stderr, outcome.ExitHarness, tc.want)
		}
		if _, err := os.Stat(out); err == nil {
			t.Errorf("%s: the refused merge wrote %s", tc.name, out)
		}
	}
	if code, _, stderr := runCLI("merge", filepath.Join(dir, "x"), filepath.Join(dir, "nothing")); code != outcome.ExitBadInput {
		t.Errorf("merge of a missing folder: exit %d (%s), want %d", code, stderr, outcome.ExitBadInput)
	}
}
