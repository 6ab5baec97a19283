package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The test binary doubles as the fencebench command when FENCEBENCH_AS_MAIN is set, so the
// signal test exercises the real main (signal handling included).
func TestMain(m *testing.M) {
	if os.Getenv("FENCEBENCH_AS_MAIN") == "1" {
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
		if code != exitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, exitBadInput, tc.want)
		}
	}
}

func TestValidateAndList(t *testing.T) {
	code, out, stderr := runCLI("validate")
	if code != exitPass || !strings.Contains(out, "ok  steady-state") {
		t.Fatalf("validate the catalogue: exit %d\n%s%s", code, out, stderr)
	}
	code, out, _ = runCLI("list")
	for _, want := range []string{"partitioned-primary", "no-readoption-guard", "restore-before-claim", "DESCRIPTION"} {
		if code != exitPass || !strings.Contains(out, want) {
			t.Fatalf("list: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
}

// TestInterruptStopsEverything sends SIGINT to a running `fencebench run` and checks that it
// exits with the harness code and leaves no MinIO behind.
func TestInterruptStopsEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MinIO")
	}
	out := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "FENCEBENCH_AS_MAIN=1",
		"FENCEBENCH_ARGS=run --out "+out+" --seed 1 ../../runner/testdata/long-steady.yaml")
	var stderr syncBuffer // written by exec's copying goroutine while the test reads it
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until the store is up and the cell runs, then interrupt.
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
		cmd.Process.Kill()
		t.Fatalf("the run never reported its store:\n%s", stderr.String())
	}
	time.Sleep(1500 * time.Millisecond)
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(40 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("fencebench did not stop within 40s of SIGINT:\n%s", stderr.String())
	}
	if code := cmd.ProcessState.ExitCode(); code != exitHarness {
		t.Fatalf("exit code %d after SIGINT, want %d:\n%s", code, exitHarness, stderr.String())
	}
	if c, err := net.DialTimeout("tcp", endpoint, time.Second); err == nil {
		c.Close()
		t.Fatalf("MinIO still answers at %s after fencebench exited", endpoint)
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
