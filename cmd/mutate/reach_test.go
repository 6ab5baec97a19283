package main

import (
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/internal/mutate"
)

func TestParseProfile(t *testing.T) {
	txt := `mode: set
example.com/tiny/lib/lib.go:6.22,7.20 1 1
example.com/tiny/lib/lib.go:7.20,9.3 1 0
example.com/tiny/lib/lib.go:10.2,10.12 1 1
example.com/other/x.go:1.1,2.2 1 1
`
	p, err := parseProfile(strings.NewReader(txt), "example.com/tiny")
	if err != nil {
		t.Fatal(err)
	}
	if len(p) != 1 || len(p["lib/lib.go"]) != 3 {
		t.Fatalf("profile %v, want lib/lib.go's three blocks alone", p)
	}
	for _, c := range []struct {
		file      string
		line, col int
		want      bool
	}{
		{"lib/lib.go", 6, 22, true},  // the start of a block that ran
		{"lib/lib.go", 7, 10, true},  // inside it
		{"lib/lib.go", 8, 3, false},  // inside the block that never ran
		{"lib/lib.go", 7, 20, true},  // the edge both blocks hold, one of which ran
		{"lib/lib.go", 30, 1, true},  // no block holds it: not measured, taken as run
		{"lib/other.go", 1, 1, true}, // a file the profile lacks
	} {
		pos := token.Position{Line: c.line, Column: c.col}
		if got := p.ran(c.file, pos); got != c.want {
			t.Errorf("%s:%d:%d ran %v, want %v", c.file, c.line, c.col, got, c.want)
		}
	}
	if _, err := parseProfile(strings.NewReader("mode: set\nnot a profile line\n"), "example.com/tiny"); err == nil ||
		!strings.Contains(err.Error(), "line 2") {
		t.Errorf("a bad line: %v, want an error naming line 2", err)
	}
}

// The anchor of a mutant is the statement that runs it: a condition's if (an else-if's own
// if), a case clause's switch.
func TestAnchors(t *testing.T) {
	mod := t.TempDir()
	src := `package lib

import "errors"

var errX = errors.New("x")

func F(n int, err error) int {
	if n == 1 {
		return 1
	} else if n > 2 {
		return 2
	}
	switch {
	case errors.Is(err, errX):
		return 3
	case err != nil:
		return 4
	}
	return 0
}
`
	if err := os.MkdirAll(filepath.Join(mod, "lib"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "lib", "lib.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ms, err := mutate.Packages(mod, []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	at, err := anchors(mod, ms)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{
		"8:flip-cmp":          {8, 2},  // if n == 1
		"10:flip-cmp":         {10, 9}, // the else-if's own if
		"14:negate-errors-is": {13, 2}, // a case expression: its switch
		"14:swap-case":        {13, 2},
		"16:drop-case":        {13, 2},
	}
	got := map[string][2]int{}
	for _, m := range ms {
		p := at[m.ID]
		got[strconv.Itoa(m.Line)+":"+string(m.Kind)] = [2]int{p.Line, p.Column}
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s anchored at %v, want %v (all: %v)", k, got[k], w, got)
		}
	}
}

// With --reach, a mutant whose statement the exploration never runs is not explored, and
// each mutant meets only the tests that run its statement; a statement no test runs gets
// no test run at all.
func TestReachChoosesWhatRuns(t *testing.T) {
	mod := tinyModule(t)
	lib := filepath.Join(mod, "lib", "lib.go")
	b, err := os.ReadFile(lib)
	if err != nil {
		t.Fatal(err)
	}
	extra := "\n// Unused is called by its test alone.\nfunc Unused(n int) int {\n\tif n == 5 {\n\t\treturn 1\n\t}\n\treturn 0\n}\n\n// Never is called by nobody.\nfunc Never(n int) int {\n\tif n == 6 {\n\t\treturn 1\n\t}\n\treturn 0\n}\n"
	if err := os.WriteFile(lib, append(b, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	test := "package lib\n\nimport \"testing\"\n\nfunc TestHundred(t *testing.T) {\n\tif Code(100) != 0 {\n\t\tt.Fatal(\"Code(100) is not 0\")\n\t}\n}\n\nfunc TestUnused(t *testing.T) {\n\tif Unused(5) != 1 {\n\t\tt.Fatal(\"Unused(5) is not 1\")\n\t}\n}\n"
	if err := os.WriteFile(filepath.Join(mod, "lib", "lib_test.go"), []byte(test), 0o644); err != nil {
		t.Fatal(err)
	}
	unused, never, hundred := mutantAt(t, mod, 30, mutate.FlipCmp), mutantAt(t, mod, 38, mutate.FlipCmp), mutantAt(t, mod, 10, mutate.FlipCmp)
	only := "^(" + strings.Join([]string{unused, never, hundred}, "|") + ")$"
	code, rep, txt := runTiny(t, mod, "--only", only, "--test", "go test -count=1 -vet=off", "--timeout", "60s", "--min", "0")
	if code != exitPass {
		t.Fatalf("exit %d, want %d", code, exitPass)
	}
	byID := map[string]jsonResult{}
	for _, m := range rep.Mutants {
		byID[m.ID] = m
	}
	type want struct {
		status     string
		unexplored bool
		tests      []string
		noTest     bool
	}
	for id, w := range map[string]want{
		unused:  {testKill, true, []string{"TestUnused"}, false},
		never:   {survived, true, nil, true},
		hundred: {testKill, false, []string{"TestHundred"}, false},
	} {
		m := byID[id]
		if m.Status != w.status || m.Unexplored != w.unexplored || !slices.Equal(m.Tests, w.tests) || m.NoTest != w.noTest {
			t.Errorf("%s: status %s, unexplored %v, tests %v, no test %v; want %+v", id, m.Status, m.Unexplored, m.Tests, m.NoTest, w)
		}
	}
	if !rep.Reach || rep.Unexplored != 2 || rep.NoTest != 1 {
		t.Errorf("reach %v, unexplored %d, no test %d; want true, 2 and 1", rep.Reach, rep.Unexplored, rep.NoTest)
	}
	if !strings.Contains(txt, "reach: neither the exploration nor any test runs this statement") {
		t.Errorf("mutate.txt does not say that nothing runs the survivor's statement:\n%s", txt)
	}

	// Without --reach every mutant is explored and meets every test: the same statuses.
	_, rep, _ = runTiny(t, mod, "--only", only, "--test", "go test -count=1 -vet=off", "--timeout", "60s", "--min", "0", "--reach=false")
	for _, m := range rep.Mutants {
		if m.Unexplored || m.Tests != nil || m.NoTest || m.Status != map[string]string{unused: testKill, never: survived, hundred: testKill}[m.ID] {
			t.Errorf("--reach=false: %s: %+v", m.ID, m)
		}
	}
}
