package scenarios

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
)

// testVariants is every registered protocol variant.
var testVariants = func() []string {
	var out []string
	for _, v := range fence.Variants() {
		out = append(out, string(v.Name))
	}
	return out
}()

func TestCatalogueIsValid(t *testing.T) {
	cat, err := Catalogue(Options{Variants: testVariants})
	if err != nil {
		t.Fatalf("catalogue: %v", err)
	}
	if len(cat) < 22 {
		t.Fatalf("catalogue holds %d scenarios, want every row of the table (22)", len(cat))
	}
	for _, s := range cat {
		if s.Description == "" || len(s.Description) < 80 {
			t.Errorf("%s: a description a reader understands is required, got %q", s.Name, s.Description)
		}
		if s.Duration > 10*time.Second {
			t.Errorf("%s: %v is long; keep catalogue scenarios to a few seconds", s.Name, s.Duration)
		}
		if want := CatalogueDir + "/" + s.Name + ".yaml"; s.Source != want {
			t.Errorf("%s: file %s should be named after the scenario (%s)", s.Name, s.Source, want)
		}
		// The embedded copy and the file in the tree are the same bytes.
		onDisk, err := os.ReadFile(filepath.Join("catalogue", s.Name+".yaml"))
		if err != nil || string(onDisk) != string(s.Raw) {
			t.Errorf("%s: embedded scenario differs from catalogue/%s.yaml (%v)", s.Name, s.Name, err)
		}
	}
}

func TestParseExample(t *testing.T) {
	s, err := Parse("x.yaml", []byte(`
name: example
duration: 8s
seed: 42
writers:
  - {id: a, role: primary, term: 5}
  - {id: b, role: standby}
traffic: {clients: 4, rate: 300/s, sync_every: 20ops, sync_interval: 50ms}
client: aws-sdk
steps:
  - at: 1s
    partition: {writer: a, mode: blackhole}
    for: 500ms
  - after: {writer: b, event: claimed, count: 2, delay: 10ms}
    heal: a
  - at: 2s
    http:
      writer: b
      match: {method: PUT, key: "*/fence__*", header: If-Match, nth: 1}
      action: drop-response
expect:
  fenced: [a]
  min_acked: 200
`), Options{Variants: testVariants})
	if err != nil {
		t.Fatal(err)
	}
	if s.Seed != 42 || s.Duration != 8*time.Second || s.Client != "aws-sdk" || s.Traffic.Rate != 300 ||
		s.Traffic.SyncEvery != 20 || len(s.Steps) != 3 || s.Protocol != "correct" {
		t.Fatalf("decoded %+v", s)
	}
	if st := s.Steps[0]; st.Action != "partition" || st.Params.Mode != "blackhole" || st.For != 500*time.Millisecond || st.At != time.Second {
		t.Fatalf("step 0: %+v", st)
	}
	if st := s.Steps[1]; st.After == nil || st.After.Writer != "b" || st.After.Count != 2 || st.Params.Writer != "a" {
		t.Fatalf("step 1: %+v", st)
	}
	if r := s.Steps[2].Params.Rule; r.Name != "http@step2" || r.Header != "If-Match" || r.Action != "drop-response" || r.Nth != 1 {
		t.Fatalf("step 2 rule: %+v", r)
	}
}

// Each fixture in testdata/invalid starts with a line "# want: <substring>" per expected
// error; the loader must report all of them, each naming file, line and column.
func TestInvalidFixtures(t *testing.T) {
	files, _ := filepath.Glob("testdata/invalid/*.yaml")
	if len(files) < 10 {
		t.Fatalf("found %d invalid fixtures, want at least 10", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, _ := os.ReadFile(f)
			var wants []string
			for _, l := range strings.Split(string(data), "\n") {
				if w, ok := strings.CutPrefix(l, "# want: "); ok {
					wants = append(wants, w)
				}
			}
			if len(wants) == 0 {
				t.Fatal("fixture has no '# want:' line")
			}
			_, err := LoadFile(f, Options{Variants: testVariants})
			if err == nil {
				t.Fatal("loaded an invalid scenario")
			}
			var es Errors
			if !errors.As(err, &es) {
				t.Fatalf("error is %T, want Errors", err)
			}
			for _, e := range es {
				if e.File != f || e.Line < 1 || e.Col < 1 {
					t.Errorf("error without a location: %q (file %q line %d col %d)", e.Error(), e.File, e.Line, e.Col)
				}
			}
			msg := err.Error()
			for _, w := range wants {
				if !strings.Contains(msg, w) {
					t.Errorf("error\n%s\ndoes not mention %q", msg, w)
				}
			}
		})
	}
}

