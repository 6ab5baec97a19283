package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fencebench/fencebench/outcome"
)

// The test binary doubles as the fencebench command when FENCEBENCH_AS_MAIN is set, so the
// signal test exercises the real main (signal handling included).
func TestMain(m *testing.M) {
	if os.Getenv("FENCEBENCH_AS_MAIN") == "1" {
		if os.Getenv("FENCEBENCH_SLOW_CLEANUP") == "1" {
			beforeCleanup = func() {
				fmt.Fprintln(os.Stderr, "cleanup paused")
				time.Sleep(2 * time.Minute)
			}
		}
		os.Args = append([]string{"fencebench"}, strings.Fields(os.Getenv("FENCEBENCH_ARGS"))...)
		main()
		return
	}
	os.Exit(m.Run())
}

// syncBuffer is a bytes.Buffer safe for one writer and concurrent readers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func runCLI(args ...string) (code int, stdout, stderr string) {
	var o, e bytes.Buffer
	code = run(context.Background(), args, &o, &e)
	return code, o.String(), e.String()
}

func TestExitCodesForBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"nosuch"}, `unknown command "nosuch"`},
		{[]string{}, "usage"},
		{[]string{"validate", "../../scenarios/testdata/invalid/unknown-writer.yaml"}, "unknown-writer.yaml:9:5: steps[0].partition.writer"},
		{[]string{"validate", "no-such-scenario"}, "no such file, directory or shipped scenario"},
		{[]string{"run", "--client", "bogus", "steady-state"}, `--client "bogus"`},
		{[]string{"run", "--variant", "no-such-variant", "steady-state"}, "unknown variant"},
		{[]string{"run", "../../scenarios/testdata/invalid/term-clash.yaml"}, "term clash"},
		{[]string{"run", "--variant", "no-sweep", "--matrix"}, "exclude each other"},
	} {
		code, _, stderr := runCLI(tc.args...)
		if code != outcome.ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, outcome.ExitBadInput, tc.want)
		}
	}
}

func TestValidateAndList(t *testing.T) {
	code, out, stderr := runCLI("validate")
	if code != outcome.ExitPass || !strings.Contains(out, "ok  steady-state") {
		t.Fatalf("validate the catalogue: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runCLI("list")
	for _, want := range []string{"partitioned-primary", "no-readoption-guard", "restore-before-claim", "DESCRIPTION"} {
		if code != outcome.ExitPass || !strings.Contains(out, want) {
			t.Fatalf("list: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
}

// TestInterruptStopsEverything sends SIGINT, SIGTERM or SIGHUP to a running `fencebench
// run` and checks that it exits with the harness code, having written run.json, and leaves
// no MinIO behind.
func TestInterruptStopsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MinIO")
	}
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			out := t.TempDir()
			cmd, stderr, endpoint := startRun(t, out)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			waitExit(t, cmd, stderr, 40*time.Second)
			if _, err := os.Stat(filepath.Join(out, "r", "run.json")); err != nil {
				t.Fatalf("no run.json after %v: %v\n%s", sig, err, stderr.String())
			}
			if c, err := net.DialTimeout("tcp", endpoint, time.Second); err == nil {
				c.Close()
				t.Fatalf("MinIO still answers at %s after fencebench exited", endpoint)
			}
		})
	}
}

// TestSecondInterruptAbandonsCleanup interrupts a run, then interrupts its cleanup (held up
// by a test hook): the process ends at once, naming the store's data folder it left.
func TestSecondInterruptAbandonsCleanup(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MinIO")
	}
	cmd, stderr, _ := startRun(t, t.TempDir(), "FENCEBENCH_SLOW_CLEANUP=1")
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(40 * time.Second)
	for !strings.Contains(stderr.String(), "cleanup paused") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if !strings.Contains(stderr.String(), "stopping and cleaning up") || !strings.Contains(stderr.String(), "cleanup paused") {
		t.Fatalf("the run did not start its cleanup after SIGINT:\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, stderr, 5*time.Second)
	m := regexp.MustCompile(`may be left behind: the embedded MinIO's data folder (\S+)`).FindStringSubmatch(stderr.String())
	if m == nil {
		t.Fatalf("the abandoned cleanup does not name the store's data folder:\n%s", stderr.String())
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Fatalf("the named folder %s does not exist: %v", m[1], err)
	}
}

// startRun starts `fencebench run` on a 30s scenario in a child process (its temporary files
// under a test folder) and returns once the cell runs, with the store's endpoint.
func startRun(t *testing.T, out string, env ...string) (*exec.Cmd, *syncBuffer, string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), append(env, "FENCEBENCH_AS_MAIN=1", "TMPDIR="+t.TempDir(),
		"FENCEBENCH_ARGS=run --out "+out+" --run-id r --seed 1 ../../runner/testdata/long-steady.yaml")...)
	stderr := &syncBuffer{} // written by exec's copying goroutine while the test reads it
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill() })
	endpoint := ""
	deadline := time.Now().Add(60 * time.Second)
	for endpoint == "" && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
		for _, line := range strings.Split(stderr.String(), "\n") {
			var rec struct {
				Msg      string `json:"msg"`
				Endpoint string `json:"endpoint"`
			}
			if json.Unmarshal([]byte(line), &rec) == nil && rec.Msg == "store started" {
				endpoint = strings.TrimPrefix(rec.Endpoint, "http://")
			}
		}
	}
	if endpoint == "" {
		t.Fatalf("the run never reported its store:\n%s", stderr.String())
	}
	time.Sleep(1500 * time.Millisecond)
	return cmd, stderr, endpoint
}

// waitExit waits for the child to exit with the harness code within d.
func waitExit(t *testing.T, cmd *exec.Cmd, stderr *syncBuffer, d time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("fencebench did not stop within %v:\n%s", d, stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != outcome.ExitHarness {
		t.Fatalf("exit code %d, want %d:\n%s", code, outcome.ExitHarness, stderr.String())
	}
}

// lockedBuffer is a bytes.Buffer the child's output copier and the test may use at once.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
