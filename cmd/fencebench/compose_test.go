package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/outcome"
)

const composeFile = "../../compose/docker-compose.yml"

// composeCommand is `docker compose` or, failing that, `docker-compose`; nil when neither runs.
func composeCommand() []string {
	for _, c := range [][]string{{"docker", "compose"}, {"docker-compose"}} {
		if err := exec.Command(c[0], append(c[1:], "version")...).Run(); err == nil {
			return c
		}
	}
	return nil
}

func freeLoopbackPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// staticToxiproxy finds a static toxiproxy-server, building it into .cache/static (from the
// version go.mod pins) when there is none.
func staticToxiproxy(t *testing.T, ctx context.Context) string {
	t.Helper()
	if p, err := compose.FindStaticToxiproxy(); err == nil {
		return p
	}
	out, err := filepath.Abs("../../.cache/static/toxiproxy")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", out, "github.com/Shopify/toxiproxy/v2/cmd/server")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build toxiproxy-server: %v\n%s", err, b)
	}
	return out
}

func waitHTTP(ctx context.Context, url string) error {
	c := &http.Client{Timeout: time.Second}
	for {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// TestComposeStack validates compose/docker-compose.yml, brings the stack it describes up
// with the locally built FROM scratch images in place of the official ones, and runs
// steady-state against its MinIO with --stack external; the stack is always torn down.
func TestComposeStack(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a compose stack; skipped with -short")
	}
	dc := composeCommand()
	if dc == nil {
		testenv.NoDocker(t, "neither `docker compose` nor `docker-compose` runs here")
	}
	testenv.NeedDocker(t)
	// The toxiproxy-server build has a deadline of its own: on a loaded machine it can take
	// minutes, and it must not eat the stack's.
	bctx, bcancel := context.WithTimeout(context.Background(), 20*time.Minute)
	toxiproxyBin := staticToxiproxy(t, bctx)
	bcancel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	isolateAWS(t)

	// The file as shipped validates, with the official images as defaults.
	cfg, err := exec.CommandContext(ctx, dc[0], append(dc[1:], "-f", composeFile, "config")...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s config: %v\n%s", strings.Join(dc, " "), err, cfg)
	}
	for _, want := range []string{compose.OfficialMinIOImage, compose.OfficialToxiproxyImage, "toxiproxy.json"} {
		if !strings.Contains(string(cfg), want) {
			t.Fatalf("config lacks %s:\n%s", want, cfg)
		}
	}

	minioBin, err := compose.FindStaticMinIO()
	if err != nil {
		t.Fatal(err)
	}
	if err := compose.EnsureImage(ctx, compose.MinIOImageSpec(minioBin)); err != nil {
		t.Fatal(err)
	}
	if err := compose.EnsureImage(ctx, compose.ToxiproxyImageSpec(toxiproxyBin)); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	password := hex.EncodeToString(b)
	minioPort, apiPort, proxyPort := freeLoopbackPort(t), freeLoopbackPort(t), freeLoopbackPort(t)
	project := "fencebenchtest" + hex.EncodeToString(b[:4])
	env := append(os.Environ(), "MINIO_IMAGE="+compose.MinIOImage, "TOXIPROXY_IMAGE="+compose.ToxiproxyImage,
		"MINIO_ROOT_USER=nightly", "MINIO_ROOT_PASSWORD="+password, "MINIO_PORT="+minioPort,
		"TOXIPROXY_API_PORT="+apiPort, "TOXIPROXY_MINIO_PORT="+proxyPort)
	dcRun := func(ctx context.Context, args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, dc[0], append(dc[1:], append([]string{"-f", composeFile, "-p", project}, args...)...)...)
		cmd.Env = env
		return cmd.CombinedOutput()
	}
	if out, err := dcRun(ctx, "ps"); err != nil {
		testenv.NoDocker(t, "%s ps fails: %v\n%s", strings.Join(dc, " "), err, out)
	}
	defer func() {
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer dcancel()
		if out, err := dcRun(dctx, "down", "-v", "--remove-orphans"); err != nil {
			t.Errorf("compose down: %v\n%s", err, out)
		}
	}()
	if out, err := dcRun(ctx, "up", "-d"); err != nil {
		t.Fatalf("compose up: %v\n%s", err, out)
	}
	wctx, wcancel := context.WithTimeout(ctx, 90*time.Second)
	defer wcancel()
	for _, u := range []string{"http://127.0.0.1:" + minioPort + "/minio/health/ready",
		"http://127.0.0.1:" + apiPort + "/proxies/minio",
		"http://127.0.0.1:" + proxyPort + "/minio/health/ready"} {
		if err := waitHTTP(wctx, u); err != nil {
			logs, _ := dcRun(context.Background(), "logs")
			t.Fatalf("%s never answered 200: %v\n%s", u, err, logs)
		}
	}

	t.Setenv("AWS_ACCESS_KEY_ID", "nightly")
	t.Setenv("AWS_SECRET_ACCESS_KEY", password)
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--stack", "external", "--endpoint", "http://127.0.0.1:"+minioPort,
		"--bucket", "fencebench", "--create-bucket", "--out", out, "--run-id", "nightly", "--seed", "5", "steady-state")
	if code != outcome.ExitPass || !strings.Contains(stdout, "1 cells: 1 pass") {
		t.Fatalf("steady-state against the compose MinIO: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, password) {
		t.Fatal("the MinIO password is in the output")
	}
}
