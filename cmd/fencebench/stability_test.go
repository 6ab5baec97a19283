package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
)

func readStability(t *testing.T, dir string) reports.Stability {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "stability.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s reports.Stability
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestStabilityRounds: two rounds on both clients beside the CPU hog, on the simulated stack:
// every round is a run folder of its own, each cell is counted per client, nothing flipped,
// exit 0. A scenario expected to fail that the correct protocol passes is unexpected in every
// round: exit 1 and a rate of 100%.
func TestStabilityRounds(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI("stability", "--rounds", "2", "--hog", "--stack", "sim", "--seed", "5",
		"--out", out, "--run-id", "ok", "equal-term-twin", "steady-state")
	if code != outcome.ExitPass {
		t.Fatalf("exit %d\n%s\n%s", code, stdout, stderr)
	}
	s := readStability(t, filepath.Join(out, "ok"))
	if len(s.Runs) != 4 || len(s.Cells) != 6 || s.Unexpected != 0 || s.Hog != runtime.NumCPU() {
		t.Fatalf("runs %d, cells %d, unexpected %d, hog %d: want 4, 6 (3 cells x 2 clients), 0, %d",
			len(s.Runs), len(s.Cells), s.Unexpected, s.Hog, runtime.NumCPU())
	}
	for _, r := range s.Runs {
		if _, err := os.Stat(filepath.Join(out, "ok", r.Dir, "index.html")); err != nil {
			t.Errorf("round %d %s: %v", r.Round, r.Client, err)
		}
	}
	if s.Runs[0].Seed != 5 || s.Runs[2].Seed != 6 {
		t.Errorf("seeds %d, %d: want 5 then 6", s.Runs[0].Seed, s.Runs[2].Seed)
	}

	bad := filepath.Join(t.TempDir(), "expects-fail.yaml")
	if err := os.WriteFile(bad, []byte(`name: expects-fail
duration: 1s
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 50ms}
writers:
  - {id: a, role: primary, term: 1}
expect:
  verdict: fail
`), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr = runCLI("stability", "--rounds", "2", "--clients", "minio-go", "--stack", "sim", "--speed", "5",
		"--out", out, "--run-id", "flips", bad)
	if code != outcome.ExitFail || !strings.Contains(stdout, "2 unexpected verdicts in 1 cells") {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	if s := readStability(t, filepath.Join(out, "flips")); len(s.Cells) != 1 || s.Cells[0].Rate != 1 {
		t.Fatalf("cells %+v: want one cell flipping in every round", s.Cells)
	}
}

func TestStabilityRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"stability", "--rounds", "0"}, "--rounds 0"},
		{[]string{"stability", "--clients", "minio-go,boto"}, "--clients"},
		{[]string{"stability", "no-such-scenario"}, "no-such-scenario"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != outcome.ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, outcome.ExitBadInput, tc.want)
		}
	}
}
