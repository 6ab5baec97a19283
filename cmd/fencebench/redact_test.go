package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
)

// A realistic key set: an AKIA key id, a 40-character secret key, an STS session token.
const (
	testKeyID   = "AKIAIOSFODNN7EXAMPLE"
	testSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	testSession = "FwoGZXIvYXdzEJr//////////wEaDGn3Kp8sSv+Zc0bNqyKoAR4sQ2oBaTnYH5m0Xf1vJw3pT9kL7uE2rD6cA8sZ1yWqN4hM3gV0bF5jK9xC2nR7tP1oU6iL8eY3wQ=="
)

// TestRedactorRealisticKeys: the secret key and the session token are redacted wherever they
// stand as whole tokens (JSON, key=value, a URL's user info); the key id is not a secret and
// stays; an ordinary word that merely contains a secret stays; a secret too short to mean
// anything is ignored.
func TestRedactorRealisticKeys(t *testing.T) {
	isolateAWS(t)
	t.Setenv("AWS_ACCESS_KEY_ID", testKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", testSecret)
	t.Setenv("AWS_SESSION_TOKEN", testSession)
	t.Setenv("AWS_REGION", "eu-west-1")
	r := &redactor{}
	o := env.Options{Stack: "external", Bucket: "fencebench", Addressing: "auto", Secret: r.add}
	if _, err := openStack(context.Background(), o, "rid", t.TempDir(), slogDiscard()); err != nil {
		t.Fatal(err)
	}
	in := `{"access_key":"` + testKeyID + `","secret":"` + testSecret + `"}` + "\n" +
		"AWS_SESSION_TOKEN=" + testSession + "\n" +
		"https://" + testKeyID + ":" + testSecret + "@s3.example.com/fencebench/rid/\n" +
		"not-a-secret: x" + testSecret + "y\n"
	want := `{"access_key":"` + testKeyID + `","secret":"[REDACTED]"}` + "\n" +
		"AWS_SESSION_TOKEN=[REDACTED]\n" +
		"https://" + testKeyID + ":[REDACTED]@s3.example.com/fencebench/rid/\n" +
		"not-a-secret: x" + testSecret + "y\n"
	got, n := r.scrub([]byte(in))
	if string(got) != want || n != 3 {
		t.Fatalf("scrubbed %d:\n%s\nwant 3:\n%s", n, got, want)
	}

	// The nightly stack's documented keys: key id "fencebench", secret "fencebench-nightly".
	nightly := &redactor{}
	nightly.add("fencebench-nightly")
	nightly.add("short") // too short to be a credential: ignored
	line := "fencebench run --bucket fencebench --prefix fencebench/nightly/ pw=fencebench-nightly fencebench-nightlyX short"
	got, n = nightly.scrub([]byte(line))
	if want := "fencebench run --bucket fencebench --prefix fencebench/nightly/ pw=[REDACTED] fencebench-nightlyX short"; string(got) != want || n != 1 {
		t.Fatalf("scrubbed %d: %s\nwant 1: %s", n, got, want)
	}
}

// TestRunLeavesOutFolderAlone points --out at a folder holding a user's go.mod and .env (the
// .env with the very credentials of the run). The run writes only into its own new folder:
// both files are byte-for-byte untouched, and a run id that would make --out itself the run
// folder is refused.
func TestRunLeavesOutFolderAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MinIO")
	}
	srv := externalMinIO(t)
	out := t.TempDir()
	user := map[string][]byte{
		"go.mod": []byte("module example.com/" + srv.AccessKey + "/fencebench-ci\n\ngo 1.24\n"),
		".env":   []byte("AWS_ACCESS_KEY_ID=" + srv.AccessKey + "\nAWS_SECRET_ACCESS_KEY=" + srv.SecretKey + "\n"),
	}
	for name, b := range user {
		if err := os.WriteFile(filepath.Join(out, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"run", "--stack", "external", "--endpoint", srv.Endpoint, "--bucket", srv.Bucket, "--out", out, "--seed", "2"}
	code, stdout, stderr := runCLI(append(args, "--run-id", "r1", "steady-state")...)
	if code != outcome.ExitPass {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, "r1", "run.json")); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{".", "r1"} {
		code, stdout, stderr = runCLI(append(args, "--run-id", id, "steady-state")...)
		if code != outcome.ExitBadInput || !strings.Contains(stderr, "already exists and is not empty") {
			t.Fatalf("--run-id %s: exit %d\n%s%s", id, code, stdout, stderr)
		}
	}
	for name, want := range user {
		got, err := os.ReadFile(filepath.Join(out, name))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("%s was changed (err %v):\n%s\nwas:\n%s", name, err, got, want)
		}
	}
}

// externalMinIO starts a MinIO for a test of --stack external, with its credentials in the
// environment (and nothing else of the machine's AWS configuration); it stops with the test.
func externalMinIO(t *testing.T) *compose.Local {
	t.Helper()
	isolateAWS(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	srv, err := compose.StartLocal(ctx, compose.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	return srv
}
