package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

// TestBadRunIDAndPrefixAreBadInput: an unsafe --run-id or --prefix is refused with exit 254
// and a message naming the flag, before any store is started or folder written.
func TestBadRunIDAndPrefixAreBadInput(t *testing.T) {
	out := filepath.Join(t.TempDir(), "results")
	for _, tc := range []struct{ args []string }{
		{[]string{"--run-id", ".."}},
		{[]string{"--run-id", "../elsewhere"}},
		{[]string{"--prefix", "a//"}},
		{[]string{"--prefix", "../"}},
		{[]string{"--prefix", "."}},
		{[]string{"--prefix", "/abs/"}},
	} {
		args := append(append([]string{"run", "--out", out}, tc.args...), "steady-state")
		code, _, stderr := runCLI(args...)
		flag := strings.TrimPrefix(tc.args[0], "--")
		if code != outcome.ExitBadInput || !strings.Contains(stderr, "--"+flag+": ") {
			t.Errorf("%v: exit %d, stderr %q; want 254 naming --%s", tc.args, code, stderr, flag)
		}
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a refused run wrote %s (%v)", out, err)
	}
}

// TestReportWritesOnlyInsideTheRunFolder: `report` on a run folder whose run.json names a
// cell outside it exits 254 and writes nothing; on a sound folder it writes inside it only,
// never the page of the folder above.
func TestReportWritesOnlyInsideTheRunFolder(t *testing.T) {
	root := t.TempDir()
	run := filepath.Join(root, "run")
	victim := filepath.Join(root, "victim")
	for _, d := range []string{run, victim} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write := func(cells string) {
		if err := os.WriteFile(filepath.Join(run, "run.json"), []byte(`{"run_id":"run","cells":`+cells+`}`), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(`[{"id":"../victim","verdict":"pass"}]`)
	if code, _, stderr := runCLI("report", run); code != outcome.ExitBadInput || !strings.Contains(stderr, "../victim") {
		t.Fatalf("hostile run.json: exit %d, %s", code, stderr)
	}
	write(`[{"id":"gone","verdict":"error","error":"not run","dir":"` + victim + `"}]`)
	if code, stdout, stderr := runCLI("report", run); code != outcome.ExitHarness {
		t.Fatalf("a sound run folder: exit %d\n%s%s", code, stdout, stderr)
	}
	for _, p := range []string{filepath.Join(victim, "result.json"), filepath.Join(root, "index.html")} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("report wrote %s, outside the run folder", p)
		}
	}
	if _, err := os.Stat(filepath.Join(run, "index.html")); err != nil {
		t.Errorf("report did not write its own pages: %v", err)
	}
}
