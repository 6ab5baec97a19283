package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fencebench/fencebench/certify"
	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// A third-party store: an S3 server the bench did not write, started as a process on loopback
// over a fresh folder, with generated credentials passed by the environment (never on a
// command line). docs/stores.md#third-party-stores gives the same start-ups for a user.
type thirdParty struct {
	name, server     string // the stores file's name and server
	endpoint, bucket string
	access, secret   string
	log              string // the process's output
}

// config is the store's client configuration.
func (p thirdParty) config() store.Config {
	return store.Config{Endpoint: p.endpoint, Bucket: p.bucket, Region: "us-east-1", AccessKey: p.access, SecretKey: p.secret, PathStyle: true}
}

// freePort returns a port nothing listens on at the moment.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// freePorts returns n distinct free ports below 55535 (SeaweedFS puts a server's gRPC port
// 10000 above its HTTP port when none is given; every one is given here anyway).
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	seen := map[int]bool{}
	var out []int
	for len(out) < n {
		p := freePort(t)
		if !seen[p] && p < 55535 {
			seen[p] = true
			out = append(out, p)
		}
	}
	return out
}

// startProcess starts bin with args and extra environment in its own process group, its
// output into a log file, and kills the group when the test ends.
func startProcess(t *testing.T, bin, dir string, extraEnv []string, args ...string) string {
	t.Helper()
	logPath := filepath.Join(t.TempDir(), filepath.Base(bin)+".log")
	log, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), extraEnv...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		log.Close()
	})
	return logPath
}

// waitBucket waits until the store answers a signed LIST of its bucket, creating the bucket
// (once the server answers at all) when create is set.
func waitBucket(t *testing.T, p thirdParty, create bool, within time.Duration) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	s, err := s3store.New(store.ClientMinio, p.config())
	if err != nil {
		t.Fatal(err)
	}
	var last error
	for ctx.Err() == nil {
		c, cc := context.WithTimeout(ctx, 5*time.Second)
		_, last = s.List(c, "fencebench-ready-probe/")
		if last != nil && create && answered(p.endpoint) {
			last = compose.MakeBucket(c, p.config())
			if last == nil {
				_, last = s.List(c, "fencebench-ready-probe/")
			}
		}
		cc()
		if last == nil {
			return
		}
		time.Sleep(250 * time.Millisecond)
	}
	b, _ := os.ReadFile(p.log)
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	t.Fatalf("%s on %s did not serve bucket %s within %v (last: %v); its log ends:\n%s", p.name, p.endpoint, p.bucket, within, last, b)
}

// answered says whether anything answers HTTP at endpoint.
func answered(endpoint string) bool {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(endpoint + "/")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return true
}

// startSeaweedFS starts `weed mini` (master, volume server, filer and S3 gateway in one
// process) over a fresh folder, every port free and on loopback, the WebDAV, admin, Iceberg
// and Lance servers and telemetry off, its one admin identity from AWS_ACCESS_KEY_ID and
// AWS_SECRET_ACCESS_KEY, and creates the bucket.
func startSeaweedFS(t *testing.T, bin, version, bucket string) thirdParty {
	t.Helper()
	dir := t.TempDir()
	ports := freePorts(t, 8)
	p := thirdParty{name: "seaweedfs", server: "SeaweedFS " + version + " (weed mini)", bucket: bucket,
		endpoint: fmt.Sprintf("http://127.0.0.1:%d", ports[6]), access: "swfs" + randomHex(t, 6), secret: randomHex(t, 20)}
	args := []string{"mini", "-dir=" + dir, "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
		fmt.Sprintf("-master.port=%d", ports[0]), fmt.Sprintf("-master.port.grpc=%d", ports[1]),
		fmt.Sprintf("-volume.port=%d", ports[2]), fmt.Sprintf("-volume.port.grpc=%d", ports[3]),
		fmt.Sprintf("-filer.port=%d", ports[4]), fmt.Sprintf("-filer.port.grpc=%d", ports[5]),
		fmt.Sprintf("-s3.port=%d", ports[6]), fmt.Sprintf("-s3.port.grpc=%d", ports[7]),
		"-s3.port.iceberg=0", "-s3.port.lance=0", "-webdav=false", "-admin.ui=false", "-master.telemetry=false"}
	p.log = startProcess(t, bin, dir, []string{"AWS_ACCESS_KEY_ID=" + p.access, "AWS_SECRET_ACCESS_KEY=" + p.secret}, args...)
	waitBucket(t, p, true, 90*time.Second)
	return p
}

// startVersitygwPosix is startVersitygw as a third-party store named name.
func startVersitygwPosix(t *testing.T, bin, name, version, bucket string) thirdParty {
	t.Helper()
	gw := startVersitygw(t, bin, bucket)
	p := thirdParty{name: name, server: "versitygw " + version + ", posix backend", endpoint: gw.endpoint, bucket: bucket,
		access: gw.access, secret: gw.secret, log: os.DevNull}
	waitBucket(t, p, false, 30*time.Second)
	return p
}

