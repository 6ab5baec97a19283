package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/system"
)

// pythonNode is the boto3 adapter's command; the test fails (it does not skip) when python3
// with boto3 is missing, as a MinIO test does without MinIO.
func pythonNode(t *testing.T, args ...string) system.Launcher {
	t.Helper()
	if out, err := exec.Command("python3", "-c", "import boto3").CombinedOutput(); err != nil {
		t.Fatalf("python3 with boto3 is needed (Debian: apt-get install python3-boto3): %v\n%s", err, out)
	}
	script, err := filepath.Abs(filepath.Join("..", "adapters", "python", "fencenode.py"))
	if err != nil {
		t.Fatal(err)
	}
	return system.Command(system.ProcOptions{Command: append([]string{"python3", "-u", script}, args...),
		AnswerTimeout: 15 * time.Second})
}

// TestSystemPython: a node written in Python with boto3 (one compare-and-swap state object)
// passes the paused-primary scenario through the same protocol, faults and checker.
func TestSystemPython(t *testing.T) {
	sum, err := runSys(t, SystemOptions{Launcher: pythonNode(t)}, sysScenario(t, sysPausedPrimary))
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		t.Fatalf("correct python node: %s %s %v\n%s", c.Verdict, c.Error, c.Result.Reasons, story(c.Events))
	}
	if count(c.Events, "a", history.Fenced) != 1 {
		t.Errorf("the paused python node was not fenced:\n%s", story(c.Events))
	}
}

// TestSystemPythonBrokenIsKilled: the Python node's broken variant (writes without If-Match)
// loses acknowledged writes through the same boundary.
func TestSystemPythonBrokenIsKilled(t *testing.T) {
	sum, err := runSys(t, SystemOptions{Launcher: pythonNode(t, "--break", "no-cas"), Kill: true,
		Violates: []history.Invariant{checker.NoAckedWriteLoss}}, sysScenario(t, sysPausedPrimary))
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		errs, _ := os.ReadFile(filepath.Join(c.Dir, "node-a.stderr"))
		t.Fatalf("the python node without If-Match survived: %s %s %v\n%s\nnode a's stderr:\n%s", c.Verdict, c.Error, c.Result.Reasons, story(c.Events), errs)
	}
}

// sysRelocation: a hands the shard to t after its 10th acknowledgement; t must end serving.
const sysRelocation = `name: sys-relocation
duration: 4s
writers:
  - {id: a, role: primary, term: 3}
  - {id: t, role: standby}
traffic: {clients: 2, rate: 20/s}
steps:
  - after: {writer: a, event: acked, count: 10}
    relocate: {writer: a, target: t}
expect:
  serving: t
  min_acked: 20
`

// TestSystemPythonRelocation: relocate is language-neutral: the Python node stands down on
// relocate and the bench promotes its target, which ends serving.
func TestSystemPythonRelocation(t *testing.T) {
	sum, err := runSys(t, SystemOptions{Launcher: pythonNode(t)}, sysScenario(t, sysRelocation))
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		t.Fatalf("python relocation: %s %s %v\n%s", c.Verdict, c.Error, c.Result.Reasons, story(c.Events))
	}
	handoffOf(t, c)
}
