package deps

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/fencebench/fencebench"

// moduleGraph is the module's import graph as `go list` sees it, test files left out.
func moduleGraph(t *testing.T) Graph {
	t.Helper()
	out, err := exec.Command("go", "list", "-json", module+"/...").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list: %v", err)
	}
	g := Graph{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			Deps       []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/")
		g[name] = Imports{Direct: inModule(p.Imports), Deps: inModule(p.Deps)}
	}
	return g
}

// inModule are the module packages of paths, named by their path inside the module.
func inModule(paths []string) []string {
	out := []string{}
	for _, d := range paths {
		if rest, ok := strings.CutPrefix(d, module+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

func architecture(t *testing.T) []Rule {
	t.Helper()
	f, err := os.Open(filepath.Join("..", "..", "ARCHITECTURE.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rules, err := Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	return rules
}

// TestBoundaries holds the module's imports to the table of ARCHITECTURE.md.
func TestBoundaries(t *testing.T) {
	g := moduleGraph(t)
	rules := architecture(t)
	for _, v := range Check(g, rules) {
		t.Error(v)
	}
	// Every library package of the module has a line in the table.
	for p := range g {
		found := false
		for _, r := range rules {
			found = found || r.Package == p
		}
		if !found {
			t.Errorf("%s has no line in the boundary table of ARCHITECTURE.md", p)
		}
	}
}

// TestCheckCatchesForbiddenImports feeds the rules of ARCHITECTURE.md graphs with one
// forbidden arrow each; every one must be reported.
func TestCheckCatchesForbiddenImports(t *testing.T) {
	rules := architecture(t)
	real := moduleGraph(t)
	if got := Check(real, rules); len(got) != 0 {
		t.Fatalf("the real graph already breaks the rules: %q", got)
	}
	for _, tc := range []struct{ name, from, to, want string }{
		{"fence reaches the bench", "fence", "writers", "fence imports writers"},
		{"history is no leaf", "history", "store", "history imports store"},
		{"store imports the module", "store", "history", "store imports history"},
		{"checker reaches the store", "checker", "store", "checker imports store"},
		{"scenarios imports the runner", "scenarios", "runner", "scenarios imports runner"},
		{"reports imports the runner", "reports", "runner", "reports imports runner"},
		{"certify imports the runner", "certify", "runner", "certify imports runner"},
		{"env imports the reports", "env", "reports", "env imports reports"},
		{"a test helper in the product", "faults", "internal/testenv", "faults imports internal/testenv"},
		{"the runner imported by a library", "certify", "runner", "certify imports runner; only cmd/fencebench may"},
		{"the writers outside the root", "reports", "writers", "reports imports writers; only runner may"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := Graph{}
			for p, imp := range real {
				g[p] = Imports{Direct: slices.Clone(imp.Direct), Deps: slices.Clone(imp.Deps)}
			}
			from := g[tc.from]
			from.Direct, from.Deps = append(from.Direct, tc.to), append(from.Deps, tc.to)
			g[tc.from] = from
			got := strings.Join(Check(g, rules), "\n")
			if !strings.Contains(got, tc.want) {
				t.Errorf("adding %s -> %s: got %q, want a line with %q", tc.from, tc.to, got, tc.want)
			}
		})
	}
}

func TestParse(t *testing.T) {
	doc := "text\n\n| package | may import | may not import | imported by |\n|---|---|---|---|\n" +
		"| `fence` | `store` | | anyone |\n| `runner` | anything | `cmd/fencebench` | `cmd/fencebench` |\n\nafter | x |\n"
	rules, err := Parse(strings.NewReader(doc))
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 2 || rules[0].Package != "fence" || len(rules[0].May) != 1 || rules[0].Any || !rules[0].Anyone ||
		!rules[1].Any || rules[1].Anyone || rules[1].OnlyBy[0] != "cmd/fencebench" || rules[1].MayNot[0] != "cmd/fencebench" {
		t.Fatalf("rules %+v", rules)
	}
	if _, err := Parse(strings.NewReader("no table")); err == nil {
		t.Fatal("a document without a table must be refused")
	}
}

// thirdParty is what `go list -deps` says pkg links from outside the module and the standard
// library (vendored standard-library packages aside).
func thirdParty(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+"/"+pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	var deps []string
	for _, d := range strings.Fields(string(out)) {
		if !strings.HasPrefix(d, module) {
			deps = append(deps, d)
		}
	}
	return deps
}

// TestThirdPartyLayers holds the layers that keep the protocol liftable and the pure packages
// light: fence, store, history and faults link nothing beyond the standard library, and the
// loader, the simulated stack and the explorer link neither Toxiproxy (with its Prometheus and
// gorilla/mux) nor either SDK.
func TestThirdPartyLayers(t *testing.T) {
	for _, pkg := range []string{"fence", "store", "history", "faults"} {
		if deps := thirdParty(t, pkg); len(deps) > 0 {
			t.Errorf("%s links %v; it may link the standard library only", pkg, deps)
		}
	}
	heavy := []string{"github.com/Shopify/toxiproxy", "github.com/prometheus/", "github.com/gorilla/mux",
		"github.com/aws/", "github.com/minio/minio-go"}
	for _, pkg := range []string{"scenarios", "sim", "explore", "checker", "writers"} {
		for _, d := range thirdParty(t, pkg) {
			for _, h := range heavy {
				if strings.HasPrefix(d, h) {
					t.Errorf("%s links %s", pkg, d)
				}
			}
		}
	}
	// The check has teeth: the network paths do link Toxiproxy, the adapters the SDKs.
	for pkg, want := range map[string]string{"faults/netpath": "github.com/Shopify/toxiproxy", "store/s3store": "github.com/aws/"} {
		if !slices.ContainsFunc(thirdParty(t, pkg), func(d string) bool { return strings.HasPrefix(d, want) }) {
			t.Errorf("%s does not link %s: the layer test would not see a regression", pkg, want)
		}
	}
}
