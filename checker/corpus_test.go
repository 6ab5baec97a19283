package checker

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencebench/fencebench/history"
)

var update = flag.Bool("update", false, "rewrite testdata/*/want.json from the current checker")

// TestCorpus re-judges every recorded run under testdata/<case>/ (history.jsonl,
// ledger.jsonl, final.json, expect.json) and compares the result with want.json. After a
// deliberate change to the checker, run `go test ./checker -run TestCorpus -update` and review
// the diff of want.json.
func TestCorpus(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "*", "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no corpus under testdata/")
	}
	for _, hp := range dirs {
		dir := filepath.Dir(hp)
		t.Run(filepath.Base(dir), func(t *testing.T) {
			in := loadCase(t, dir)
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			if err := enc.Encode(Check(in)); err != nil {
				t.Fatal(err)
			}
			got := buf.Bytes()
			wantPath := filepath.Join(dir, "want.json")
			if *update {
				if err := os.WriteFile(wantPath, got, 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("result differs from %s (run with -update after reviewing):\n got: %s", wantPath, got)
			}
		})
	}
}

func loadCase(t *testing.T, dir string) Input {
	t.Helper()
	var in Input
	f, err := os.Open(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if in.Events, err = history.Decode(f); err != nil {
		t.Fatal(err)
	}
	if lf, err := os.Open(filepath.Join(dir, "ledger.jsonl")); err == nil {
		defer lf.Close()
		if in.Ledger, err = history.DecodeLedger(lf); err != nil {
			t.Fatal(err)
		}
	}
	for name, v := range map[string]any{"final.json": &in.Final, "expect.json": &in.Expect} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	return in
}
