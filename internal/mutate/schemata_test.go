package mutate

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// The shapes of function a hand-off must pass its call on from: methods with a named, a blank
// and no receiver name, unnamed, blank and variadic parameters, a generic function, named
// results, no results, a one-line body, recursion and a closure.
const shapesLib = `package lib

import (
	"errors"
	"fmt"
)

var ErrOdd = errors.New("odd")

type T struct{ n int }

func (t *T) Bump(k int) int {
	if k > 2 {
		t.n += k
	}
	return t.n
}

func (*T) Unnamed(a, b int) bool { return a < b }

func (_ T) Blank(_ int, b int) bool {
	return b >= 3 && b != 7
}

func Sum(xs ...int) (total int) {
	for _, x := range xs {
		if x > 0 {
			total += x
		}
	}
	return
}

func Max[N int | float64](a, b N) N {
	if a > b {
		return a
	}
	return b
}

func Fact(n int) int {
	if n <= 1 {
		return 1
	}
	return n * Fact(n-1)
}

func Check(n int) error {
	err := fmt.Errorf("%d: %w", n, ErrOdd)
	if n%2 == 1 {
		return err
	}
	return nil
}

func Classify(err error) string {
	switch {
	case errors.Is(err, ErrOdd):
		return "odd"
	case err == nil:
		return "even"
	}
	return "other"
}

var log []string

func Note(s string) {
	f := func() {
		if s != "" {
			log = append(log, s)
		}
	}
	f()
}

func Log() []string { return log }

func Unnamed(int, string) bool { return false }
`

const shapesMain = `package main

import (
	"fmt"

	"example.com/shapes/lib"
)

func main() {
	t := &lib.T{}
	fmt.Println(t.Bump(3), t.Bump(1), t.Unnamed(1, 2), t.Unnamed(2, 2), lib.T{}.Blank(0, 3), lib.T{}.Blank(0, 7))
	fmt.Println(lib.Sum(1, -2, 3), lib.Max(2, 5), lib.Max(2.5, 1.5), lib.Fact(5))
	for n := range 3 {
		fmt.Println(lib.Classify(lib.Check(n)))
	}
	lib.Note("a")
	lib.Note("")
	fmt.Println(lib.Log(), lib.Unnamed(1, ""))
}
`

// goBuild builds the module in dir with an overlay into bin; ok false with the output when
// the build fails.
func goBuild(t *testing.T, dir, bin string, replace map[string]string) (string, bool) {
	t.Helper()
	ov, err := json.Marshal(map[string]map[string]string{"Replace": replace})
	if err != nil {
		t.Fatal(err)
	}
	ovPath := bin + ".overlay.json"
	if err := os.WriteFile(ovPath, ov, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-overlay", ovPath, "-gcflags", "./lib=-e", "-o", bin, ".")
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// runBin runs bin with mutant n selected and returns its output.
func runBin(t *testing.T, bin string, n int) string {
	t.Helper()
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), EnvVar+"="+strconv.Itoa(n))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return "exit: " + err.Error() + "\n" + string(out)
	}
	return string(out)
}

// One build of the schemata behaves, for every mutant selected, exactly as that mutant built
// alone, and as the unmutated code with none selected; a mutant that does not compile is
// named as the owner of its errors.
func TestSchemataBehaveAsEachMutantAlone(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module example.com/shapes\n\ngo 1.26\n", "main.go": shapesMain, "lib/lib.go": shapesLib} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ms, err := Packages(dir, []string{"lib"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 20 {
		t.Fatalf("%d mutants of the shapes, want at least 20", len(ms))
	}
	tmp := t.TempDir()
	base := filepath.Join(tmp, "base")
	if out, ok := goBuild(t, dir, base, map[string]string{}); !ok {
		t.Fatal(out)
	}
	unmutated := runBin(t, base, 0)

	// Each mutant alone: its output, or that it does not build.
	alone := map[string]string{}
	for i, m := range ms {
		src := filepath.Join(tmp, "m"+strconv.Itoa(i)+".go")
		if err := os.WriteFile(src, m.Source, 0o644); err != nil {
			t.Fatal(err)
		}
		bin := filepath.Join(tmp, "m"+strconv.Itoa(i))
		if _, ok := goBuild(t, dir, bin, map[string]string{filepath.Join(dir, "lib", "lib.go"): src}); ok {
			alone[m.ID] = runBin(t, bin, 0)
		}
	}

	live := ms
	var bin string
	var s *Schema
	for round := 0; ; round++ {
		if s, err = Schemata(dir, live); err != nil {
			t.Fatal(err)
		}
		replace := map[string]string{}
		for f, b := range s.Files {
			p := filepath.Join(tmp, "schema", strconv.Itoa(round), filepath.FromSlash(f))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			replace[filepath.Join(dir, filepath.FromSlash(f))] = p
		}
		bin = filepath.Join(tmp, "schema"+strconv.Itoa(round))
		out, ok := goBuild(t, dir, bin, replace)
		if ok {
			break
		}
		if round == 3 {
			t.Fatalf("the schemata still do not build:\n%s", out)
		}
		bad := map[string]bool{}
		prefix := filepath.Join(tmp, "schema", strconv.Itoa(round)) + string(filepath.Separator)
		for _, line := range strings.Split(out, "\n") {
			f, rest, ok := strings.Cut(line, ".go:")
			if !ok {
				continue
			}
			n, err := strconv.Atoi(strings.SplitN(rest, ":", 2)[0])
			if err != nil {
				continue
			}
			at := f + ".go"
			if !filepath.IsAbs(at) {
				at = filepath.Join(dir, at)
			}
			file, _ := strings.CutPrefix(filepath.Clean(at), prefix)
			id, owned := s.Owner(filepath.ToSlash(file), n)
			if !owned {
				t.Fatalf("a compile error outside every copy: %s\n%s", line, out)
			}
			if _, builds := alone[id]; builds {
				t.Errorf("%s builds alone but its copy does not: %s", id, line)
			}
			bad[id] = true
		}
		var next []Mutant
		for _, m := range live {
			if !bad[m.ID] {
				next = append(next, m)
			}
		}
		live = next
	}
	if got := runBin(t, bin, 0); got != unmutated {
		t.Errorf("no mutant selected:\n%s\nwant the unmutated output\n%s", got, unmutated)
	}
	differ := 0
	for _, m := range live {
		want, ok := alone[m.ID]
		if !ok {
			t.Errorf("%s does not build alone but its copy does", m.ID)
			continue
		}
		if got := runBin(t, bin, s.Number[m.ID]); got != want {
			t.Errorf("%s (%s -> %s) selected:\n%s\nwant what it prints alone\n%s", m.ID, m.Original, m.Mutated, got, want)
		}
		if want != unmutated {
			differ++
		}
	}
	if differ < len(live)/2 {
		t.Errorf("only %d of %d mutants change the output: the shapes test too little", differ, len(live))
	}
	t.Logf("%d mutants, %d in the schemata, %d of them change the output", len(ms), len(live), differ)
}
