package deps

import (
	"fmt"
	"go/parser"
	"go/token"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// vocabularies are the module's names spelled once. The YAML of scenario files and the JSON of
// stored runs spell them the same way, so a value never changes; a literal spelling one
// elsewhere is what TestNamesAreSpelledOnce refuses.
var vocabularies = []Vocabulary{
	{What: "writer signal (trigger event)", Dir: "history", Type: "SignalKind"},
	{What: "relocation abort point", Dir: "history", Type: "AbortPoint"},
	{What: "invariant", Dir: "history", Type: "Invariant"},
	{What: "protocol variant", Dir: "fence", Type: "Variant"},
}

// mirrors are the names spelled twice on purpose, each held equal to its name by
// TestMirrorsAreTheirNames: history.CorrectVariant is fence.Correct for the packages the
// boundary table keeps from importing fence (scenarios, outcome, reports).
var mirrors = []Mirror{{Dir: "history", Const: "CorrectVariant"}}

// homonyms are the other vocabularies whose constants may spell a word of these: the event
// kinds and outcomes of a history (history.CAS "cas", history.Fenced and history.FencedOut
// "fenced", history.RestoreRead "restore-read") and the states of a writer
// (writers.StateFenced, StateStoodDown, StateCrashed).
var homonyms = []TypeName{{Dir: "history", Type: "Kind"}, {Dir: "history", Type: "Outcome"}, {Dir: "writers", Type: "State"}}

// homograph is a string literal that spells a name but means another word, n times in one file.
type homograph struct {
	file, word string
	n          int
	why        string
}

// homographs are the literals that spell a name of a vocabulary and mean something else. Each
// is counted, so one more in the same file is found too, and one that went away must leave
// the list.
var homographs = []homograph{
	{"fence/errors.go", "fenced", 1, "the text of fence.ErrFenced"},
	{"checker/invariants.go", "claimed", 1, "a verb of the checker's narratives"},
	{"checker/fencing.go", "adopted", 1, "a verb of the checker's narratives"},
	{"checker/serving.go", "crashed", 1, "a verb of the checker's narratives"},
	{"scenarios/decode.go", "fenced", 2, "the key of a scenario's expect.fenced"},
	{"explore/coverage.go", "cas", 2, "the protocol phase of a fence CAS, named after the event kind history.CAS"},
	{"store/storetest/storetest.go", "cas", 1, "part of a test object's key"},
	{"certify/chain.go", "acked", 1, "the name of a certification fact"},
	{"runner/runner.go", "acked", 1, "a log attribute"},
}

// notTriggers are the signals a writer emits that no scenario step may wait for
// (scenarios.Events leaves them out).
var notTriggers = []string{"SigCAS", "SigCrashed", "SigPaused", "SigResumed"}

// moduleRoot is the module's directory, seen from this package's.
var moduleRoot = filepath.Join("..", "..")

// moduleSources parses every non-test Go file of the module, as the go command walks it
// (directories named testdata, or starting with . or _, left out).
func moduleSources(t *testing.T, fset *token.FileSet) []Source {
	t.Helper()
	var out []Source
	err := filepath.WalkDir(moduleRoot, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if p != moduleRoot && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(name, ".go") || strings.HasSuffix(name, "_test.go") {
			return nil
		}
		rel, err := filepath.Rel(moduleRoot, p)
		if err != nil {
			return err
		}
		f, err := parser.ParseFile(fset, filepath.ToSlash(rel), readFile(t, p), parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		out = append(out, Source{Path: filepath.ToSlash(rel), File: f})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func moduleNames(t *testing.T, fset *token.FileSet, srcs []Source) []Name {
	t.Helper()
	names, problems := Names(fset, srcs, vocabularies)
	for _, p := range problems {
		t.Error(p)
	}
	return names
}

// spelledTwice holds the literals to the homographs: what remains is a name spelled twice,
// then every homograph whose count no longer matches.
func spelledTwice(lits []Literal, hs []homograph) []string {
	var out []string
	counts := map[[2]string]int{}
	for _, l := range lits {
		k := [2]string{l.Path, l.Name.Value}
		i := slices.IndexFunc(hs, func(h homograph) bool { return h.file == k[0] && h.word == k[1] })
		if i < 0 {
			out = append(out, l.String())
			continue
		}
		counts[k]++
	}
	for _, h := range hs {
		if n := counts[[2]string{h.file, h.word}]; n != h.n {
			out = append(out, fmt.Sprintf("%s: %q spelled %d times, the homographs list %d (%s): a name spelled again there, "+
				"or a homograph gone (correct the list)", h.file, h.word, n, h.n, h.why))
		}
	}
	return out
}

// TestNamesAreSpelledOnce: no non-test file of the module spells an event, variant, invariant
// or abort point as a string literal but the constant that defines it; the homographs aside.
func TestNamesAreSpelledOnce(t *testing.T) {
	fset := token.NewFileSet()
	srcs := moduleSources(t, fset)
	names := moduleNames(t, fset, srcs)
	for _, v := range vocabularies {
		if !slices.ContainsFunc(names, func(n Name) bool { return n.Vocabulary == v }) {
			t.Errorf("no %s names found in %s", v.What, v.Dir)
		}
	}
	for _, p := range spelledTwice(Literals(fset, module, srcs, names, mirrors, homonyms), homographs) {
		t.Error(p)
	}
}

// The check has teeth: a small module whose files spell names again in every way the check
// must see, beside the spellings it must let be.
func TestLiteralsFindsSpellings(t *testing.T) {
	files := map[string]string{
		"history/names.go": `package history
type SignalKind string
type Kind string
const (
	SigClaimed SignalKind = "claimed"
	SigCAS     SignalKind = "cas"
	AbortNone  SignalKind = ""
)
const CAS Kind = "cas" // a homonym's own constant
const CorrectVariant = "correct" // a mirror
`,
		"fence/variant.go": `package fence
type Variant string
const (
	Correct Variant = "correct"
	NoSweep Variant = "no-sweep"
)
func (v Variant) Broken() bool { return v != "correct" } // line 7
`,
		"scenarios/scenario.go": `package scenarios
import (
	"fmt"
	h "example.com/m/history"
)
var Events = []string{"claimed", "promoted"} // line 6
const again h.SignalKind = "cas" // line 7: a second definition
const untyped = "no-sweep" // line 8
type local string
const mine local = "claimed" // line 10: a type of its own is no homonym
func f() { fmt.Println("claimed, not quite", "", h.SigClaimed, "cas") } // line 11
type tagged struct{ A string ` + "`json:\"claimed\"`" + ` }
`,
	}
	fset := token.NewFileSet()
	var srcs []Source
	for _, p := range slices.Sorted(maps.Keys(files)) {
		f, err := parser.ParseFile(fset, p, files[p], parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		srcs = append(srcs, Source{Path: p, File: f})
	}
	vocabs := []Vocabulary{{What: "signal", Dir: "history", Type: "SignalKind"}, {What: "variant", Dir: "fence", Type: "Variant"}}
	names, problems := Names(fset, srcs, vocabs)
	if len(problems) != 0 || len(names) != 4 {
		t.Fatalf("names %v, problems %v; want 4 names (the empty string is none)", names, problems)
	}
	lits := Literals(fset, "example.com/m", srcs, names, []Mirror{{Dir: "history", Const: "CorrectVariant"}},
		[]TypeName{{Dir: "history", Type: "Kind"}})
	var got []string
	for _, l := range lits {
		got = append(got, fmt.Sprintf("%s:%d %s", l.Path, l.Pos.Line, l.Name.Const))
	}
	want := []string{"fence/variant.go:7 Correct", "scenarios/scenario.go:6 SigClaimed", "scenarios/scenario.go:7 SigCAS",
		"scenarios/scenario.go:8 NoSweep", "scenarios/scenario.go:10 SigClaimed", "scenarios/scenario.go:11 SigCAS"}
	if !slices.Equal(got, want) {
		t.Fatalf("found\n  %q\nwant\n  %q", got, want)
	}
	if s := lits[0].String(); !strings.Contains(s, `"correct" spells the variant fence.Correct`) {
		t.Errorf("message %q", s)
	}

	// The homographs: a counted exception is no finding, one more of it is, and so is one gone.
	rest := spelledTwice(lits, []homograph{{"scenarios/scenario.go", "cas", 2, "test"}, {"fence/variant.go", "correct", 1, "test"},
		{"scenarios/scenario.go", "no-sweep", 0, "test"}, {"history/names.go", "claimed", 1, "test"}})
	joined := strings.Join(rest, "\n")
	for _, w := range []string{`scenarios/scenario.go:6:`, `scenarios/scenario.go:10:`, `"no-sweep" spelled 1 times, the homographs list 0`,
		`history/names.go: "claimed" spelled 0 times, the homographs list 1`} {
		if !strings.Contains(joined, w) {
			t.Errorf("homographs: got\n%s\nwant a line with %q", joined, w)
		}
	}
	if strings.Contains(joined, "fence/variant.go") || strings.Contains(joined, `"cas"`) {
		t.Errorf("homographs: a listed homograph was found:\n%s", joined)
	}

	// A name spelled by two constants of its vocabulary, and a constant that is no literal.
	dup, err := parser.ParseFile(fset, "history/more.go", "package history\nconst (\n\tSigAgain SignalKind = \"claimed\"\n\tSigOdd SignalKind = SigCAS\n)\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	_, problems = Names(fset, append(slices.Clone(srcs), Source{Path: "history/more.go", File: dup}), vocabs)
	if joined := strings.Join(problems, "\n"); !strings.Contains(joined, `"claimed" is spelled by SigClaimed and by SigAgain`) ||
		!strings.Contains(joined, "SigOdd is not a string literal") {
		t.Errorf("problems %q", problems)
	}
}

// TestMirrorsAreTheirNames: a mirror spells exactly the name it stands for.
func TestMirrorsAreTheirNames(t *testing.T) {
	if history.CorrectVariant != string(fence.Correct) {
		t.Errorf("history.CorrectVariant is %q, fence.Correct %q", history.CorrectVariant, fence.Correct)
	}
	if len(mirrors) != 1 {
		t.Errorf("%d mirrors: hold every one to its name here", len(mirrors))
	}
}

// TestInvariantsListsEveryInvariant: history.Invariants, the list the checker and the loader
// read, is every invariant constant, in declaration order.
func TestInvariantsListsEveryInvariant(t *testing.T) {
	fset := token.NewFileSet()
	var declared []string
	for _, n := range moduleNames(t, fset, moduleSources(t, fset)) {
		if n.Vocabulary.Type == "Invariant" {
			declared = append(declared, n.Value)
		}
	}
	if got := history.Invariants(); !slices.Equal(got, declared) {
		t.Errorf("history.Invariants()\n  %v\nthe constants declare\n  %v", got, declared)
	}
}

// TestTriggerEventsAreEmitted: every signal constant is emitted by some writer (the writers'
// calls of Writer.emit, read from their source), and the events a scenario may wait for are
// exactly the signals but notTriggers. A signal no writer emits would leave a step waiting
// on it never fired; one neither accepted nor listed is a decision not taken.
func TestTriggerEventsAreEmitted(t *testing.T) {
	fset := token.NewFileSet()
	srcs := moduleSources(t, fset)
	names := moduleNames(t, fset, srcs)
	signals := map[string]string{} // constant -> value
	var order []string
	for _, n := range names {
		if n.Vocabulary.Type == "SignalKind" {
			signals[n.Const], order = n.Value, append(order, n.Const)
		}
	}
	sig := vocabularies[0]
	emitted, problems := Emitted(fset, module, inDir(srcs, "writers"), sig, "emit")
	for _, p := range problems {
		t.Error(p)
	}
	for _, c := range order {
		if _, ok := emitted[c]; !ok {
			t.Errorf("history.%s (%q) is emitted by no writer", c, signals[c])
		}
	}
	for c := range emitted {
		if _, ok := signals[c]; !ok {
			t.Errorf("the writers emit history.%s, which is no signal constant", c)
		}
	}
	accepted := map[string]bool{}
	for _, e := range scenarios.Events {
		if accepted[string(e)] {
			t.Errorf("scenarios.Events lists %q twice", e)
		}
		accepted[string(e)] = true
	}
	for _, c := range order {
		switch v := signals[c]; {
		case accepted[v] && slices.Contains(notTriggers, c):
			t.Errorf("scenarios.Events accepts %q, which notTriggers says no step may wait for", v)
		case !accepted[v] && !slices.Contains(notTriggers, c):
			t.Errorf("history.%s (%q): add it to scenarios.Events, or to notTriggers here", c, v)
		}
		delete(accepted, signals[c])
	}
	for v := range accepted {
		t.Errorf("scenarios.Events accepts %q, which no signal constant spells", v)
	}
	for _, c := range notTriggers {
		if _, ok := signals[c]; !ok {
			t.Errorf("notTriggers lists %s, which is no signal constant", c)
		}
	}
}

func inDir(srcs []Source, dir string) []Source {
	var out []Source
	for _, s := range srcs {
		if path.Dir(s.Path) == dir {
			out = append(out, s)
		}
	}
	return out
}

// The emit check has teeth: a constant passed straight or through a variable is emitted, an
// argument it cannot trace is a problem, and a function of another arity is no emit.
func TestEmittedTracesTheConstants(t *testing.T) {
	src := `package writers
import "example.com/m/history"
type W struct{}
func (w *W) emit(kind history.SignalKind, n int) {}
func (w *W) run(ok bool) {
	w.emit(history.SigA, 1)
	var s history.SignalKind
	if ok {
		s = history.SigB
	} else {
		_, s = 1, history.SigC
	}
	w.emit(s, 2)
	w.emit(kindOf(ok), 3) // line 14
	w.emit(history.SigD) // another arity
	t := history.SigE
	t = other
	w.emit(t, 4) // line 18
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "writers/w.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got, problems := Emitted(fset, "example.com/m", []Source{{Path: "writers/w.go", File: f}},
		Vocabulary{What: "signal", Dir: "history", Type: "SignalKind"}, "emit")
	if keys := slices.Sorted(maps.Keys(got)); !slices.Equal(keys, []string{"SigA", "SigB", "SigC"}) {
		t.Errorf("emitted %v, want SigA, SigB, SigC", keys)
	}
	if len(problems) != 2 || !strings.Contains(problems[0], "w.go:14:") || !strings.Contains(problems[0], "kindOf(...)") ||
		!strings.Contains(problems[1], "w.go:18:") {
		t.Errorf("problems %q; want lines 14 and 18", problems)
	}
	if _, problems := Emitted(fset, "example.com/m", nil, Vocabulary{Dir: "history", Type: "SignalKind"}, "emit"); len(problems) != 1 {
		t.Errorf("no emit function at all: problems %q", problems)
	}
}
