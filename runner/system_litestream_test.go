package runner

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/system"
)

var litestreamBuild struct {
	once sync.Once
	bin  string
	err  error
	out  []byte
}

// litestreamBin builds adapters/litestream (its own module, Litestream v0.5.18) once per test
// binary; the first build on a machine downloads and compiles Litestream's dependencies.
func litestreamBin(t *testing.T) string {
	t.Helper()
	b := &litestreamBuild
	b.once.Do(func() {
		dir, err := os.MkdirTemp("", "fencebench-litestream-")
		if err != nil {
			b.err = err
			return
		}
		b.bin = filepath.Join(dir, "litestream-lease")
		cmd := exec.Command("go", "build", "-o", b.bin, ".")
		cmd.Dir = filepath.Join("..", "adapters", "litestream")
		b.out, b.err = cmd.CombinedOutput()
	})
	if b.err != nil {
		t.Fatalf("building adapters/litestream: %v\n%s", b.err, b.out)
	}
	return b.bin
}

// TestSystemLitestreamLeaseLosesAckedWrites: Litestream's S3 lease (a TTL lock object with
// conditional writes) with a write-ahead log that has no fencing check of its own loses an
// acknowledged write when the owner's log write stalls while the owner is paused past the
// TTL (adapters/litestream/stalled-owner.yaml): the checker finds it as NoAckedWriteLoss.
func TestSystemLitestreamLeaseLosesAckedWrites(t *testing.T) {
	bin := litestreamBin(t)
	sc, err := scenarios.LoadFile(filepath.Join("..", "adapters", "litestream", "stalled-owner.yaml"), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	l := system.Command(system.ProcOptions{Command: []string{bin, "--ttl", "2s"}, AnswerTimeout: 15 * time.Second})
	sum, err := runSys(t, SystemOptions{Launcher: l, Kill: true, Violates: []history.Invariant{checker.NoAckedWriteLoss}}, sc)
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		t.Fatalf("the lease without fencing on its data writes lost nothing: %s %s %v\n%s", c.Verdict, c.Error, c.Result.Reasons, c.Result.Narrative)
	}
	t.Logf("found: %s", c.Result.Narrative)
}

// TestSystemLitestreamLeaseSteadyState: the same lease and log pass when nothing stalls, a
// lease handed over on a crash included: what the stalled-owner test finds is the missing
// fencing check, not a broken adapter.
func TestSystemLitestreamLeaseSteadyState(t *testing.T) {
	bin := litestreamBin(t)
	sc := sysScenario(t, `name: litestream-crash
duration: 6s
writers:
  - {id: a, role: primary, term: 1}
  - {id: b, role: standby}
traffic: {clients: 2, rate: 60/s}
steps:
  - after: {writer: a, event: acked, count: 10}
    crash: a
expect:
  min_acked: 20
`)
	l := system.Command(system.ProcOptions{Command: []string{bin, "--ttl", "1s"}, AnswerTimeout: 15 * time.Second})
	sum, err := runSys(t, SystemOptions{Launcher: l}, sc)
	c := cellOf(t, sum, err)
	if c.Verdict != checker.Pass {
		t.Fatalf("%s %s %v\n%s", c.Verdict, c.Error, c.Result.Reasons, c.Result.Narrative)
	}
	if count(c.Events, "b", history.Ack) == 0 {
		t.Fatalf("b never took the lease over after a crashed:\n%s", story(c.Events))
	}
}