func TestResolve(t *testing.T) {
	got, err := Resolve([]string{"steady-state", "catalogue/relocation.yaml", "testdata/valid"}, Options{Variants: testVariants})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range got {
		names = append(names, s.Name)
	}
	if strings.Join(names, ",") != "steady-state,relocation,custom-one" {
		t.Fatalf("resolved %v", names)
	}
	_, err = Resolve([]string{"steady-stat"}, Options{})
	if err == nil || !strings.Contains(err.Error(), `did you mean "steady-state"`) {
		t.Fatalf("unknown name: got %v", err)
	}
	_, err = Resolve([]string{"steady-state", "catalogue/steady-state.yaml"}, Options{})
	if err == nil || !strings.Contains(err.Error(), "must be unique") {
		t.Fatalf("duplicate names: got %v", err)
	}
}

// fuzzSeeds reads the seeds of FuzzParse: the shipped catalogue and testdata/valid, which
// must parse, and testdata/invalid, which must be rejected with located errors. A pattern
// that matches nothing, a file that does not read or a seed on the wrong side ends the test:
// fuzzing never starts from no seed or from seeds that no longer mean what they say.
func fuzzSeeds(t testing.TB) [][]byte {
	t.Helper()
	var out [][]byte
	for _, g := range []struct {
		pattern string
		valid   bool
	}{{"catalogue/*.yaml", true}, {"testdata/valid/*.yaml", true}, {"testdata/invalid/*.yaml", false}} {
		files, err := filepath.Glob(g.pattern)
		if err != nil || len(files) == 0 {
			t.Fatalf("no fuzz seed matches %s (%v)", g.pattern, err)
		}
		for _, p := range files {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			_, err = Parse(p, b, Options{Variants: testVariants})
			var es Errors
			if g.valid && err != nil || !g.valid && (!errors.As(err, &es) || len(es) == 0) {
				t.Fatalf("seed %s (want valid: %v): %v", p, g.valid, err)
			}
			out = append(out, b)
		}
	}
	return out
}

// FuzzParse feeds arbitrary bytes to the scenario loader: it returns a scenario or located
// errors, never a panic, a nil scenario without an error, or an error of another kind.
func FuzzParse(f *testing.F) {
	for _, b := range fuzzSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Parse("fuzz.yaml", data, Options{Variants: testVariants})
		if err == nil && s == nil {
			t.Fatal("nil scenario without an error")
		}
		if err != nil {
			var es Errors
			if !errors.As(err, &es) || len(es) == 0 {
				t.Fatalf("error %T without located entries: %v", err, err)
			}
		}
	})
}

// TestVocabulary: every action of the table is documented in docs/scenarios.md's list of actions,
// and every fault action builds a fault named after its step, at the action's layer.
func TestVocabulary(t *testing.T) {
	readme, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	_, list, _ := strings.Cut(string(readme), "\nActions: ")
	list, _, _ = strings.Cut(list, "\n\n")
	for _, a := range Actions {
		if !strings.Contains(list, "`"+string(a.Name)+"`") {
			t.Errorf("docs/scenarios.md's list of actions lacks %s", a.Name)
		}
		if a.Build == nil {
			continue
		}
		st := Step{Index: 3, Action: a.Name, Params: Params{Writer: "a", Rule: faults.Rule{Name: "r"}}}
		f := st.Fault()
		if f == nil || f.Name() != st.FaultName() || f.Layer() != a.Layer {
			t.Errorf("%s builds %v, want a fault named %s at %s", a.Name, f, st.FaultName(), a.Layer)
		}
	}
}
