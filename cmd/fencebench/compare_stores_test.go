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
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
)

// TestCompareStoresVersitygw certifies, from one stores file, the pinned MinIO, another MinIO
// release (the binary in $FENCEBENCH_OTHER_MINIO_BIN, named by $FENCEBENCH_OTHER_MINIO_SERVER;
// left out when unset), versitygw's posix backend (the binary in $FENCEBENCH_VERSITYGW_BIN,
// over a fresh folder, on a free port, with generated credentials) and a check-then-act front
// over the pinned MinIO, with $FENCEBENCH_COMPARE_ROUNDS rounds (default 3), into
// $FENCEBENCH_COMPARE_OUT (default a temporary folder). `make compare-stores` builds the
// binaries and runs it; without versitygw it is skipped. It requires the pinned MinIO
// certified, the front refused, the other release refused by the probe named in
// $FENCEBENCH_OTHER_MINIO_FAILS when that is set, and every store's column to name its
// server; what versitygw shows is the comparison's to say.
func TestCompareStoresVersitygw(t *testing.T) {
	bin := os.Getenv("FENCEBENCH_VERSITYGW_BIN")
	if bin == "" {
		t.Skip("FENCEBENCH_VERSITYGW_BIN not set: `make compare-stores` builds versitygw and runs this")
	}
	pinned := externalMinIO(t)
	front, _ := unsafestore.Serve(t, pinned.Config(), &unsafestore.Options{Mode: unsafestore.CheckThenAct, Gap: 5 * time.Millisecond})
	gw := startVersitygwPosix(t, bin, "versitygw-posix", versitygwVersion, "fencebench")
	t.Setenv("MINIO_KEY", pinned.AccessKey)
	t.Setenv("MINIO_SECRET", pinned.SecretKey)
	pinnedServer := "MinIO " + strings.TrimPrefix(compose.MinIOPin, "github.com/minio/minio@") + " (pinned)"
	entries := []storeEntry{{"pinned-minio", pinnedServer, pinned.Endpoint, pinned.Bucket, "MINIO"}}
	secrets := []string{pinned.SecretKey, gw.secret}
	other := otherMinIO(t)
	if other != nil {
		t.Setenv("OLD_KEY", other.AccessKey)
		t.Setenv("OLD_SECRET", other.SecretKey)
		entries = append(entries, storeEntry{"other-minio", os.Getenv("FENCEBENCH_OTHER_MINIO_SERVER"), other.Endpoint, other.Bucket, "OLD"})
		secrets = append(secrets, other.SecretKey)
	}
	// The third-party stores: versitygw always, SeaweedFS and rclone when built.
	third := []thirdParty{gw}
	if b := os.Getenv("FENCEBENCH_SEAWEEDFS_BIN"); b != "" {
		third = append(third, startSeaweedFS(t, b, envOr("FENCEBENCH_SEAWEEDFS_VERSION", binVersion(b, "version")), "fencebench"))
	}
	if b := os.Getenv("FENCEBENCH_RCLONE_BIN"); b != "" {
		third = append(third, startRclone(t, b, envOr("FENCEBENCH_RCLONE_VERSION", binVersion(b, "version")), "fencebench"))
	}
	for i, p := range third {
		v := fmt.Sprintf("TP%d", i)
		t.Setenv(v+"_KEY", p.access)
		t.Setenv(v+"_SECRET", p.secret)
		entries = append(entries, storeEntry{p.name, p.server, p.endpoint, p.bucket, v})
		secrets = append(secrets, p.secret)
	}
	entries = append(entries, storeEntry{"check-then-act-front", "check-then-act front over the pinned MinIO", front.Endpoint, pinned.Bucket, "MINIO"})
	file := writeStores(t, entries...)
	out := os.Getenv("FENCEBENCH_COMPARE_OUT")
	if out == "" {
		out = t.TempDir()
	}
	rounds := os.Getenv("FENCEBENCH_COMPARE_ROUNDS")
	if _, err := strconv.Atoi(rounds); err != nil {
		rounds = "3"
	}
	start := time.Now()
	code, stdout, stderr := runCLI("certify", "--stores", file, "--rounds", rounds, "--out", out)
	t.Logf("exit %d in %v\nstdout:\n%s\nstderr:\n%s", code, time.Since(start).Round(time.Second), stdout, stderr)
	dirs, _ := filepath.Glob(filepath.Join(out, "certify-*"))
	if len(dirs) == 0 {
		t.Fatalf("no comparison written")
	}
	dir := dirs[len(dirs)-1]
	cmp := readComparison(t, dir)
	checkCompared(t, cmp, entries)
	// Each third-party store's findings checked once more by a minimal request sequence,
	// shown on the page.
	for i, s := range cmp.Stores {
		for _, p := range third {
			if p.name == s.Name {
				cmp.Stores[i].Checks = handChecks(t, p, cmp, i)
				for _, hc := range cmp.Stores[i].Checks {
					if hc.Judgement == reports.StoreProperty && strings.Contains(hc.Why, "not read as one") && cmp.Stores[i].Verdict == checker.Pass {
						// A property the certification missed: the column is not green.
						cmp.Stores[i].Verdict = checker.Fail
						cmp.Stores[i].Summary = "hand check: body and ETag are not read as one (see below); certify said: " + cmp.Stores[i].Summary
					}
					t.Logf("%s: %s: %s (%s)\n  %s", s.Name, hc.Finding, hc.Judgement, hc.Why, strings.Join(hc.Steps, "\n  "))
				}
			}
		}
	}
	// The catalogue on each store, from the same stores file: each card gets its verdict and
	// what a red cell means for that store.
	if os.Getenv("FENCEBENCH_COMPARE_CATALOGUE") != "0" {
		args := []string{"run", "--stores", file, "--out", dir, "--run-id", "catalogue"}
		if os.Getenv("FENCEBENCH_COMPARE_MATRIX") != "0" {
			args = append(args, "--matrix")
		}
		start := time.Now()
		code, rout, rerr := runCLI(args...)
		t.Logf("catalogue: exit %d in %v\nstdout:\n%s\nstderr:\n%s", code, time.Since(start).Round(time.Second), rout, rerr)
		stdout, stderr = stdout+rout, stderr+rerr
		cmp.AddCatalogue(readComparison(t, filepath.Join(dir, "catalogue")), "catalogue")
		checkCatalogue(t, cmp, other != nil)
	}
	if err := reports.WriteComparison(dir, cmp); err != nil {
		t.Fatal(err)
	}
	t.Logf("comparison: %s", filepath.Join(dir, "compare.html"))
	noSecrets(t, out, stdout+stderr, secrets...)
}

