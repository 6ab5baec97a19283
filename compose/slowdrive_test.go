package compose_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/store"
)

// needFUSE skips a test where this process cannot mount FUSE drives, saying why.
func needFUSE(t *testing.T) {
	t.Helper()
	if err := compose.FUSEUsable(); err != nil {
		t.Skipf("FUSE not usable here: %v", err)
	}
}

// mounted lists the mount points of this machine under dir.
func mounted(t *testing.T, dir string) []string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) > 4 && strings.HasPrefix(f[4], dir) {
			out = append(out, f[4])
		}
	}
	return out
}

// serversHoldingFUSE lists the processes whose command line names dir and that hold a
// descriptor of /dev/fuse.
func serversHoldingFUSE(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		cmdline, err := os.ReadFile(p + "/cmdline")
		if err != nil || !strings.Contains(string(cmdline), dir) {
			continue
		}
		fds, _ := os.ReadDir(p + "/fd")
		for _, f := range fds {
			if target, _ := os.Readlink(p + "/fd/" + f.Name()); target == "/dev/fuse" {
				out = append(out, p+": "+strings.ReplaceAll(string(cmdline), "\x00", " "))
				break
			}
		}
	}
	return out
}

// timedPut is how long an unconditional PUT of value to key takes.
func timedPut(t *testing.T, s store.Store, key, value string) (string, time.Duration) {
	t.Helper()
	start := time.Now()
	etag, err := s.Put(context.Background(), key, []byte(value))
	must(t, err)
	return etag, time.Since(start)
}

// TestSlowDrive slows one of four FUSE drives by 300ms: a PUT, which writes every drive,
// takes at least about that long, and conditional writes still answer as they must (412 for a
// false condition, success for a true one). Back at no delay, the drive keeps its data. Stop
// leaves no mount behind.
func TestSlowDrive(t *testing.T) {
	needFUSE(t)
	const delay = 300 * time.Millisecond
	srv, s := startServer(t, compose.LocalOptions{Drives: 4, SlowableDrives: true})
	dir := srv.DataDir()
	if !srv.Slowable() || len(mounted(t, dir)) != 4 {
		t.Fatalf("slowable %v, mounts under the data folder %v; want 4 FUSE drives", srv.Slowable(), mounted(t, dir))
	}
	// A server holding the FUSE connection would hang on its own drive should the bench die.
	if held := serversHoldingFUSE(t, dir); len(held) != 0 {
		t.Errorf("the server inherited /dev/fuse: %v", held)
	}
	stale, fast := timedPut(t, s, "k", "v1")
	must(t, srv.DriveSlow(2, delay))
	etag, slow := timedPut(t, s, "k", "v2")
	t.Logf("PUT with no delay: %v; with drive 2 slowed by %v: %v", fast, delay, slow)
	if slow < delay/2 {
		t.Errorf("PUT with drive 2 slowed by %v took %v; want at least %v", delay, slow, delay/2)
	}
	ctx := context.Background()
	for what, code := range conditionalWrites(ctx, s, "k", "", stale) {
		if code != 412 {
			t.Errorf("drive 2 slow: %s answered %d, want 412", what, code)
		}
	}
	etag2, err := s.PutIfMatch(ctx, "k", []byte("v3"), etag)
	if err != nil {
		t.Fatalf("drive 2 slow: If-Match on the current ETag: %v", err)
	}
	if _, err := s.PutIfMatch(ctx, "k", []byte("v4"), etag); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Errorf("drive 2 slow: If-Match on the replaced ETag: %v, want 412", err)
	}
	must(t, srv.DriveSlow(2, 0))
	obj, err := s.Get(ctx, "k")
	must(t, err)
	if string(obj.Body) != "v3" || obj.ETag != etag2 {
		t.Errorf("after the delay: %q (ETag %s), want v3 (ETag %s)", obj.Body, obj.ETag, etag2)
	}
	srv.Stop()
	if m := mounted(t, dir); len(m) != 0 {
		t.Errorf("mounts left after Stop: %v", m)
	}
}