// startRclone starts `rclone serve s3` over a fresh local folder holding the bucket, on a
// free loopback port, with generated credentials given by its environment variable
// RCLONE_AUTH_KEY (a list read as CSV, so the key,secret pair is quoted).
func startRclone(t *testing.T, bin, version, bucket string) thirdParty {
	t.Helper()
	root := t.TempDir()
	if err := os.Mkdir(filepath.Join(root, bucket), 0o755); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	p := thirdParty{name: "rclone", server: "rclone " + version + " (serve s3, local folder)", bucket: bucket,
		endpoint: fmt.Sprintf("http://127.0.0.1:%d", port), access: "rcl" + randomHex(t, 6), secret: randomHex(t, 20)}
	p.log = startProcess(t, bin, root, []string{"RCLONE_AUTH_KEY=\"" + p.access + "," + p.secret + "\"", "RCLONE_CONFIG=" + os.DevNull},
		"serve", "s3", "--addr", fmt.Sprintf("127.0.0.1:%d", port), root)
	waitBucket(t, p, false, 30*time.Second)
	return p
}

// binVersion is the first line bin prints for args, "" when it prints none.
func binVersion(bin string, args ...string) string {
	out, _ := exec.Command(bin, args...).CombinedOutput()
	line, _, _ := strings.Cut(string(bytes.TrimSpace(out)), "\n")
	return strings.TrimSpace(line)
}

// versitygwVersion is the versitygw release `make versitygw` builds (VERSITYGW_MODULE).
const versitygwVersion = "v1.8.0"

// storeBin is the binary of a third-party store: $envVar, else .cache/stores/<name> at the
// repository's root. Without it the test is skipped, unless FENCEBENCH_REQUIRE_STORES is set
// (as `make test` does), when it fails.
func storeBin(t *testing.T, envVar, name, target string) string {
	t.Helper()
	bin := os.Getenv(envVar)
	if bin == "" {
		bin, _ = filepath.Abs(filepath.Join("..", "..", ".cache", "stores", name))
	}
	if _, err := os.Stat(bin); err != nil {
		if os.Getenv("FENCEBENCH_REQUIRE_STORES") != "" {
			t.Fatalf("%s: no %s binary at %s, and FENCEBENCH_REQUIRE_STORES is set: `make %s` builds it", t.Name(), name, bin, target)
		}
		t.Skipf("no %s binary at %s ($%s): `make %s` builds it; set FENCEBENCH_REQUIRE_STORES=1 to fail instead", name, bin, envVar, target)
	}
	return bin
}

// TestThirdPartyStoreCertified starts versitygw's posix backend (a store the bench did not
// write, built into .cache/stores by `make versitygw`) on loopback and certifies it through
// the command line, one round with both clients over 10 keys, and holds its verdict: every
// probe judged (no error of any class, so nothing left inconclusive), the conditional headers
// and the races enforced (A1-A5, B9, B10 pass with both clients), no other failure but the
// one versitygw v1.8.0 is known for (B11, the CAS chain, not linearizable: a GET returns a
// body with the ETag of another version, now and then), which must carry its witness and
// make the verdict "not certified"; otherwise certified. No credential in the output.
func TestThirdPartyStoreCertified(t *testing.T) {
	bin := storeBin(t, "FENCEBENCH_VERSITYGW_BIN", "versitygw", "versitygw")
	isolateAWS(t)
	gw := startVersitygwPosix(t, bin, "versitygw-posix", versitygwVersion, "fencebench")
	t.Setenv("AWS_ACCESS_KEY_ID", gw.access)
	t.Setenv("AWS_SECRET_ACCESS_KEY", gw.secret)
	out := t.TempDir()
	start := time.Now()
	code, stdout, stderr := runCLI("certify", "--stack", "external", "--endpoint", gw.endpoint, "--bucket", gw.bucket,
		"--addressing", "path", "--rounds", "1", "--keys", "10", "--json", "--out", out)
	t.Logf("certify on %s: exit %d in %v\nstderr:\n%s", gw.server, code, time.Since(start).Round(time.Second), stderr)
	noSecrets(t, out, stdout+stderr, gw.secret)
	var rep certify.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("certify --json: %v\n%s", err, stdout)
	}
	hard := map[string]bool{"A1": true, "A2": true, "A3": true, "A4": true, "A5": true, "B9": true, "B10": true}
	seen := map[string]int{}
	torn := false
	for _, r := range rep.Results {
		switch {
		case r.Verdict == certify.Error:
			t.Errorf("%s/%s could not be judged: [%s] %s", r.ID, r.Client, r.ErrorClass, r.Cause)
		case hard[r.ID] && r.Verdict != certify.Pass:
			t.Errorf("%s/%s: %s, want pass: %s", r.ID, r.Client, r.Verdict, r.Observed)
		case r.Verdict == certify.Fail && r.ID == "B11":
			torn = true
			if r.Witness == nil {
				t.Errorf("B11/%s failed without a witness: %s", r.Client, r.Observed)
			} else {
				t.Logf("B11/%s failed, its witness (versitygw's known torn read):\n%s", r.Client, r.Witness.Text())
			}
		case r.Verdict == certify.Fail:
			t.Errorf("%s/%s failed: %s", r.ID, r.Client, r.Observed)
		}
		if hard[r.ID] {
			seen[r.ID]++
		}
	}
	for id := range hard {
		if seen[id] != 2 {
			t.Errorf("%s ran with %d clients, want 2", id, seen[id])
		}
	}
	want, wantCode := certify.Certified, outcome.ExitPass
	if torn {
		want, wantCode = certify.NotCertified, outcome.ExitFail
	}
	if rep.Verdict != want || code != wantCode {
		t.Errorf("versitygw %s: %s, exit %d; want %s, exit %d", versitygwVersion, rep.Verdict, code, want, wantCode)
	}
}
