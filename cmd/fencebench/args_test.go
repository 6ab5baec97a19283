package main

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/outcome"
)

// TestFlagsAnywhere: a flag after the scenario names is a flag, for every command that takes
// both; and whatever goes wrong, the secret key never appears in the output.
func TestFlagsAnywhere(t *testing.T) {
	isolateAWS(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "steady-state", "--secret-key", testSecret}, "--secret-key applies to --stack external only"},
		{[]string{"run", "--secret-key", testSecret, "steady-state"}, "--secret-key applies to --stack external only"},
		{[]string{"run", "steady-state", "--secret-key=" + testSecret, "--access-key", testKeyID}, "--access-key applies to --stack external only"},
		{[]string{"run", "steady-state", "--stack", "external", "--bucket", "b", "--secret-key", testSecret}, "go together"},
		{[]string{"run", "steady-state", "--seed", "3", "--variant", "no-such-variant"}, "unknown variant"},
		{[]string{"run", "steady-state", testSecret, "--secret-key"}, "flag needs an argument: -secret-key"},
		{[]string{"run", "steady-state", "--secret-key", testSecret, "--", "--seed"}, "--seed: no such file"},
		{[]string{"certify", "--client", "bogus", "--secret-key", testSecret}, `--client "bogus"`},
		{[]string{"certify", testSecret, "--secret-key", testSecret}, "1 unexpected arguments"},
		{[]string{"validate", "steady-state", "--secret-key", testSecret}, "flag provided but not defined: -secret-key"},
		{[]string{"report", dir, "--secret-key", testSecret}, "flag provided but not defined: -secret-key"},
	} {
		code, stdout, stderr := runCLI(tc.args...)
		if code != outcome.ExitBadInput || !strings.Contains(stderr, tc.want) {
			t.Errorf("fencebench %s: exit %d, stderr %q; want %d and %q", strings.Join(tc.args, " "), code, stderr, outcome.ExitBadInput, tc.want)
		}
		if strings.Contains(stdout+stderr, testSecret) {
			t.Errorf("fencebench %s printed the secret key:\n%s%s", strings.Join(tc.args, " "), stdout, stderr)
		}
	}
	// Flags after the names take effect.
	code, stdout, stderr := runCLI("validate", "steady-state", "lying-store")
	if code != outcome.ExitPass || !strings.Contains(stdout, "ok  steady-state") || !strings.Contains(stdout, "ok  lying-store") {
		t.Fatalf("validate two names: exit %d\n%s%s", code, stdout, stderr)
	}
}

func TestParseAnywhere(t *testing.T) {
	for _, tc := range []struct {
		args           []string
		pos            string
		prefix, seed   string
		verbose, wantE bool
	}{
		{[]string{"a", "--prefix", "p/", "b", "-v"}, "a b", "p/", "", true, false},
		{[]string{"--prefix", "--", "a"}, "a", "--", "", false, false},
		{[]string{"a", "--", "--seed", "3"}, "a --seed 3", "", "", false, false},
		{[]string{"-v", "--", "-v"}, "-v", "", "", true, false},
		{[]string{"a", "--seed=4", "b", "c"}, "a b c", "", "4", false, false},
		{[]string{"a", "--nope"}, "", "", "", false, true},
	} {
		fs := flag.NewFlagSet("t", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		prefix, seed, verbose := fs.String("prefix", "", ""), fs.String("seed", "", ""), fs.Bool("v", false, "")
		pos, err := parseAnywhere(fs, tc.args)
		if (err != nil) != tc.wantE || strings.Join(pos, " ") != tc.pos || *prefix != tc.prefix || *seed != tc.seed || *verbose != tc.verbose {
			t.Errorf("%q: positional %q prefix %q seed %q -v %v err %v", tc.args, pos, *prefix, *seed, *verbose, err)
		}
	}
}
