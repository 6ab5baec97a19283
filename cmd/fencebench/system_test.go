package main

import (
	"slices"
	"testing"
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
