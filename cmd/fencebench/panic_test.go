package main

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
)

// TestGoroutinePanicIsACellError makes one goroutine of a running cell panic (a traffic
// client, a writer's sync loop, the fault proxy serving a request): the process lives on, the
// cell's verdict is error naming the panic, the exit code is 255, run.json is written and the
// embedded MinIO's temporary folder is gone.
func TestGoroutinePanicIsACellError(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MinIO")
	}
	for _, target := range []string{"a traffic client", "the sync loop of ", "the fault proxy of "} {
		t.Run(strings.TrimSpace(target), func(t *testing.T) {
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			var once sync.Once
			defer guard.SetTestHook(func(name string) {
				if strings.HasPrefix(name, target) {
					once.Do(func() { panic("injected by the test") })
				}
			})()
			out := t.TempDir()
			code, stdout, stderr := runCLI("run", "--out", out, "--run-id", "p", "--seed", "1", "steady-state")
			if code != outcome.ExitHarness {
				t.Fatalf("exit %d, want %d\n%s%s", code, outcome.ExitHarness, stdout, stderr)
			}
			sum, err := runner.LoadRun(filepath.Join(out, "p"))
			if err != nil {
				t.Fatalf("run.json: %v", err)
			}
			if len(sum.Cells) != 1 || sum.Cells[0].Verdict != checker.Error ||
				!strings.Contains(sum.Cells[0].Error, "panic in "+target) || !strings.Contains(sum.Cells[0].Error, "injected by the test") {
				t.Fatalf("cells %+v", sum.Cells)
			}
			left, _ := filepath.Glob(filepath.Join(tmp, "fencebench-minio-*"))
			if len(left) != 0 {
				t.Fatalf("the embedded MinIO's folder is left behind: %v", left)
			}
			if _, err := os.Stat(tmp); err != nil {
				t.Fatal(err)
			}
		})
	}
}
