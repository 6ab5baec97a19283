package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/certify"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// TestCertifyExternal certifies a MinIO through --stack external with the credentials in the
// environment: exit 0, the verdict printed, the report files written, the prefix cleaned up,
// and the secret nowhere in the output or the files.
func TestCertifyExternal(t *testing.T) {
	srv := externalMinIO(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out := t.TempDir()
	code, stdout, stderr := runCLI("certify", "--stack", "external", "--endpoint", srv.Endpoint, "--bucket", srv.Bucket,
		"--keys", "2", "--out", out)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if code != outcome.ExitPass {
		t.Fatalf("exit %d, want %d", code, outcome.ExitPass)
	}
	for _, want := range []string{"verdict: CERTIFIED", "cleanup: deleted the", "minio-go", "aws-sdk", "B11", "F24", "certify.html"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("stdout lacks %q", want)
		}
	}
	for _, secret := range []string{srv.SecretKey, srv.AccessKey} {
		if strings.Contains(stdout+stderr, secret) {
			t.Fatalf("the output holds a credential")
		}
	}
	files, _ := filepath.Glob(filepath.Join(out, "certify-*", "*"))
	if len(files) != 3 {
		t.Fatalf("report files %v, want certify.txt, certify.json and certify.html", files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(b), srv.SecretKey) || strings.Contains(string(b), srv.AccessKey) {
			t.Fatalf("%s holds a credential", f)
		}
		if strings.HasSuffix(f, ".json") {
			var rep certify.Report
			if err := json.Unmarshal(b, &rep); err != nil || rep.Verdict != certify.Certified || rep.Store.Stack != "external" {
				t.Fatalf("certify.json: %v, verdict %q, stack %q", err, rep.Verdict, rep.Store.Stack)
			}
		}
	}
	s, err := s3store.New(store.ClientMinio, srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	if es, err := s.List(ctx, "fencebench/"); err != nil || len(es) != 0 {
		t.Fatalf("after certify the bucket holds %d objects under fencebench/ (err %v)", len(es), err)
	}

	// --json, one client, two probes.
	code, stdout, stderr = runCLI("certify", "--stack", "external", "--endpoint", srv.Endpoint, "--bucket", srv.Bucket,
		"--client", "aws-sdk", "--probes", "A1,a5", "--json", "--out", out)
	if code != outcome.ExitPass {
		t.Fatalf("--json: exit %d\n%s", code, stderr)
	}
	var rep certify.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, stdout)
	}
	if len(rep.Results) != 2 || rep.Results[1].ID != "A5" || rep.Results[1].Facts["status"] != "404" {
		t.Fatalf("--json results %+v", rep.Results)
	}
	if strings.Contains(stdout+stderr, srv.SecretKey) {
		t.Fatalf("the --json output holds the secret")
	}
}

func TestCertifyExitCodes(t *testing.T) {
	isolateAWS(t)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"certify", "--client", "curl"}, outcome.ExitBadInput, `--client "curl"`},
		{[]string{"certify", "--keys", "0"}, outcome.ExitBadInput, "--keys 0"},
		{[]string{"certify", "--rounds", "0"}, outcome.ExitBadInput, `invalid value "0" for flag -rounds: want an integer from 1 to 100`},
		{[]string{"certify", "--rounds=101"}, outcome.ExitBadInput, `invalid value "101" for flag -rounds: want an integer from 1 to 100`},
		{[]string{"certify", "--rounds", "-3"}, outcome.ExitBadInput, `invalid value "-3" for flag -rounds: want an integer from 1 to 100`},
		{[]string{"certify", "--rounds", "two"}, outcome.ExitBadInput, `invalid value "two" for flag -rounds: want an integer from 1 to 100`},
		{[]string{"certify", "--probes", "A1,Z9"}, outcome.ExitBadInput, `unknown probe "Z9"`},
		{[]string{"certify", "--probe-timeout", "0"}, outcome.ExitBadInput, "--probe-timeout 0s, --timeout 0s: want positive durations"},
		{[]string{"certify", "--timeout", "-1s"}, outcome.ExitBadInput, "--timeout -1s: want positive durations"},
		{[]string{"certify", "--probe-timeout", "soon"}, outcome.ExitBadInput, `invalid value "soon" for flag -probe-timeout`},
		{[]string{"certify", "--no-such-flag"}, outcome.ExitBadInput, "no-such-flag"},
		{[]string{"certify", "extra"}, outcome.ExitBadInput, "unexpected arguments"},
		{[]string{"certify", "--stack", "moon"}, outcome.ExitBadInput, `--stack "moon"`},
		{[]string{"certify", "--endpoint", "http://127.0.0.1:1"}, outcome.ExitBadInput, "--endpoint applies to --stack external only"},
		{[]string{"certify", "--stack", "external"}, outcome.ExitBadInput, "needs --bucket"},
		{[]string{"certify", "--stack", "external", "--bucket", "b", "--access-key", "AKIAEXAMPLE1", "--secret-key", "certify-secret-value",
			"--endpoint", "http://127.0.0.1:1", "--out", t.TempDir()}, outcome.ExitHarness, "cannot create the claim marker"},
	} {
		code, stdout, stderr := runCLI(tc.args...)
		if code != tc.code || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, tc.code, tc.want)
		}
		if strings.Contains(stdout+stderr, "certify-secret-value") {
			t.Errorf("fencebench %s printed the secret", strings.Join(tc.args, " "))
		}
	}
}

