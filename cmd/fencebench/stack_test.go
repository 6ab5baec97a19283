package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/runner"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// isolateAWS points the AWS configuration at nothing, so a test sees only the variables it
// sets (no profile of the machine, no instance metadata lookup).
func isolateAWS(t *testing.T) {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(home, "no-config"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(home, "no-credentials"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	for _, k := range []string{"AWS_PROFILE", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION",
		"AWS_DEFAULT_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "FENCEBENCH_BUCKET"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
}

func TestRedactArgs(t *testing.T) {
	got := strings.Join(redactArgs([]string{"--stack", "external", "--secret-key", "s3cr3t-value", "-access-key=AKIAXX",
		"--bucket", "b", "--secret-key=x"}), " ")
	want := "--stack external --secret-key REDACTED -access-key=REDACTED --bucket b --secret-key=REDACTED"
	if got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	r := &redactor{}
	r.add("short")
	r.add("a-long-secret-value")
	var b bytes.Buffer
	_, _ = r.writer(&b).Write([]byte("x a-long-secret-value short y"))
	if b.String() != "x [REDACTED] short y" {
		t.Fatalf("redacted output %q", b.String())
	}
}

func TestStackFlagErrors(t *testing.T) {
	isolateAWS(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--stack", "moon", "steady-state"}, `--stack "moon"`},
		{[]string{"run", "--endpoint", "http://127.0.0.1:1", "steady-state"}, "--endpoint applies to --stack external only"},
		{[]string{"run", "--stack", "external", "steady-state"}, "needs --bucket"},
		{[]string{"run", "--stack", "external", "--bucket", "b", "--access-key", "AKIAEXAMPLE1", "steady-state"}, "go together"},
		{[]string{"run", "--stack", "external", "--bucket", "b", "--access-key", "AKIAEXAMPLE1", "--secret-key", "secret-in-url-test",
			"--endpoint", "https://AKIAEXAMPLE1:secret-in-url-test@127.0.0.1:1", "steady-state"}, "carries credentials"},
		{[]string{"run", "--stack", "external", "--bucket", "b", "--access-key", "AKIAEXAMPLE1", "--secret-key", "secret-in-url-test",
			"--endpoint", "https://127.0.0.1:1", "--addressing", "sideways", "steady-state"}, "--addressing"},
	} {
		code, stdout, stderr := runCLI(tc.args...)
		if code != outcome.ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, outcome.ExitBadInput, tc.want)
		}
		if strings.Contains(stdout+stderr, "secret-in-url-test") {
			t.Errorf("fencebench %s printed the secret: %s%s", strings.Join(tc.args, " "), stdout, stderr)
		}
	}
}

// TestExternalTLSStore runs the bench with --stack external against a MinIO that serves
// HTTPS with a self-signed certificate, as a foreign store would, whose bucket already holds
// someone else's objects. Each writer's requests cross its fault path (TLS terminated with
// a run-local CA, re-originated to the store), a lost response, a re-signed request without
// its conditions and a re-signed partial delete among them. The run passes; the foreign
// objects are byte-for-byte untouched; the run prefix is empty afterwards; and the secret
// key appears in no file the run wrote and nowhere in its output.
func TestExternalTLSStore(t *testing.T) {
	if testing.Short() {
		t.Skip("starts MinIO and runs three scenarios")
	}
	isolateAWS(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	certs := t.TempDir()
	if err := compose.WriteSelfSignedCert(certs, "127.0.0.1", "localhost"); err != nil {
		t.Fatal(err)
	}
	srv, err := compose.StartLocal(ctx, compose.LocalOptions{CertsDir: certs})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if !strings.HasPrefix(srv.Endpoint, "https://") {
		t.Fatalf("MinIO does not serve HTTPS: %s", srv.Endpoint)
	}
	owner, err := s3store.New(store.ClientMinio, srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	theirs := map[string][]byte{}
	etags := map[string]string{}
	for _, k := range []string{"theirs/data.bin", "fencebench/an-earlier-run/fence", "fencebench/tls-runX/keep", "top-level"} {
		b := make([]byte, 4096)
		_, _ = rand.Read(b)
		if theirs[k] = b; true {
			if etags[k], err = owner.Put(ctx, k, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := t.TempDir()
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", "us-east-1")
	code, stdout, stderr := runCLI("run", "-v", "--stack", "external", "--endpoint", srv.Endpoint, "--bucket", srv.Bucket,
		"--ca-file", filepath.Join(certs, "public.crt"), "--out", out, "--run-id", "tls-run", "--seed", "3",
		"lost-cas-response", "lying-store", "partial-sweep")
	if code != outcome.ExitPass || !strings.Contains(stdout, "3 cells: 3 pass") {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	sum, err := runner.LoadRun(filepath.Join(out, "tls-run"))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Store.Stack != "external" || sum.Store.Endpoint != srv.Endpoint || sum.Prefix != "fencebench/tls-run/" {
		t.Fatalf("recorded store %+v prefix %s", sum.Store, sum.Prefix)
	}
	for _, c := range sum.Cells {
		if len(c.Ledger) == 0 {
			t.Fatalf("%s: empty ledger: the fault proxy saw no request", c.ID)
		}
	}
	// Refused: a prefix holding someone else's objects. Credentials on the command line
	// this time (recorded redacted).
	t.Setenv("AWS_ACCESS_KEY_ID", "")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "")
	code2, stdout2, stderr2 := runCLI("run", "--stack", "external", "--endpoint", srv.Endpoint, "--bucket", srv.Bucket,
		"--access-key", srv.AccessKey, "--secret-key", srv.SecretKey, "--client", "aws-sdk",
		"--ca-file", filepath.Join(certs, "public.crt"), "--out", out, "--run-id", "busy", "--prefix", "theirs/", "steady-state")
	if code2 != outcome.ExitHarness || !strings.Contains(stderr2, "refusing to run") {
		t.Fatalf("a busy prefix: exit %d\n%s%s", code2, stdout2, stderr2)
	}
	// The aws-sdk client over the TLS paths, credentials from the flags.
	code3, stdout3, stderr3 := runCLI("run", "--stack", "external", "--endpoint", srv.Endpoint, "--bucket", srv.Bucket,
		"--access-key", srv.AccessKey, "--secret-key", srv.SecretKey, "--client", "aws-sdk",
		"--ca-file", filepath.Join(certs, "public.crt"), "--out", out, "--run-id", "tls-aws", "--seed", "4", "lost-cas-response")
	if code3 != outcome.ExitPass {
		t.Fatalf("aws-sdk over TLS: exit %d\n%s%s", code3, stdout3, stderr3)
	}
	if b, err := os.ReadFile(filepath.Join(out, "tls-aws", "run.json")); err != nil || !bytes.Contains(b, []byte("--secret-key REDACTED")) {
		t.Fatalf("run.json must record the command with the secret redacted: %v\n%s", err, b)
	}

	for k, want := range theirs {
		o, err := owner.Get(ctx, k)
		if err != nil || !bytes.Equal(o.Body, want) || o.ETag != etags[k] {
			t.Fatalf("%s changed: err %v, etag %s (was %s), %d bytes", k, err, o.ETag, etags[k], len(o.Body))
		}
	}
	for _, p := range []string{"fencebench/tls-run/", "fencebench/tls-aws/"} {
		if left, err := owner.List(ctx, p); err != nil || len(left) != 0 {
			t.Fatalf("the run prefix %s holds %d objects after the run (err %v)", p, len(left), err)
		}
	}
	all, err := owner.List(ctx, "")
	if err != nil || len(all) != len(theirs) {
		t.Fatalf("the bucket holds %d objects, want only the %d foreign ones (err %v): %v", len(all), len(theirs), err, all)
	}

	secret := []byte(srv.SecretKey)
	output := stdout + stderr + stdout2 + stderr2 + stdout3 + stderr3
	if bytes.Contains([]byte(output), secret) || strings.Contains(output, redacted) || strings.Contains(output, "credential occurrences") {
		t.Fatalf("the secret (or a redaction of it) is in the output:\n%s", output)
	}
	files := 0
	err = filepath.WalkDir(out, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, secret) || bytes.Contains(b, []byte(redacted)) {
			t.Errorf("%s holds the secret key (or a redaction of it)", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 10 {
		t.Fatalf("only %d files under %s; the walk checked nothing", files, out)
	}
}

// TestExternalProfileCredentials: with --profile the credentials and region come from the
// shared files, not from the environment's keys; nothing is contacted to resolve them.
func TestExternalProfileCredentials(t *testing.T) {
	isolateAWS(t)
	home := os.Getenv("HOME")
	creds := filepath.Join(home, "credentials")
	conf := filepath.Join(home, "config")
	if err := os.WriteFile(creds, []byte("[bench]\naws_access_key_id = AKIAPROFILEKEY\naws_secret_access_key = profile-secret-value\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[profile bench]\nregion = eu-west-3\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", creds)
	t.Setenv("AWS_CONFIG_FILE", conf)
	t.Setenv("AWS_ACCESS_KEY_ID", "AKIAENVIRONMENT")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "environment-secret")
	r := &redactor{}
	o, err := openStack(context.Background(), env.Options{Stack: "external", Bucket: "b", Profile: "bench", Addressing: "auto",
		Secret: r.add}, "rid", t.TempDir(), slogDiscard())
	if err != nil {
		t.Fatal(err)
	}
	cfg := o.Env.Config()
	if cfg.AccessKey != "AKIAPROFILEKEY" || cfg.SecretKey != "profile-secret-value" || cfg.Region != "eu-west-3" {
		t.Fatalf("credentials %s / region %s, want the profile's", cfg.AccessKey, cfg.Region)
	}
	if cfg.Endpoint != "https://s3.eu-west-3.amazonaws.com" || cfg.PathStyle || o.Prefix != "fencebench/rid/" || !o.Cleanup {
		t.Fatalf("endpoint %s path-style %v prefix %s cleanup %v", cfg.Endpoint, cfg.PathStyle, o.Prefix, o.Cleanup)
	}
	if got, _ := r.scrub([]byte("x profile-secret-value y")); string(got) != "x [REDACTED] y" {
		t.Fatalf("the redactor does not know the profile's secret: %q", got)
	}
}

func slogDiscard() *slog.Logger { return slog.New(slog.DiscardHandler) }
