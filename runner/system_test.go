package runner

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/adapters/fencelog"
	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/system"
)

var fenceprocBuild struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// fenceprocBin builds adapters/fenceproc once per test binary.
func fenceprocBin(t *testing.T) string {
	t.Helper()
	b := &fenceprocBuild
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "fencebench-fenceproc-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, "fenceproc")
		b.out, b.err = exec.Command("go", "build", "-o", b.bin, "github.com/fencebench/fencebench/adapters/fenceproc").CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("building fenceproc: %v\n%s", b.err, b.out)
	}
	return b.bin
}

// sysPausedPrimary: a pauses with writes in flight; b is promoted at a higher term while a
// is frozen, and a resumes only once b's promotion finished (each step waits for a node's
// own event, never for the clock). The correct protocol fences a's late writes; without the
// sweep (no-sweep) a's stale token still works and its late acks never reach b's log.
const sysPausedPrimary = `name: sys-paused-primary
duration: 5s
writers:
  - {id: a, role: primary, term: 5}
  - {id: b, role: standby}
traffic: {clients: 2, rate: 60/s}
steps:
  - after: {writer: a, event: acked, count: 12}
    pause: a
  - after: {writer: a, event: acked, count: 12, delay: 200ms}
    promote: {writer: b, term: 6}
  - after: {writer: b, event: promoted}
    resume: a
expect:
  min_acked: 15
`

// sysCrashPartition: a crashes and restarts on the same node id at a higher term, then its
// successor's path is partitioned for a while.
const sysCrashPartition = `name: sys-crash-partition
duration: 5s
writers:
  - {id: a, role: primary, term: 1}
  - {id: b, role: standby}
traffic: {clients: 2, rate: 60/s}
steps:
  - after: {writer: a, event: acked, count: 10}
    crash: a
  - after: {writer: a, event: acked, count: 10, delay: 100ms}
    restart: {writer: a, as: a2, term: 2}
  - after: {writer: a2, event: acked, count: 5}
    partition: {writer: a2, mode: refuse}
    for: 600ms
  - after: {writer: a2, event: acked, count: 5, delay: 300ms}
    promote: {writer: b, term: 3}
expect:
  min_acked: 15
`