// TestDriveSlowRefused: DriveSlow on a server without FUSE drives, on a drive it does not
// have or with a negative delay is an error.
func TestDriveSlowRefused(t *testing.T) {
	srv, _ := startDrives(t, 4)
	if err := srv.DriveSlow(1, time.Second); err == nil || !strings.Contains(err.Error(), "slowable") {
		t.Errorf("DriveSlow on plain folders: %v, want an error naming slowable drives", err)
	}
	if _, err := compose.StartLocal(context.Background(), compose.LocalOptions{SlowableDrives: true}); err == nil {
		t.Error("SlowableDrives on one folder: no error")
	}
	needFUSE(t)
	slow, _ := startServer(t, compose.LocalOptions{Drives: 4, SlowableDrives: true})
	for _, c := range []struct {
		drive int
		delay time.Duration
	}{{0, time.Second}, {5, time.Second}, {1, -time.Second}} {
		if err := slow.DriveSlow(c.drive, c.delay); err == nil {
			t.Errorf("DriveSlow(%d, %v): no error", c.drive, c.delay)
		}
	}
}

// envMountChild makes the test binary a process that mounts FUSE drives and waits to be
// killed (TestSlowDrivesUnmountedWhenTheProcessDies).
const envMountChild = "FENCEBENCH_TEST_MOUNT_CHILD"

// TestSlowDrivesUnmountedWhenTheProcessDies starts a process that serves a server's drives
// through FUSE, kills it with SIGKILL (no Stop runs) and requires every mount to be gone
// shortly after: a dead bench leaves no mount behind.
func TestSlowDrivesUnmountedWhenTheProcessDies(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MinIO; skipped with -short")
	}
	needFUSE(t)
	if os.Getenv(envMountChild) != "" {
		mountAndWait(t)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestSlowDrivesUnmountedWhenTheProcessDies$", "-test.v")
	cmd.Env = append(os.Environ(), envMountChild+"=1")
	out, err := cmd.StdoutPipe()
	must(t, err)
	cmd.Stderr = os.Stderr
	must(t, cmd.Start())
	defer cmd.Process.Kill()
	var dir string
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if d, ok := strings.CutPrefix(lines.Text(), "data folder: "); ok {
			dir = d
			break
		}
	}
	if dir == "" {
		t.Fatal("the child printed no data folder")
	}
	defer os.RemoveAll(dir)
	if m := mounted(t, dir); len(m) != 3 {
		t.Fatalf("mounts of the child: %v, want 3", m)
	}
	must(t, cmd.Process.Kill())
	_ = cmd.Wait()
	deadline := time.Now().Add(10 * time.Second)
	for len(mounted(t, dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if m := mounted(t, dir); len(m) != 0 {
		t.Fatalf("mounts left 10s after the process died: %v", m)
	}
	for len(serversHoldingFUSE(t, dir)) > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if held := serversHoldingFUSE(t, dir); len(held) != 0 {
		t.Fatalf("processes still holding /dev/fuse after the bench died: %v", held)
	}
	if _, err := os.Stat(filepath.Join(dir, "backing", "d1")); err != nil {
		t.Errorf("the backing folder: %v", err)
	}
}

// mountAndWait is the child: a MinIO over three FUSE drives, its data folder printed, then
// nothing until it is killed.
func mountAndWait(t *testing.T) {
	srv, err := compose.StartLocal(context.Background(), compose.LocalOptions{Drives: 3, SlowableDrives: true})
	if err != nil {
		t.Fatal(err)
	}
	os.Stdout.WriteString("data folder: " + srv.DataDir() + "\n")
	time.Sleep(time.Minute)
	t.Fatal("not killed within a minute")
}

// TestSlowDrivesGoOffline: on FUSE drives, a drive taken offline (its backing folder moved
// away under the mount) is gone for the server as a plain folder would be: with two of four
// away every write fails with a 5xx, and with them back the data is there.
func TestSlowDrivesGoOffline(t *testing.T) {
	needFUSE(t)
	srv, s := startServer(t, compose.LocalOptions{Drives: 4, SlowableDrives: true})
	ctx := context.Background()
	etag, err := s.Put(ctx, "k", []byte("v1"))
	must(t, err)
	must(t, srv.DriveOffline(1))
	must(t, srv.DriveOffline(2))
	if _, err := s.Put(ctx, "k", []byte("v2")); status(err) < 500 {
		t.Errorf("PUT with two of four FUSE drives offline: %d (%v), want a 5xx", status(err), err)
	}
	must(t, srv.DrivesOnline())
	obj, err := s.Get(ctx, "k")
	must(t, err)
	if string(obj.Body) != "v1" || obj.ETag != etag {
		t.Errorf("after the drives came back: %q (ETag %s), want v1 (ETag %s)", obj.Body, obj.ETag, etag)
	}
}