// checkCatalogue requires the catalogue's verdicts the stores are known for: every cell of the
// pinned MinIO passes, and the other MinIO release (when there is one) is not given a green
// catalogue. What the catalogue finds on the other stores is the comparison's to say; each
// card's meaning is logged.
func checkCatalogue(t *testing.T, cmp reports.Comparison, other bool) {
	t.Helper()
	for _, s := range cmp.Stores {
		c := s.Catalogue
		if c == nil {
			t.Errorf("%s: the catalogue gave no verdict", s.Name)
			continue
		}
		t.Logf("catalogue on %s: %s (%s): %s", s.Name, c.Verdict, c.Summary, c.Meaning)
		for _, r := range c.Red {
			t.Logf("  %s: %s %s", r.Row, r.Seen, firstLine(r.Witness))
		}
		switch {
		case s.Name == "pinned-minio" && (c.Verdict != checker.Pass || len(c.Red) > 0):
			t.Errorf("pinned-minio: the catalogue is %s with %d red cells, want every cell to pass", c.Verdict, len(c.Red))
		case s.Name == "other-minio" && other && c.Verdict == checker.Pass:
			t.Errorf("other-minio: the catalogue passed the release with a known bug")
		}
	}
}

// envOr is $name, or def when it is unset.
func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// checkCompared checks the comparison's stores against the entries of the stores file: each
// column names its server, the pinned MinIO is certified, the front is refused, and the other
// MinIO release fails the probe $FENCEBENCH_OTHER_MINIO_FAILS (when set).
func checkCompared(t *testing.T, cmp reports.Comparison, entries []storeEntry) {
	t.Helper()
	if len(cmp.Stores) != len(entries) {
		t.Fatalf("%d stores compared, want %d", len(cmp.Stores), len(entries))
	}
	for i, s := range cmp.Stores {
		t.Logf("%s (%s): exit %d: %s", s.Name, s.Server, s.ExitCode, s.Summary)
		if s.Server != entries[i].server {
			t.Errorf("%s: server %q, want %q from the stores file", s.Name, s.Server, entries[i].server)
		}
		switch {
		case s.Name == "pinned-minio" && s.ExitCode != outcome.ExitPass:
			t.Errorf("the pinned MinIO was not certified")
		case s.Name == "check-then-act-front" && s.ExitCode != outcome.ExitFail:
			t.Errorf("the check-then-act front was not refused")
		case s.Name == "other-minio" && os.Getenv("FENCEBENCH_OTHER_MINIO_FAILS") != "":
			probe := os.Getenv("FENCEBENCH_OTHER_MINIO_FAILS")
			if s.ExitCode != outcome.ExitFail || !failsProbe(cmp, i, probe) {
				t.Errorf("%s: exit %d, want %d with %s failed", s.Server, s.ExitCode, outcome.ExitFail, probe)
			}
		}
	}
	for _, r := range cmp.Rows {
		if r.Differs {
			var cells []string
			for _, c := range r.Cells {
				cells = append(cells, strings.TrimSpace(c.Label+" "+c.Detail))
			}
			t.Logf("differs: %-18s %s", r.ID, strings.Join(cells, " | "))
		}
	}
}

// failsProbe says whether store i failed probe id with some client.
func failsProbe(cmp reports.Comparison, i int, id string) bool {
	for _, r := range cmp.Rows {
		if strings.HasPrefix(r.ID, id+" (") && r.Cells[i].Verdict == checker.Fail {
			return true
		}
	}
	return false
}

// otherMinIO starts the MinIO release in $FENCEBENCH_OTHER_MINIO_BIN on one folder, or
// returns nil when it is unset.
func otherMinIO(t *testing.T) *compose.Local {
	t.Helper()
	bin := os.Getenv("FENCEBENCH_OTHER_MINIO_BIN")
	if bin == "" {
		t.Log("FENCEBENCH_OTHER_MINIO_BIN not set: no second MinIO release in the comparison")
		return nil
	}
	if os.Getenv("FENCEBENCH_OTHER_MINIO_SERVER") == "" {
		t.Fatal("FENCEBENCH_OTHER_MINIO_BIN is set without FENCEBENCH_OTHER_MINIO_SERVER, the release it is")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := compose.StartLocal(ctx, compose.LocalOptions{Binary: bin})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	return srv
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