func sysScenario(t *testing.T, yaml string) *scenarios.Scenario {
	t.Helper()
	name := strings.TrimPrefix(strings.SplitN(yaml, "\n", 2)[0], "name: ")
	sc, err := scenarios.Parse(name+".yaml", []byte(yaml), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func runSys(t *testing.T, so SystemOptions, scs ...*scenarios.Scenario) (*outcome.Summary, error) {
	t.Helper()
	return runSysJobs(t, 1, so, scs...)
}

// runSysJobs is runSys with jobs cells side by side.
func runSysJobs(t *testing.T, jobs int, so SystemOptions, scs ...*scenarios.Scenario) (*outcome.Summary, error) {
	t.Helper()
	e := env.Local{Local: testenv.MinIO(t)}
	sum, err := RunSystem(context.Background(), scs, Options{Out: t.TempDir(), Env: e, Prefix: testenv.Prefix(t),
		NoReports: true, Seed: 1, Jobs: jobs}, so)
	if pids := system.Running(); len(pids) > 0 {
		t.Errorf("node processes left running after the run: %v", pids)
	}
	return sum, err
}

func procSystem(t *testing.T, args ...string) system.Launcher {
	return system.Command(system.ProcOptions{Command: append([]string{fenceprocBin(t)}, args...), AnswerTimeout: 10 * time.Second})
}

func cellOf(t *testing.T, sum *outcome.Summary, err error) *outcome.CellResult {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	if len(sum.Cells) != 1 {
		t.Fatalf("%d cells", len(sum.Cells))
	}
	return sum.Cells[0]
}

func invariant(c *outcome.CellResult, name string) checker.InvariantResult {
	for _, ir := range c.Result.Invariants {
		if ir.Name == name {
			return ir
		}
	}
	return checker.InvariantResult{}
}

func count(evs []history.Event, w string, k history.Kind) int {
	n := 0
	for _, e := range evs {
		if e.Writer == w && e.Kind == k {
			n++
		}
	}
	return n
}

// TestSystemOwnProtocolPasses runs the bench's own protocol as external processes through
// a pause, a promotion, a crash with a restart on the same node id and a partition: every
// invariant holds, the paused primary is fenced, the final read holds every acknowledged op,
// and each node's stderr is kept in the cell folder.
func TestSystemOwnProtocolPasses(t *testing.T) {
	sum, err := runSys(t, SystemOptions{Launcher: procSystem(t)}, sysScenario(t, sysPausedPrimary), sysScenario(t, sysCrashPartition))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sum.Cells {
		for _, ir := range c.Result.Invariants {
			t.Logf("%s: %s %s: %s", c.ID, ir.Name, ir.Status, ir.Explanation)
		}
		if c.Verdict != checker.Pass {
			t.Fatalf("cell %s: %s: %s %v\n%s", c.ID, c.Verdict, c.Error, c.Result.Reasons, c.Result.Narrative)
		}
		if loss := invariant(c, checker.NoAckedWriteLoss); loss.Status != checker.Pass {
			t.Errorf("%s: NoAckedWriteLoss %s", c.ID, loss.Status)
		}
		if ph := invariant(c, NoPhantomOp); ph.Status != checker.Pass {
			t.Errorf("%s: NoPhantomOp is %q", c.ID, ph.Status)
		}
		if c.Result.Acked < 15 {
			t.Errorf("%s: only %d acked", c.ID, c.Result.Acked)
		}
		if !slices.Contains(c.Files, "node-a.stderr") || !slices.Contains(c.Files, "node-final-read.stderr") {
			t.Errorf("%s: stderr files not kept: %v", c.ID, c.Files)
		}
		if !strings.Contains(c.Client, fencelog.Name) {
			t.Errorf("%s: the system's name is not recorded: %q", c.ID, c.Client)
		}
	}
	paused := sum.Cells[0]
	if count(paused.Events, "a", history.Fenced) != 1 || count(paused.Events, "a", history.Pause) != 1 {
		t.Errorf("paused primary: want a paused once and fenced once, history:\n%s", story(paused.Events))
	}
	crashed := sum.Cells[1]
	if count(crashed.Events, "a", history.Crash) != 1 || count(crashed.Events, "a2", history.Ack) == 0 ||
		count(crashed.Events, "b", history.Ack) == 0 {
		t.Errorf("crash and restart: want a crashed, a2 and b acknowledging, history:\n%s", story(crashed.Events))
	}
	parts := 0
	for _, e := range crashed.Events {
		if e.Kind == history.FaultStart && strings.HasPrefix(e.Detail, "partition:a2") {
			parts++
		}
	}
	if parts != 1 {
		t.Errorf("the partition of a2's path did not open once (%d)", parts)
	}
}

// TestSystemBrokenVariantIsKilled: the same scenario with the no-sweep variant through the
// process boundary loses acknowledged writes, and the checker says so.
func TestSystemBrokenVariantIsKilled(t *testing.T) {
	sum, err := runSys(t, SystemOptions{Launcher: procSystem(t, "--variant", string(fence.NoSweep)), Kill: true,
		Violates: []history.Invariant{checker.NoAckedWriteLoss}}, sysScenario(t, sysPausedPrimary))
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		t.Fatalf("no-sweep survived: %s %s %v\n%s", c.Verdict, c.Error, c.Result.Reasons, story(c.Events))
	}
	if loss := invariant(c, checker.NoAckedWriteLoss); loss.Status != checker.Fail || len(c.Result.Lost) == 0 {
		t.Fatalf("NoAckedWriteLoss %s, %d lost", loss.Status, len(c.Result.Lost))
	}
	for _, lw := range c.Result.Lost {
		if lw.Writer != "a" || lw.Term != 5 {
			t.Errorf("lost op %d acknowledged by %s at term %d; want the paused a at term 5", lw.Op, lw.Writer, lw.Term)
		}
	}
}

// TestSystemInProcess runs the same protocol as a Go system in the bench's process: the
// interface carries the same messages as the process protocol.
func TestSystemInProcess(t *testing.T) {
	sum, err := runSys(t, SystemOptions{Launcher: system.InProcess("fencelog", fencelog.System{})}, sysScenario(t, sysCrashPartition))
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		t.Fatalf("%s %s %v", c.Verdict, c.Error, c.Result.Reasons)
	}
}