// TestCertifyStalledStore: certify against a store that never answers a conditional write
// ends at --probe-timeout and --timeout with exit 255, every errored probe naming its class
// and cause on the terminal and on the page.
func TestCertifyStalledStore(t *testing.T) {
	srv := externalMinIO(t)
	cfg, _ := unsafestore.Serve(t, srv.Config(), &unsafestore.Options{Mode: unsafestore.Stall})
	out := t.TempDir()
	code, stdout, stderr := runCLI("certify", "--stack", "external", "--endpoint", cfg.Endpoint, "--bucket", srv.Bucket,
		"--client", "minio-go", "--probes", "A4,B9,B10,B11,D17", "--keys", "1", "--probe-timeout", "1s", "--timeout", "3s", "--out", out)
	t.Logf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
	if code != outcome.ExitHarness {
		t.Fatalf("exit %d, want %d", code, outcome.ExitHarness)
	}
	for _, want := range []string{"A4   HARD error", ": [overloaded] deadline 1s exceeded after PUT If-None-Match: *", "[not-run] not run: the whole-run deadline 3s"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("the progress lines lack %q", want)
		}
	}
	if !strings.Contains(stdout, "verdict: INCONCLUSIVE") || !strings.Contains(stdout, "first cause: A4 (minio-go) [overloaded] deadline 1s exceeded") {
		t.Errorf("stdout does not name the first cause")
	}
	pages, _ := filepath.Glob(filepath.Join(out, "certify-*", "certify.html"))
	if len(pages) != 1 {
		t.Fatalf("pages %v", pages)
	}
	b, err := os.ReadFile(pages[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"overloaded", "not-run", "deadline 1s exceeded after PUT If-None-Match: *"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("certify.html lacks %q", want)
		}
	}
}

// TestCertifyRounds: three rounds on the pinned MinIO certify it, with a failure rate of 0/3
// for every probe and client in the text, the JSON and the HTML report.
func TestCertifyRounds(t *testing.T) {
	srv := externalMinIO(t)
	out := t.TempDir()
	code, stdout, stderr := runCLI("certify", "--stack", "external", "--endpoint", srv.Endpoint, "--bucket", srv.Bucket,
		"--keys", "2", "--rounds", "3", "--out", out)
	t.Logf("stdout:\n%s", stdout)
	if code != outcome.ExitPass || !strings.Contains(stdout, "verdict: CERTIFIED") || !strings.Contains(stdout, "3 rounds, fresh keys each") {
		t.Fatalf("exit %d, want %d\n%s", code, outcome.ExitPass, stderr)
	}
	if !strings.Contains(stderr, "round 3/3 aws-sdk") {
		t.Errorf("the progress lines do not name the rounds:\n%s", stderr)
	}
	dir, _ := filepath.Glob(filepath.Join(out, "certify-*"))
	if len(dir) != 1 {
		t.Fatalf("report folders %v", dir)
	}
	b, err := os.ReadFile(filepath.Join(dir[0], "certify.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rep certify.Report
	if err := json.Unmarshal(b, &rep); err != nil || rep.Rounds != 3 || len(rep.Results) != len(certify.Probes())*2 {
		t.Fatalf("certify.json: %v, rounds %d, %d results", err, rep.Rounds, len(rep.Results))
	}
	page, err := os.ReadFile(filepath.Join(dir[0], "certify.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rep.Results {
		if r.Rounds != 3 || r.Failed != 0 || r.FailureRate != 0 || r.Rate() != "0/3" || len(r.PerRound) != 3 {
			t.Errorf("%s %s: rounds %d, failed %d, rate %v, %d per round", r.Client, r.ID, r.Rounds, r.Failed, r.FailureRate, len(r.PerRound))
		}
		if r.Class == certify.Hard && r.Flipped {
			t.Errorf("%s %s flipped on MinIO: %s", r.Client, r.ID, r.Variation)
		}
	}
	if n := strings.Count(stdout, " 0/3 "); n != len(rep.Results) {
		t.Errorf("the text shows 0/3 on %d rows, want %d", n, len(rep.Results))
	}
	if n := strings.Count(string(page), `<td class="num rate">0/3</td>`); n != len(rep.Results) {
		t.Errorf("the page shows 0/3 on %d rows, want %d", n, len(rep.Results))
	}
}
