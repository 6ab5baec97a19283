package main

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

// explore --system refuses what cannot explore a system, before any node starts: the bench's
// protocol variants, a command that does not split into words, and the simulated stack,
// which has no endpoint a node's process could reach.
func TestExploreSystemRefusesBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"explore", "--schedules", "1", "--system", "./node", "--variant", "no-sweep"}, "a system's variant is its command's business"},
		{[]string{"explore", "--schedules", "1", "--system", "./node 'open"}, `--system "./node 'open"`},
		{[]string{"explore", "--schedules", "1", "--system", "./node", "--shrink-runs", "-1"}, "--shrink-runs must not be negative"},
		{[]string{"explore", "--schedules", "1", "--system", "./node", "--stack", "sim"}, "the simulated stack has no endpoint"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != outcome.ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, outcome.ExitBadInput, tc.want)
		}
	}
}