// TestSystemRefusesWhatItCannotDo: steps the system cannot take are refused before
// anything runs, naming the capability; a pause is refused for nodes that cannot be paused.
func TestSystemRefusesWhatItCannotDo(t *testing.T) {
	h := system.Hello{Name: "leasey", Capabilities: []string{system.CapSelfElect, system.CapRead}}
	err := ValidateForSystem(sysScenario(t, sysPausedPrimary), h, true)
	if err == nil || !strings.Contains(err.Error(), `capability "promote"`) || !strings.Contains(err.Error(), "leasey") {
		t.Fatalf("want a refusal naming the promote capability, got %v", err)
	}
	own := system.Hello{Name: fencelog.Name, Capabilities: []string{system.CapPromote, system.CapRead, system.CapTerms}}
	if err := ValidateForSystem(sysScenario(t, sysPausedPrimary), own, false); err == nil || !strings.Contains(err.Error(), "paused") {
		t.Fatalf("want pause refused for in-process nodes, got %v", err)
	}
	reloc, err := scenarios.Catalogue(scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	for _, sc := range reloc {
		if sc.Name == "relocation" {
			if err := ValidateForSystem(sc, own, true); err == nil || !strings.Contains(err.Error(), `capability "relocate"`) {
				t.Fatalf("want relocate refused, got %v", err)
			}
		}
	}
	_, err = runSys(t, SystemOptions{Launcher: system.InProcess("fencelog", fencelog.System{})}, sysScenario(t, sysPausedPrimary))
	if err == nil || !strings.Contains(err.Error(), "pause") || !errors.Is(err, outcome.ErrBadInput) {
		t.Fatalf("RunSystem did not refuse the scenario as bad input (exit 254): %v", err)
	}
}

// badNode is a node in sh that answers init and then does what rest says.
func badNode(rest string) system.Launcher {
	script := `read -r line
echo '{"type":"init_ok","in_reply_to":1,"protocol":"` + system.Version + `","name":"bad","version":"0","capabilities":["promote","terms","read"]}'
` + rest
	return system.Command(system.ProcOptions{Command: []string{"sh", "-c", script}, AnswerTimeout: 2 * time.Second})
}

// TestSystemBadNodesAreHarnessErrors: a node that prints garbage, never answers, or acks an
// op it was never sent ends the cell as a harness error (exit 255) naming the node, never a
// safety verdict, and leaves nothing running.
func TestSystemBadNodesAreHarnessErrors(t *testing.T) {
	sc := sysScenario(t, strings.Replace(sysPausedPrimary, "duration: 5s", "duration: 2s", 1))
	cases := []struct {
		name, script, want string
	}{
		{"garbage", "read -r line\necho 'connecting to s3...'\nsleep 30", "node a: stdout line 2: not a protocol message"},
		{"hang", "while read -r line; do :; done", "node a: never answered promote"},
		{"ack-never-sent", `read -r line
echo '{"type":"promote_ok","in_reply_to":2,"term":5}'
read -r line
echo '{"type":"write_ok","in_reply_to":3,"op":99999,"term":5}'
sleep 30`, "acknowledges an op it was not sent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sum, err := runSys(t, SystemOptions{Launcher: badNode(c.script)}, sc)
			cell := cellOf(t, sum, err)
			if cell.Verdict != checker.Error || sum.ExitCode() != outcome.ExitHarness {
				t.Fatalf("verdict %s (exit %d), want a harness error: %v", cell.Verdict, sum.ExitCode(), cell.Result.Reasons)
			}
			if !strings.Contains(cell.Error, c.want) {
				t.Fatalf("error %q does not say %q", cell.Error, c.want)
			}
		})
	}
	t.Run("exit-at-start", func(t *testing.T) {
		_, err := runSys(t, SystemOptions{Launcher: system.Command(system.ProcOptions{
			Command: []string{"sh", "-c", "echo 'missing --bucket' >&2; exit 2"}})}, sc)
		if err == nil || !strings.Contains(err.Error(), "node probe: exited") || !strings.Contains(err.Error(), "missing --bucket") {
			t.Fatalf("want the start failure named, got %v", err)
		}
	})
}
