package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
)

// TestCompareStoresVersitygw certifies, from one stores file, the pinned MinIO, versitygw's
// posix backend (the binary in $FENCEBENCH_VERSITYGW_BIN, over a fresh folder, on a free port,
// with generated credentials) and a check-then-act front over the MinIO, with
// $FENCEBENCH_COMPARE_ROUNDS rounds (default 3), into $FENCEBENCH_COMPARE_OUT (default a
// temporary folder). `make compare-stores` builds versitygw and runs it; without the binary
// it is skipped. It requires the MinIO certified and the front refused; what versitygw shows
// is the comparison's to say.
func TestCompareStoresVersitygw(t *testing.T) {
	bin := os.Getenv("FENCEBENCH_VERSITYGW_BIN")
	if bin == "" {
		t.Skip("FENCEBENCH_VERSITYGW_BIN not set: `make compare-stores` builds versitygw and runs this")
	}
	pinned := externalMinIO(t)
	front, _ := unsafestore.Serve(t, pinned.Config(), &unsafestore.Options{Mode: unsafestore.CheckThenAct, Gap: 5 * time.Millisecond})
	gw := startVersitygw(t, bin, "fencebench")
	t.Setenv("MINIO_KEY", pinned.AccessKey)
	t.Setenv("MINIO_SECRET", pinned.SecretKey)
	t.Setenv("VGW_KEY", gw.access)
	t.Setenv("VGW_SECRET", gw.secret)
	file := writeStoresFile(t, [4]string{"pinned-minio", pinned.Endpoint, pinned.Bucket, "MINIO"},
		[4]string{"versitygw-posix", gw.endpoint, "fencebench", "VGW"},
		[4]string{"check-then-act-front", front.Endpoint, pinned.Bucket, "MINIO"})
	out := os.Getenv("FENCEBENCH_COMPARE_OUT")
	if out == "" {
		out = t.TempDir()
	}
	rounds := os.Getenv("FENCEBENCH_COMPARE_ROUNDS")
	if _, err := strconv.Atoi(rounds); err != nil {
		rounds = "3"
	}
	code, stdout, stderr := runCLI("certify", "--stores", file, "--rounds", rounds, "--out", out)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	dirs, _ := filepath.Glob(filepath.Join(out, "certify-*"))
	if len(dirs) == 0 {
		t.Fatalf("no comparison written")
	}
	cmp := readComparison(t, dirs[len(dirs)-1])
	for _, s := range cmp.Stores {
		t.Logf("%s: exit %d: %s", s.Name, s.ExitCode, s.Summary)
		switch {
		case s.Name == "pinned-minio" && s.ExitCode != outcome.ExitPass:
			t.Errorf("the pinned MinIO was not certified")
		case s.Name == "check-then-act-front" && s.ExitCode != outcome.ExitFail:
			t.Errorf("the check-then-act front was not refused")
		}
	}
	for _, r := range cmp.Rows {
		if r.Differs {
			t.Logf("differs: %-18s %v", r.ID, r.Cells)
		}
	}
	noSecrets(t, out, stdout+stderr, pinned.SecretKey, gw.secret)
}

type versitygw struct{ endpoint, access, secret string }

// startVersitygw starts versitygw's posix backend over a fresh folder holding the bucket,
// on a free port, with generated credentials, and waits until it answers.
func startVersitygw(t *testing.T, bin, bucket string) versitygw {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	gw := versitygw{endpoint: "http://" + addr, access: "vgw" + randomHex(t, 6), secret: randomHex(t, 20)}
	log, err := os.Create(filepath.Join(t.TempDir(), "versitygw.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--port", addr, "--quiet", "posix", root)
	// The credentials go by the environment, never on a command line other users can read.
	cmd.Env = append(os.Environ(), "ROOT_ACCESS_KEY_ID="+gw.access, "ROOT_SECRET_ACCESS_KEY="+gw.secret)
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait(); log.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for ctx.Err() == nil {
		if resp, err := http.Get(gw.endpoint + "/"); err == nil {
			resp.Body.Close()
			return gw
		}
		time.Sleep(100 * time.Millisecond)
	}
	b, _ := os.ReadFile(log.Name())
	t.Fatalf("versitygw did not answer on %s:\n%s", addr, b)
	return gw
}

func randomHex(t *testing.T, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(fmt.Errorf("random: %w", err))
	}
	return hex.EncodeToString(b)
}
