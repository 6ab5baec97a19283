package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
)

// writeStoresFile writes a stores file of (name, endpoint, bucket) entries whose credentials
// are in $<KEY>_KEY and $<KEY>_SECRET.
func writeStoresFile(t *testing.T, entries ...[4]string) string {
	t.Helper()
	var es []storeEntry
	for _, e := range entries {
		es = append(es, storeEntry{name: e[0], endpoint: e[1], bucket: e[2], env: e[3]})
	}
	return writeStores(t, es...)
}

// storeEntry is one store of a stores file; env is the prefix of the variables holding its
// credentials (<env>_KEY, <env>_SECRET), server is left out when empty.
type storeEntry struct{ name, server, endpoint, bucket, env string }

// writeStores writes a stores file of entries.
func writeStores(t *testing.T, entries ...storeEntry) string {
	t.Helper()
	var b strings.Builder
	for _, e := range entries {
		b.WriteString("- name: " + e.name + "\n")
		if e.server != "" {
			b.WriteString("  server: " + strconv.Quote(e.server) + "\n")
		}
		b.WriteString("  endpoint: " + e.endpoint + "\n  bucket: " + e.bucket +
			"\n  access_key_env: " + e.env + "_KEY\n  secret_key_env: " + e.env + "_SECRET\n")
	}
	p := filepath.Join(t.TempDir(), "stores.yaml")
	if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestRunStores runs a scenario on the pinned MinIO and on a check-then-act front from one
// stores file: the MinIO cell passes, the front's is refused as "store unsafe" by the
// pre-flight, the row differs, each cell links to its page, and the exit code is 1.
func TestRunStores(t *testing.T) {
	pinned, other := externalMinIO(t), externalMinIO(t)
	cta, _ := unsafestore.Serve(t, other.Config(), &unsafestore.Options{Mode: unsafestore.CheckThenAct, Gap: 5 * time.Millisecond})
	t.Setenv("A_KEY", pinned.AccessKey)
	t.Setenv("A_SECRET", pinned.SecretKey)
	t.Setenv("B_KEY", other.AccessKey)
	t.Setenv("B_SECRET", other.SecretKey)
	file := writeStoresFile(t, [4]string{"minio", pinned.Endpoint, pinned.Bucket, "A"},
		[4]string{"cta", cta.Endpoint, other.Bucket, "B"})
	out := t.TempDir()
	code, stdout, stderr := runCLI("run", "--stores", file, "--out", out, "--run-id", "cmp", "--seed", "1", "steady-state")
	t.Logf("stdout:\n%s\nstderr:\n%.2000s", stdout, stderr)
	if code != outcome.ExitFail {
		t.Errorf("exit %d, want %d", code, outcome.ExitFail)
	}
	dir := filepath.Join(out, "cmp")
	cmp := readComparison(t, dir)
	if len(cmp.Rows) != 1 || cmp.Kind != "run" || len(cmp.Stores) != 2 {
		t.Fatalf("comparison %+v", cmp)
	}
	row := cmp.Rows[0]
	if !row.Differs || row.Cells[0].Label != "pass" || row.Cells[1].Label != "store unsafe" {
		t.Errorf("row %+v: want pass on MinIO, store unsafe on the front, marked as differing", row)
	}
	for i, c := range row.Cells {
		if _, err := os.Stat(filepath.Join(dir, c.Link)); err != nil {
			t.Errorf("%s: cell link %q: %v", cmp.Stores[i].Name, c.Link, err)
		}
	}
	noSecrets(t, out, stdout+stderr, pinned.SecretKey, other.SecretKey)
}

// TestStoresBadInput: a bad stores file, or a flag that describes a single store beside
// --stores, is bad input (254) before anything is opened or written.
func TestStoresBadInput(t *testing.T) {
	isolateAWS(t)
	good := writeStoresFile(t, [4]string{"a", "http://127.0.0.1:1", "b", "SET"})
	t.Setenv("SET_KEY", "key")
	t.Setenv("SET_SECRET", "secret-value-123")
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("- name: a\n  endpoint: http://h:1\n  bucket: b\n  secret_key: hunter2hunter2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"certify", "--stores", bad},
		{"run", "--stores", bad, "steady-state"},
		{"certify", "--stores", good, "--endpoint", "http://127.0.0.1:2"},
		{"run", "--stores", good, "--stack", "local", "steady-state"},
		{"certify", "--stores", filepath.Join(t.TempDir(), "missing.yaml")},
	} {
		out := t.TempDir()
		code, stdout, stderr := runCLI(append(args, "--out", out)...)
		if code != outcome.ExitBadInput {
			t.Errorf("%v: exit %d, want %d\n%s%s", args, code, outcome.ExitBadInput, stdout, stderr)
		}
		if strings.Contains(stdout+stderr, "hunter2hunter2") {
			t.Errorf("%v: the output repeats a literal credential", args)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("%v: wrote %d entries into the results folder", args, len(entries))
		}
	}
	if _, stdout, stderr := runCLI("certify", "--stores", bad); !strings.Contains(stdout+stderr, bad+":4: secret_key") {
		t.Errorf("the error does not name file:line:\n%s%s", stdout, stderr)
	}
}
