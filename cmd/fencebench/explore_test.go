package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
)

func TestExploreRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explore"}, "give a budget"},
		{[]string{"explore", "--schedules", "-3"}, "must not be negative"},
		{[]string{"explore", "--schedules", "5", "steady-state"}, "unexpected arguments"},
		{[]string{"explore", "--schedules", "5", "--variant", "nope"}, "unknown variant"},
		{[]string{"explore", "--schedules", "5", "--confirm", "moon"}, `--confirm "moon"`},
		{[]string{"explore", "--schedules", "5", "--stack", "moon"}, `--stack "moon"`},
		{[]string{"certify", "--stack", "sim"}, "the simulated stack has no endpoint"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != outcome.ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, outcome.ExitBadInput, tc.want)
		}
	}
}

// The correct protocol explores clean (exit 0); a broken variant is found and the command
// says so with exit 1, the shrunk scenario's path and a report.
func TestExploreExitCodes(t *testing.T) {
	out := t.TempDir()
	code, stdout, stderr := runCLI("explore", "--schedules", "60", "--seed", "1", "--confirm", "none", "--out", out, "--run-id", "ok")
	if code != outcome.ExitPass || !strings.Contains(stdout, "60 schedules of correct on sim") {
		t.Fatalf("correct protocol: exit %d\n%s\n%s", code, stdout, stderr)
	}
	code, stdout, stderr = runCLI("explore", "--schedules", "300", "--seed", "1", "--first", "--replays", "2", "--confirm", "none",
		"--variant", "no-seq", "--out", out, "--run-id", "bad")
	// The first failure violates SeqMonotonic, alone or with another invariant the same
	// out-of-order ack broke (MutualExclusion+SeqMonotonic).
	if code != outcome.ExitFail || !regexp.MustCompile(`FAIL (\w+\+)*SeqMonotonic\b`).MatchString(stdout) || !strings.Contains(stdout, "failures/1.yaml") {
		t.Fatalf("no-seq: exit %d\n%s\n%s", code, stdout, stderr)
	}
	x, err := reports.ReadExploration(filepath.Join(out, "bad"))
	if err != nil || x.Failed == 0 || x.Stopped != "first failure" {
		t.Fatalf("exploration %+v, %v", x, err)
	}
	if _, err := os.Stat(filepath.Join(out, "bad", "explore.html")); err != nil {
		t.Fatal(err)
	}
}
