package main

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

func TestSplitWords(t *testing.T) {
	cases := map[string][]string{
		`./node --variant no-sweep`:         {"./node", "--variant", "no-sweep"},
		`python3 -u 'my adapter.py'  "a b"`: {"python3", "-u", "my adapter.py", "a b"},
		`sh -c 'exec ./n "$X"'`:             {"sh", "-c", `exec ./n "$X"`},
		`a\ b ''`:                           {"a b", ""},
	}
	for in, want := range cases {
		got, err := splitWords(in)
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("%s: got %q %v, want %q", in, got, err, want)
		}
	}
	if _, err := splitWords(`./node 'open`); err == nil {
		t.Error("an unterminated quote was accepted")
	}
}

func TestSystemWithStoresIsRefused(t *testing.T) {
	var out, errb strings.Builder
	code := runCmd(context.Background(), []string{"--system", "./node", "--stores", "stores.yaml", "steady-state"}, &out, &errb)
	if code != outcome.ExitBadInput || !strings.Contains(errb.String(), "--stores is not supported") {
		t.Fatalf("exit %d, stderr %q", code, errb.String())
	}
}
