package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/mutate"
)

// The tiny module: the main exits with lib.Code(len(os.Args)), or 1 when its first argument
// is "fail"; each line of lib.go that the tests mutate leads to one classification.
const (
	tinyMain = `package main

import (
	"os"

	"example.com/tiny/lib"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "fail" {
		os.Exit(1)
	}
	if lib.Check() != nil {
		os.Exit(3)
	}
	os.Exit(lib.Code(len(os.Args)))
}
`
	tinyLib = `package lib

const debug = false

// Code is the exit code of the main.
func Code(n int) int {
	if debug && n == 7 {
		return 1
	}
	if n > 100 {
		return 2
	}
	for n < 0 {
	}
	if n == 42 {
		return 255
	}
	return 0
}

// Check has nothing to fail.
func Check() error {
	err := 3
	_ = err
	return nil
}
`
)

// tinyModule writes the tiny module into a fresh folder and returns it.
func tinyModule(t *testing.T) string {
	t.Helper()
	return writeModule(t, tinyMain, tinyLib)
}

// writeModule writes the module example.com/tiny with main.go and lib/lib.go into a fresh
// folder and returns it.
func writeModule(t *testing.T, main, lib string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{"go.mod": "module example.com/tiny\n\ngo 1.26\n", "main.go": main, "lib/lib.go": lib}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// runTiny runs the command on the tiny module with the exploration "x y" (three arguments)
// and the extra flags, and returns its exit code, the report and the text report.
func runTiny(t *testing.T, mod string, extra ...string) (int, report, string) {
	t.Helper()
	out := t.TempDir()
	args := append([]string{"--module-dir", mod, "--pkgs", "lib", "--main", ".", "--explore", "x y",
		"--timeout", "3s", "--out", out, "--equivalent", filepath.Join(mod, "none.txt"),
		"--survivors", filepath.Join(mod, "none.txt")}, extra...)
	if err := os.WriteFile(filepath.Join(mod, "none.txt"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := run(context.Background(), args, &stdout, &stderr)
	t.Logf("exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	var rep report
	b, err := os.ReadFile(filepath.Join(out, "mutate.json"))
	if err != nil {
		return code, rep, ""
	}
	if err := json.Unmarshal(b, &rep); err != nil {
		t.Fatal(err)
	}
	txt, err := os.ReadFile(filepath.Join(out, "mutate.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return code, rep, string(txt)
}

// statusByLine maps "line:kind" to a mutant's status.
func statusByLine(rep report) map[string]string {
	out := map[string]string{}
	for _, m := range rep.Mutants {
		out[fmt.Sprintf("%d:%s", m.Line, m.Kind)] = m.Status
	}
	return out
}

// Every mutant is classified the same whether it is built alone or selected in the schemata
// (the compiled-away mutant is found equivalent by the survivor's build alone, the one that
// does not compile invalid by the schemata's build).
func TestClassification(t *testing.T) {
	for _, schemata := range []string{"true", "false"} {
		t.Run("schemata="+schemata, func(t *testing.T) { testClassification(t, schemata) })
	}
}

func testClassification(t *testing.T, schemata string) {
	mod := tinyModule(t)
	only := `^lib/lib.go:(7:\d+:(flip-cmp|negate-cond|and-or)|10:\d+:(flip-cmp|negate-cond)|13:\d+:negate-cond|15:\d+:negate-cond|25:\d+:return-err)$`
	code, rep, txt := runTiny(t, mod, "--only", only, "--jobs", "2", "--min", "0.9", "--schemata="+schemata)
	want := map[string]string{
		"7:flip-cmp":     equiv,     // inside `debug &&` with debug a false constant: compiled away
		"7:negate-cond":  killed,    // Code returns 1
		"7:and-or":       survived,  // debug || n == 7 is false for n = 3
		"10:flip-cmp":    survived,  // n >= 100 is false for n = 3
		"10:negate-cond": errStatus, // Code returns 2
		"13:negate-cond": timedOut,  // for !(n < 0) {} never ends
		"15:negate-cond": harness,   // Code returns 255, the bench's harness-error exit
		"25:return-err":  invalid,   // err is an int
	}
	got := statusByLine(rep)
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s: %q, want %q", k, got[k], w)
		}
	}
	for _, m := range rep.Mutants {
		if m.Status != equiv && m.Status != invalid && m.Seconds <= 0 {
			t.Errorf("%s: %v seconds, want the time it took", m.ID, m.Seconds)
		}
	}
	if len(got) != len(want) {
		t.Errorf("got %d mutants %v, want %d", len(got), got, len(want))
	}
	// (killed 1 + timeout 1 + harness 1) / (3 + survived 2) = 0.6, under 0.9.
	if rep.Score == nil || *rep.Score != 0.6 || code != exitFail {
		t.Errorf("score %v exit %d, want 0.6 and %d", ptrVal(rep.Score), code, exitFail)
	}
	for _, s := range []string{"lib/lib.go:10  lib/lib.go:10:", "  - if n > 100 {\n  + if n >= 100 {", "Killed by timeout", "Killed by the harness"} {
		if !strings.Contains(txt, s) {
			t.Errorf("mutate.txt lacks %q:\n%s", s, txt)
		}
	}
}

// mutantAt is the id of the tiny module's mutant of a kind on a line of lib.go.
func mutantAt(t *testing.T, mod string, line int, kind mutate.Kind) string {
	t.Helper()
	ms, err := mutate.Packages(mod, []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.Line == line && m.Kind == kind {
			return m.ID
		}
	}
	t.Fatalf("no %s mutant on line %d", kind, line)
	return ""
}

func TestPassingScoreAndJudgedEquivalent(t *testing.T) {
	mod := tinyModule(t)
	survivor := mutantAt(t, mod, 10, mutate.FlipCmp)
	eq := filepath.Join(mod, "eq.txt")
	if err := os.WriteFile(eq, []byte("# judged by hand\n"+survivor+"  # n is never near 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	only := `^lib/lib.go:(7:\d+:negate-cond|10:\d+:flip-cmp)$`
	code, rep, _ := runTiny(t, mod, "--only", only, "--equivalent", eq)
	if st := statusByLine(rep); st["10:flip-cmp"] != equiv || st["7:negate-cond"] != killed {
		t.Errorf("statuses %v, want the survivor judged equivalent and the negation killed", st)
	}
	if rep.Score == nil || *rep.Score != 1 || code != exitPass {
		t.Errorf("score %v exit %d, want 1 and %d", rep.Score, code, exitPass)
	}
	// Nothing scored: inconclusive.
	code, rep, _ = runTiny(t, mod, "--only", `^lib/lib.go:10:\d+:flip-cmp$`, "--equivalent", eq)
	if rep.Score != nil || code != exitNoScore {
		t.Errorf("score %v exit %d, want none and %d", rep.Score, code, exitNoScore)
	}
}

// A survivor a person examined still counts as survived; the report says why beside it, and
// "not examined yet" beside the others.
func TestExaminedSurvivorsStillCount(t *testing.T) {
	mod := tinyModule(t)
	sv := filepath.Join(mod, "survivors.txt")
	examined := mutantAt(t, mod, 10, mutate.FlipCmp)
	if err := os.WriteFile(sv, []byte(examined+"  # no run reaches n = 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	only := `^lib/lib.go:(7:\d+:(negate-cond|and-or)|10:\d+:flip-cmp)$`
	code, rep, txt := runTiny(t, mod, "--only", only, "--survivors", sv)
	if st := statusByLine(rep); st["10:flip-cmp"] != survived || st["7:and-or"] != survived || st["7:negate-cond"] != killed {
		t.Fatalf("statuses %v", st)
	}
	if rep.Score == nil || *rep.Score != 1.0/3 || code != exitFail {
		t.Errorf("score %v exit %d, want 1/3 and %d", ptrVal(rep.Score), code, exitFail)
	}
	for _, s := range []string{"Survivors (examined: 1)", "  why: no run reaches n = 100\n", "  why: not examined yet\n"} {
		if !strings.Contains(txt, s) {
			t.Errorf("mutate.txt lacks %q:\n%s", s, txt)
		}
	}
	if err := os.WriteFile(sv, []byte(examined+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runTiny(t, mod, "--only", only, "--survivors", sv); code != exitBadInput {
		t.Errorf("a survivor without why: exit %d, want %d", code, exitBadInput)
	}
}

// With --test, a survivor of the exploration meets the mutated package's tests: one they
// catch is killed-by-test and counts in the score but not in the exploration's own score; one
// they miss stays a survivor; unmutated tests that fail stop the run before any mutant.
func TestTestStage(t *testing.T) {
	mod := tinyModule(t)
	test := "package lib\n\nimport \"testing\"\n\nfunc TestHundred(t *testing.T) {\n\tif Code(100) != 0 {\n\t\tt.Fatal(\"Code(100) is not 0\")\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(mod, "lib", "lib_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	only := `^lib/lib.go:(7:\d+:(negate-cond|and-or)|10:\d+:flip-cmp)$`
	// The tests of each mutant compile the package again: a loaded machine needs more than
	// runTiny's 3 seconds for that, and a test run cut short counts as failed.
	code, rep, txt := runTiny(t, mod, "--only", only, "--test", "go test -count=1 -vet=off", "--timeout", "60s")
	want := map[string]string{
		"7:negate-cond": killed,   // the exploration catches it; the tests never run
		"7:and-or":      survived, // debug || n == 7: neither n = 3 nor n = 100 meets it
		"10:flip-cmp":   testKill, // n >= 100: Code(100) is 2
	}
	if got := statusByLine(rep); len(got) != len(want) || got["7:negate-cond"] != want["7:negate-cond"] ||
		got["7:and-or"] != want["7:and-or"] || got["10:flip-cmp"] != want["10:flip-cmp"] {
		t.Fatalf("statuses %v, want %v", got, want)
	}
	if rep.Score == nil || *rep.Score != 2.0/3 || rep.ExploreScore == nil || *rep.ExploreScore != 1.0/3 || code != exitFail {
		t.Errorf("score %v, exploration alone %v, exit %d; want 2/3, 1/3 and %d",
			ptrVal(rep.Score), ptrVal(rep.ExploreScore), code, exitFail)
	}
	for _, s := range []string{"Killed by test", "--- FAIL: TestHundred", "exploration alone 0.333"} {
		if !strings.Contains(txt, s) {
			t.Errorf("mutate.txt lacks %q:\n%s", s, txt)
		}
	}
	// Tests that fail on the unmutated package: no mutant can be judged by them.
	broken := strings.Replace(test, "Code(100) != 0", "Code(100) != 1", 1)
	if err := os.WriteFile(filepath.Join(mod, "lib", "lib_test.go"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, _ := runTiny(t, mod, "--only", only, "--test", "go test -count=1 -vet=off"); code != exitHarness {
		t.Errorf("failing unmutated tests: exit %d, want %d", code, exitHarness)
	}
}

func TestRefusals(t *testing.T) {
	mod := tinyModule(t)
	noWhy := filepath.Join(mod, "nowhy.txt")
	if err := os.WriteFile(noWhy, []byte("lib/lib.go:10:7:flip-cmp\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		flags []string
		want  int
	}{
		{"no jobs", []string{"--jobs", "0"}, exitBadInput},
		{"min above one", []string{"--min", "2"}, exitBadInput},
		{"bad regexp", []string{"--only", "("}, exitBadInput},
		{"missing package", []string{"--pkgs", "nope"}, exitBadInput},
		{"equivalence without why", []string{"--equivalent", noWhy}, exitBadInput},
		{"missing equivalence file", []string{"--equivalent", filepath.Join(mod, "absent.txt")}, exitBadInput},
		{"build fails", []string{"--build", "false"}, exitHarness},
		{"unmutated exploration fails", []string{"--explore", "fail"}, exitHarness},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, _ := runTiny(t, mod, append([]string{"--only", "^$"}, tc.flags...)...)
			if code != tc.want {
				t.Errorf("exit %d, want %d", code, tc.want)
			}
		})
	}
}

func TestSample(t *testing.T) {
	var ms []mutate.Mutant
	for i := range 20 {
		ms = append(ms, mutate.Mutant{ID: fmt.Sprint(i)})
	}
	a, b := sample(ms, 5, 7), sample(ms, 5, 7)
	if len(a) != 5 {
		t.Fatalf("sample of %d, want 5", len(a))
	}
	for i := range a {
		if a[i].ID != b[i].ID {
			t.Fatalf("two samples with one seed differ: %v %v", a, b)
		}
		if i > 0 && len(a[i].ID) == len(a[i-1].ID) && a[i].ID < a[i-1].ID {
			t.Errorf("sample out of order: %v", a)
		}
	}
	if got := sample(ms, 0, 7); len(got) != 20 {
		t.Errorf("--max 0 kept %d, want all 20", len(got))
	}
	if !regexp.MustCompile(`^\d+$`).MatchString(a[0].ID) {
		t.Errorf("unexpected id %q", a[0].ID)
	}
}

func ptrVal(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// An id in the equivalence or survivors file is stale only when no mutant of the whole set
// has it: one a sample (or --only) leaves out is not, and a stale one names its file.
func TestStaleIDs(t *testing.T) {
	mod := tinyModule(t)
	kept := mutantAt(t, mod, 10, mutate.FlipCmp)
	eq, sv := filepath.Join(mod, "eq.txt"), filepath.Join(mod, "sv.txt")
	if err := os.WriteFile(eq, []byte(kept+" # n is never near 100\nlib/lib.go:99:1:flip-cmp # moved\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(sv, []byte("lib/gone.go:3:4:drop-call # gone\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c := config{moduleDir: mod, pkgs: []string{"lib"}, only: regexp.MustCompile(`^lib/lib.go:7:`),
		equivalent: eq, equivSet: true, survivors: sv, survSet: true}
	ms, judged, examined, stale, err := load(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		if m.ID == kept {
			t.Fatalf("--only kept %s", kept)
		}
	}
	if len(judged) != 2 || len(examined) != 1 {
		t.Errorf("judged %v examined %v", judged, examined)
	}
	want := []string{eq + " names no mutant: lib/lib.go:99:1:flip-cmp", sv + " names no mutant: lib/gone.go:3:4:drop-call"}
	if !slices.Equal(stale, want) {
		t.Errorf("stale %q, want %q", stale, want)
	}
}

// A mutant's exploration is bounded by --explore-timeout, or by four times the unmutated
// exploration's time within [45s, --timeout]: a hang costs that, not a package's test budget.
func TestExploreTimeout(t *testing.T) {
	for _, tc := range []struct{ given, limit, base, want time.Duration }{
		{0, 3 * time.Minute, 4 * time.Second, 45 * time.Second},
		{0, 3 * time.Minute, 12 * time.Second, 48 * time.Second},
		{0, 3 * time.Minute, time.Minute, 3 * time.Minute},
		{0, 3 * time.Second, time.Millisecond, 3 * time.Second},
		{5 * time.Second, 3 * time.Minute, time.Minute, 5 * time.Second},
	} {
		if got := exploreTimeout(tc.given, tc.limit, tc.base); got != tc.want {
			t.Errorf("exploreTimeout(%s, %s, %s) = %s, want %s", tc.given, tc.limit, tc.base, got, tc.want)
		}
	}
	// The hang (for !(n < 0) {}) is cut at --explore-timeout, well before --timeout.
	// Had --timeout cut it, it would have run a minute.
	mod := tinyModule(t)
	_, rep, txt := runTiny(t, mod, "--only", `^lib/lib.go:13:\d+:negate-cond$`, "--timeout", "1m", "--explore-timeout", "2s")
	if st := statusByLine(rep); st["13:negate-cond"] != timedOut || len(rep.Mutants) != 1 || rep.Mutants[0].Seconds >= 60 {
		t.Fatalf("statuses %v (%+v), want the hang killed-by-timeout before --timeout", st, rep.Mutants)
	}
	if rep.ExploreTimeoutSeconds != 2 || !strings.Contains(txt, "timeout 2s a mutant, 1m0s a package's tests") {
		t.Errorf("explore timeout %v; mutate.txt:\n%s", rep.ExploreTimeoutSeconds, txt)
	}
}

// TestJudgedFilesNameKnownMutants: every id in the project's mutate-equivalent.txt and
// mutate-survivors.txt names a mutant of the code as it is: a judgement whose code moved (its
// line or column shifted) would otherwise silently stop applying, and its mutant would show as
// "not examined yet".
func TestJudgedFilesNameKnownMutants(t *testing.T) {
	c := config{moduleDir: "../..", pkgs: []string{"fence", "writers"}, only: regexp.MustCompile(""),
		equivalent: "../../mutate-equivalent.txt", equivSet: true, survivors: "../../mutate-survivors.txt", survSet: true}
	_, judged, examined, stale, err := load(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(judged) == 0 || len(examined) == 0 {
		t.Fatalf("read %d equivalent and %d examined mutants: the files were not read", len(judged), len(examined))
	}
	for _, s := range stale {
		t.Error(s)
	}
}

// The tiny module with broken variants: the main fails (exit 1) when lib.Fails says so for
// the variant --variant names (correct when none).
const (
	variantMain = `package main

import (
	"os"

	"example.com/tiny/lib"
)

func main() {
	v := lib.Correct
	for i := 1; i+1 < len(os.Args); i++ {
		if os.Args[i] == "--variant" {
			v = lib.Variant(os.Args[i+1])
		}
	}
	if lib.Fails(v, len(os.Args)) {
		os.Exit(1)
	}
}
`
	variantLib = `package lib

// Variant names a protocol variant.
type Variant string

const (
	Correct Variant = "correct"
	Broken  Variant = "broken"
	Quiet   Variant = "quiet"
)

// Fails reports whether the run of variant v with n arguments fails.
func Fails(v Variant, n int) bool {
	if v == Broken {
		if n > 0 {
			return true
		}
	}
	return v == Quiet && n < 0
}
`
)

// A mutant the correct protocol's exploration cannot tell apart meets the explorations of
// the broken variants named where it sits: killed-by-variant when one no longer fails, an
// exploration kill; a variant that does not fail unmutated judges nothing.
func TestVariantsStage(t *testing.T) {
	mod := writeModule(t, variantMain, variantLib)
	only := `^lib/lib.go:(14:\d+:negate-cond|15:\d+:(negate-cond|flip-cmp)|19:\d+:and-or)$`
	want := map[string]string{
		"14:negate-cond": killed,      // the correct protocol fails
		"15:negate-cond": variantKill, // broken no longer fails
		"15:flip-cmp":    survived,    // n >= 0: broken still fails
		"19:and-or":      survived,    // v == Quiet || n < 0: quiet names it, but quiet never failed
	}
	for _, schemata := range []string{"true", "false"} {
		t.Run("schemata="+schemata, func(t *testing.T) {
			code, rep, txt := runTiny(t, mod, "--only", only, "--variants", "lib/lib.go", "--schemata="+schemata, "--reach=false")
			got := statusByLine(rep)
			if len(got) != len(want) {
				t.Fatalf("statuses %v, want %v", got, want)
			}
			for k, w := range want {
				if got[k] != w {
					t.Errorf("%s: %q, want %q", k, got[k], w)
				}
			}
			for _, m := range rep.Mutants {
				if m.Line == 15 && !slices.Equal(m.Variants, []string{"broken"}) {
					t.Errorf("%s met the variants %v, want [broken]", m.ID, m.Variants)
				}
				if m.Line == 19 && len(m.Variants) != 0 {
					t.Errorf("%s met the variants %v, want none (quiet does not fail unmutated)", m.ID, m.Variants)
				}
			}
			// (killed 1 + by variant 1) / (2 + survived 2) = 0.5, exploration alone the same.
			if rep.Score == nil || *rep.Score != 0.5 || code != exitFail {
				t.Errorf("score %v exit %d, want 0.5 and %d", ptrVal(rep.Score), code, exitFail)
			}
			for _, s := range []string{"Killed by a variant", "the exploration of variant broken passes (unmutated, it fails)",
				"variants explored: broken (each still fails)"} {
				if !strings.Contains(txt, s) {
					t.Errorf("mutate.txt lacks %q:\n%s", s, txt)
				}
			}
		})
	}
	// Without --variants, the one the variant kills survives.
	_, rep, _ := runTiny(t, mod, "--only", only, "--reach=false")
	if got := statusByLine(rep)["15:negate-cond"]; got != survived {
		t.Errorf("without --variants: %q, want %q", got, survived)
	}
}

// The variants named where a mutant sits: its own statement (an if's condition only), the
// conditions of the ifs whose branch holds it, the case lists of the clauses that hold it.
func TestVariantsOf(t *testing.T) {
	src := `package p

func f(v Variant, n int) int {
	if v == A && n > 0 {
		n++
		if v != B {
			n--
		}
	}
	switch v {
	case C:
		n *= 2
	case D, E:
		n *= 3
	}
	x := v == F
	_ = x
	return n
}
`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	vs := &variantSet{byIdent: map[string]string{"A": "a", "B": "b", "C": "c", "D": "d", "E": "e", "F": "f"},
		files: map[string]*ast.File{}, fset: token.NewFileSet()}
	for _, c := range []struct {
		line, col int
		want      []string
	}{
		{4, 5, []string{"a"}},       // the if's condition
		{5, 3, []string{"a"}},       // inside its body
		{6, 6, []string{"a", "b"}},  // the inner if's condition, inside the outer's body
		{7, 4, []string{"a", "b"}},  // inside both
		{11, 2, []string{"c"}},      // a case clause (swapped or dropped)
		{12, 3, []string{"c"}},      // inside it
		{14, 3, []string{"d", "e"}}, // inside the other
		{16, 7, []string{"f"}},      // a plain statement naming one
		{18, 2, nil},                // nothing named
	} {
		got, err := vs.variantsOf(dir, mutate.Mutant{File: "p.go", Line: c.line, Col: c.col})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) == 0 && len(c.want) == 0 {
			continue
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%d:%d: %v, want %v", c.line, c.col, got, c.want)
		}
	}
}

func TestCompilerPathUndoesTheGoCommandsShortening(t *testing.T) {
	for _, c := range []struct{ at, want string }{
		{"/tmp/mutate-1/schema/src/fence/claim.go", "/tmp/mutate-1/schema/src/fence/claim.go"},
		{"./fence/claim.go", "/tmp/mut/fence/claim.go"},
		{"../mutate-1/schema/src/fence/claim.go", "/tmp/mutate-1/schema/src/fence/claim.go"},
		{"fence/claim.go", "/tmp/mut/fence/claim.go"},
		// The go command replaced the working directory /tmp/mut as a string prefix.
		{".ate-1/schema/src/fence/claim.go", "/tmp/mutate-1/schema/src/fence/claim.go"},
	} {
		if got := compilerPath("/tmp/mut", c.at); got != c.want {
			t.Errorf("compilerPath(/tmp/mut, %q) = %q, want %q", c.at, got, c.want)
		}
	}
}
