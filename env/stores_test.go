package env

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

func writeStores(t *testing.T, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "stores.yaml")
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLoadStores: a good file gives external options with the credentials of the variables
// it names, and a CA path relative to the file.
func TestLoadStores(t *testing.T) {
	p := writeStores(t, `
- name: minio-a
  server: MinIO RELEASE.2025-07-23T15-54-02Z
  endpoint: http://127.0.0.1:9000
  bucket: b1
  access_key_env: A_KEY
  secret_key_env: A_SECRET
- name: gw.2
  endpoint: https://gw.example:7070
  bucket: b2
  region: eu-west-1
  addressing: virtual
  ca_file: ca.pem
  create_bucket: true
  access_key_env: B_KEY
  secret_key_env: B_SECRET
`)
	vars := map[string]string{"A_KEY": "ak", "A_SECRET": "secret-a-123456", "B_KEY": "bk", "B_SECRET": "secret-b-123456"}
	got, err := LoadStores(p, func(k string) string { return vars[k] })
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "minio-a" || got[1].Name != "gw.2" || got[1].Line != 8 {
		t.Fatalf("got %+v", got)
	}
	a, b := got[0].Options, got[1].Options
	if a.Server != "MinIO RELEASE.2025-07-23T15-54-02Z" || b.Server != "" {
		t.Errorf("servers %q and %q, want the first named and the second left to the default", a.Server, b.Server)
	}
	if a.Stack != "external" || a.Endpoint != "http://127.0.0.1:9000" || a.Bucket != "b1" || a.AccessKey != "ak" || a.SecretKey != "secret-a-123456" {
		t.Errorf("first store: %+v", a)
	}
	if b.Region != "eu-west-1" || b.Addressing != "virtual" || !b.CreateBucket || b.CAFile != filepath.Join(filepath.Dir(p), "ca.pem") || b.SecretKey != "secret-b-123456" {
		t.Errorf("second store: %+v", b)
	}
}

// TestLoadStoresErrors: every problem is reported at once with file:line, as bad input, and
// no message repeats a value that could be a credential.
func TestLoadStoresErrors(t *testing.T) {
	const pasted = "wJalrXUtnFEMIK7MDENGbPxRfiCYzzzz"
	p := writeStores(t, `
- name: a
  endpoint: http://h:1
  bucket: b
  secret_key: `+pasted+`
  access_key_env: K
  secret_key_env: `+pasted+`
- name: A
  endpoint: http://h:1
  bucket: b
  access_key_env: K
  secret_key_env: UNSET_VAR
  addressing: sideways
  colour: blue
- endpoint: http://h:1
  name: ../x
  access_key_env: K
  secret_key_env: S
- name: c
  server: "two\nlines"
  endpoint: http://h:1
  bucket: b
  access_key_env: K
  secret_key_env: S
`)
	_, err := LoadStores(p, func(k string) string { return map[string]string{"K": "key", "S": "secret-123456"}[k] })
	if !errors.Is(err, outcome.ErrBadInput) {
		t.Fatalf("err %v, want bad input", err)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{
		p + ":5: secret_key: literal credentials are refused",
		p + ":7: secret_key_env: the environment variable it names is not set",
		p + ":12: secret_key_env: the environment variable it names is not set",
		p + ":13: addressing \"sideways\"",
		p + ":14: unknown field \"colour\"",
		p + ":15: bucket: missing",
		p + ":16: name \"../x\"",
		p + ":20: server: want one line",
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("error lacks %q", want)
		}
	}
	if strings.Contains(msg, pasted) {
		t.Errorf("the error repeats a pasted credential")
	}
	for _, bad := range []string{"", "name: x\n", "- just a string\n", "- name: a\n  endpoint: [\n"} {
		if _, err := LoadStores(writeStores(t, bad), os.Getenv); !errors.Is(err, outcome.ErrBadInput) {
			t.Errorf("%q: err %v, want bad input", bad, err)
		}
	}
	if _, err := LoadStores(filepath.Join(t.TempDir(), "none.yaml"), os.Getenv); !errors.Is(err, outcome.ErrBadInput) {
		t.Errorf("missing file: err %v, want bad input", err)
	}
}
