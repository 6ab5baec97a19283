package mutate

import (
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// mutants returns the mutants of src (a file of package p) by "line:col:kind" with the
// mutated line.
func mutants(t *testing.T, src string) map[string]Mutant {
	t.Helper()
	ms, err := File("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]Mutant{}
	for _, m := range ms {
		out[strings.TrimPrefix(m.ID, "x.go:")] = m
	}
	return out
}

func TestKinds(t *testing.T) {
	cases := []struct {
		name string
		src  string // the body of func f(a, b int, m map[int]int) error
		want map[string]string
		not  []string // ids that must not be there
	}{
		{"flip ==", "if a == b {\n}", map[string]string{"4:7:flip-cmp": "if a != b {"}, nil},
		{"flip !=", "_ = a != b", map[string]string{"4:8:flip-cmp": "_ = a == b"}, nil},
		{"flip <", "_ = a < b", map[string]string{"4:8:flip-cmp": "_ = a <= b"}, nil},
		{"flip <=", "_ = a <= b", map[string]string{"4:8:flip-cmp": "_ = a < b"}, nil},
		{"flip >", "_ = a > b", map[string]string{"4:8:flip-cmp": "_ = a >= b"}, nil},
		{"flip >=", "_ = a >= b", map[string]string{"4:8:flip-cmp": "_ = a > b"}, nil},
		{"and to or", "_ = a > 0 && b > 0", map[string]string{"4:12:and-or": "_ = a > 0 || b > 0"}, nil},
		{"or to and", "_ = a > 0 || b > 0", map[string]string{"4:12:and-or": "_ = a > 0 && b > 0"}, nil},
		{"negate if", "if a > b {\n}", map[string]string{"4:5:negate-cond": "if !(a > b) {"}, nil},
		{"negate if drops a not", "if !ok(a) {\n}", map[string]string{"4:5:negate-cond": "if ok(a) {"}, nil},
		{"negate for", "for a < b {\na++\n}", map[string]string{"4:6:negate-cond": "for !(a < b) {"}, nil},
		{"negate errors.Is", "_ = errors.Is(errX, errX)",
			map[string]string{"4:6:negate-errors-is": "_ = !errors.Is(errX, errX)"}, nil},
		{"negate !errors.Is", "_ = !errors.Is(errX, errX)",
			map[string]string{"4:7:negate-errors-is": "_ = errors.Is(errX, errX)"}, nil},
		{"drop call", "kick(a)\ndelete(m, a)", map[string]string{"4:2:drop-call": "", "5:1:drop-call": ""}, nil},
		{"calls kept", "panic(a)\nrecordIt()\nlogf()\nemit()\nDebugf()\nInfo()\nwarnX()\ndefer kick(a)\ngo kick(a)",
			map[string]string{"10:1:drop-call": ""}, []string{"4:2:drop-call", "5:1:drop-call", "6:1:drop-call",
				"7:1:drop-call", "8:1:drop-call", "9:1:drop-call", "11:1:drop-call", "12:1:drop-call"}},
		{"return nil to err", "err := g()\nreturn nil", map[string]string{"5:8:return-err": "return err"}, nil},
		{"return err to nil", "err := g()\nreturn err", map[string]string{"5:8:return-nil": "return nil"}, nil},
		{"no err in scope", "if err := g(); err != nil {\n}\nreturn nil", nil, []string{"6:8:return-err"}},
		{"err declared later", "if a > 0 {\nreturn nil\n}\nerr := g()\nreturn err",
			map[string]string{"8:8:return-nil": "return nil"}, []string{"5:8:return-err"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := "package p\n\nfunc f(a, b int, m map[int]int) error {\n\t" + tc.src + "\n\treturn nil\n}\n"
			got := mutants(t, src)
			for id, line := range tc.want {
				m, ok := got[id]
				if !ok {
					t.Fatalf("no mutant %s in %v", id, slices.Sorted(maps.Keys(got)))
				}
				if m.Mutated != line {
					t.Errorf("%s: mutated line %q, want %q", id, m.Mutated, line)
				}
			}
			for _, id := range tc.not {
				if _, ok := got[id]; ok {
					t.Errorf("unexpected mutant %s", id)
				}
			}
		})
	}
}

const switchSrc = `package p

import "errors"

var errA, errB = errors.New("a"), errors.New("b")

func classify(err error) int {
	switch {
	case err == nil:
		return 0
	case errors.Is(err, errA):
		return 1
	default:
		return 2
	}
}

func states(n int) int {
	switch n {
	case 1:
		return 1
	default:
		return 2
	}
}

func tagged(err error) string {
	o := classify(err)
	switch o {
	case 0:
		kick()
	case 1:
	}
	return ""
}

func kick() {}
`

func TestSwitchOverErrors(t *testing.T) {
	got := mutants(t, switchSrc)
	for id, mutated := range map[string]string{
		"9:2:drop-case":  "case err == nil: (body dropped)",
		"9:2:swap-case":  "case err == nil: (body of `case errors.Is(err, errA):`)",
		"11:2:swap-case": "case errors.Is(err, errA): (body of `default:`)",
		"13:2:drop-case": "default: (body dropped)",
		"30:2:swap-case": "case 0: (body of `case 1:`)",
		"30:2:drop-case": "case 0: (body dropped)",
	} {
		m, ok := got[id]
		if !ok {
			t.Errorf("no mutant %s", id)
			continue
		}
		if m.Mutated != mutated {
			t.Errorf("%s: %q, want %q", id, m.Mutated, mutated)
		}
	}
	swap := got["9:2:swap-case"]
	if !strings.Contains(string(swap.Source), "case err == nil:\n\t\treturn 1\n\tcase errors.Is(err, errA):\n\t\treturn 0\n") {
		t.Errorf("swap-case did not swap the bodies:\n%s", swap.Source)
	}
	// A switch over a plain int is not over errors; an empty last case has nothing to drop.
	for _, id := range []string{"20:2:drop-case", "20:2:swap-case", "32:2:drop-case"} {
		if _, ok := got[id]; ok {
			t.Errorf("unexpected mutant %s", id)
		}
	}
}

func TestSkipAndDeterminism(t *testing.T) {
	src := "package p\n\n// g is left alone.\n//\n// mutate:skip\nfunc g(a int) bool { return a == 1 }\n\nfunc h(a int) bool { return a == 1 && a > 0 }\n"
	a, err := File("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range a {
		if m.Line == 6 {
			t.Errorf("mutant %s in a mutate:skip function", m.ID)
		}
		ids = append(ids, m.ID)
	}
	want := []string{"x.go:8:31:flip-cmp", "x.go:8:36:and-or", "x.go:8:41:flip-cmp"}
	if !slices.Equal(ids, want) {
		t.Errorf("ids %v, want %v", ids, want)
	}
	b, _ := File("x.go", []byte(src))
	for i := range a {
		if a[i].ID != b[i].ID || string(a[i].Source) != string(b[i].Source) {
			t.Fatalf("second enumeration differs at %d: %s vs %s", i, a[i].ID, b[i].ID)
		}
	}
}

// TestDistinct: an if whose condition is an errors.Is call yields one mutant for the two
// negations, and no mutant equals the original.
func TestDistinct(t *testing.T) {
	src := "package p\n\nimport \"errors\"\n\nvar e = errors.New(\"e\")\n\nfunc f(err error) bool {\n\tif errors.Is(err, e) {\n\t\treturn true\n\t}\n\treturn false\n}\n"
	ms, err := File("x.go", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{src: "original"}
	for _, m := range ms {
		if prev, ok := seen[string(m.Source)]; ok {
			t.Errorf("%s has the same source as %s", m.ID, prev)
		}
		seen[string(m.Source)] = m.ID
	}
	if len(ms) != 1 || ms[0].Kind != NegateCond {
		t.Errorf("got %d mutants (%v), want one negate-cond", len(ms), ms)
	}
}

// TestProjectPackages enumerates the real protocol packages: every mutant parses, IDs are
// unique and sorted by file then position, and every kind occurs.
func TestProjectPackages(t *testing.T) {
	ms, err := Packages(filepath.Join("..", ".."), []string{"fence", "writers"})
	if err != nil {
		t.Fatal(err)
	}
	ids, kinds := map[string]bool{}, map[Kind]bool{}
	for i, m := range ms {
		if ids[m.ID] {
			t.Errorf("duplicate id %s", m.ID)
		}
		ids[m.ID], kinds[m.Kind] = true, true
		if strings.HasSuffix(m.File, "_test.go") {
			t.Errorf("mutant of a test file: %s", m.ID)
		}
		if _, err := parser.ParseFile(token.NewFileSet(), m.File, m.Source, 0); err != nil {
			t.Errorf("%s does not parse: %v", m.ID, err)
		}
		if i > 0 && m.File == ms[i-1].File && (m.Line < ms[i-1].Line || m.Line == ms[i-1].Line && m.Col < ms[i-1].Col) {
			t.Errorf("%s after %s: not in order", m.ID, ms[i-1].ID)
		}
	}
	for _, k := range Kinds {
		if !kinds[k] {
			t.Errorf("no mutant of kind %s in fence and writers", k)
		}
	}
}

func TestPackagesSkipsTestsAndConstrainedFiles(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.go":      "package p\n\nfunc f(a int) bool { return a == 1 }\n",
		"a_test.go": "package p\n\nfunc g(a int) bool { return a == 1 }\n",
		"ign.go":    "//go:build ignore\n\npackage p\n\nfunc h(a int) bool { return a == 1 }\n",
	}
	for n, s := range files {
		if err := os.MkdirAll(filepath.Join(dir, "p"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "p", n), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := Packages(dir, []string{"p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != 1 || ms[0].ID != "p/a.go:3:31:flip-cmp" {
		t.Errorf("got %v, want the one mutant of p/a.go", ms)
	}
	if _, err := Packages(dir, []string{"missing"}); err == nil {
		t.Error("a missing package gave no error")
	}
}
