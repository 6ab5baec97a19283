package runner

import (
	"context"
	"fmt"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func variants() []string {
	var out []string
	for _, v := range fence.Variants() {
		out = append(out, string(v.Name))
	}
	return out
}

func catalogue(t *testing.T) []*scenarios.Scenario {
	t.Helper()
	scs, err := scenarios.Catalogue(scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	return scs
}

// TestCatalogue runs the whole shipped catalogue with the correct protocol (every scenario
// must pass) and the kill matrix (every variant a scenario declares must be killed), once per
// store client. A failing cell prints its reasons and the command that reruns it; the results
// folder is kept for inspection.
func TestCatalogue(t *testing.T) {
	if testing.Short() {
		t.Skip("the catalogue takes minutes; skipped with -short")
	}
	scs := catalogue(t)
	srv := testenv.MinIO(t)
	for _, client := range store.Clients {
		t.Run(string(client), func(t *testing.T) {
			out, err := os.MkdirTemp("", "fencebench-catalogue-")
			if err != nil {
				t.Fatal(err)
			}
			sum, err := Run(context.Background(), scs, Options{Out: out, Matrix: true, Client: string(client),
				Env: env.Local{Local: srv}, RunID: string(client)})
			if err != nil {
				t.Fatal(err)
			}
			// A kill is a detection that depends on timing: a variant that survived one seed is
			// run once more with a fresh seed, and counts as killed only if that run kills it.
			// Cells of the correct protocol are never run again: their failure is a finding.
			for i, c := range sum.Cells {
				if !c.Kill || c.Verdict == checker.Pass || c.Verdict == checker.Error {
					continue
				}
				var sc *scenarios.Scenario
				for _, x := range scs {
					if x.Name == c.Scenario {
						sc = x
					}
				}
				t.Logf("%s was not killed with seed %d (%s); running it once more with a fresh seed", c.ID, c.Seed,
					strings.Join(c.Result.Reasons, "; "))
				again, err := Run(context.Background(), []*scenarios.Scenario{sc}, Options{Out: out, Client: string(client),
					Variant: c.Variant, Env: env.Local{Local: srv}, RunID: fmt.Sprintf("%s-again-%d", client, i)})
				if err != nil {
					t.Fatal(err)
				}
				sum.Cells[i] = again.Cells[0]
			}
			var bad []string
			killed := map[string]bool{}
			for _, c := range sum.Cells {
				if c.Kill && c.Verdict == checker.Pass {
					killed[c.Variant] = true
				}
				if c.Verdict != checker.Pass {
					why := c.Error
					if why == "" {
						why = strings.Join(c.Result.Reasons, "; ")
					}
					bad = append(bad, fmt.Sprintf("%s: %s: %s\n    rerun: %s", c.ID, c.Verdict, why, c.Rerun))
				}
			}
			if len(bad) > 0 {
				t.Fatalf("%d of %d cells did not pass (results kept in %s):\n  %s", len(bad), len(sum.Cells), sum.Dir,
					strings.Join(bad, "\n  "))
			}
			os.RemoveAll(out)
			// Every variant the catalogue names is killed by at least one scenario.
			for _, s := range scs {
				for _, k := range s.Kills {
					if !killed[k.Variant] {
						t.Errorf("variant %s survived every scenario that should kill it", k.Variant)
					}
				}
			}
			if sum.ExitCode() != outcome.ExitPass {
				t.Errorf("exit code %d, want 0", sum.ExitCode())
			}
		})
	}
}

// TestCatalogueCoversTheVariants: every broken variant in the registry is named by some
// scenario's kill list, except those no scenario of the catalogue can express yet, which
// are listed here on purpose.
func TestCatalogueCoversTheVariants(t *testing.T) {
	named := map[string]bool{}
	for _, s := range catalogue(t) {
		for _, k := range s.Kills {
			named[k.Variant] = true
		}
	}
	notInCatalogue := []string{"correct", "reuse-half-claimed", "adopt-without-identity",
		"withdraw-arbitrated", "recreate-on-404", "publish-fails-closed", "hydrate-before-seal", "fenced-not-sticky"}
	for _, v := range variants() {
		if !named[v] && !slices.Contains(notInCatalogue, v) {
			t.Errorf("variant %s is killed by no catalogue scenario", v)
		}
	}
}

func TestSameSeedSameSchedule(t *testing.T) {
	s, err := scenarios.Parse("flap.yaml", []byte(`
name: flappy
duration: 5s
writers:
  - {id: a, role: primary, term: 1}
steps:
  - at: 1s
    flap: {writer: a, on: 100ms, off: 200ms}
    for: 2s
  - after: {writer: a, event: acked, count: 3}
    pause: a
    for: 100ms
`), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	render := func(seed uint64) string {
		var b strings.Builder
		for _, p := range Plan(s, seed) {
			b.WriteString(p.String() + "\n")
		}
		return b.String()
	}
	a, b, c := render(42), render(42), render(43)
	if a != b {
		t.Fatalf("the same seed gave two schedules:\n%s\nvs\n%s", a, b)
	}
	if a == c {
		t.Fatalf("different seeds gave the same flap rhythm:\n%s", a)
	}
	if !strings.Contains(a, "flap-on") || !strings.Contains(a, "flap-off") || !strings.Contains(a, "heal-window") {
		t.Fatalf("schedule lacks the flap toggles or the window end:\n%s", a)
	}
	// Cells: an explicit seed overrides; a drawn one is drawn once per scenario.
	draws := 0
	cells := Cells([]*scenarios.Scenario{s}, "", false, 0, func() uint64 { draws++; return 7 })
	if len(cells) != 1 || cells[0].Seed != 7 || draws != 1 {
		t.Fatalf("cells %+v draws %d", cells, draws)
	}
	if cells := Cells([]*scenarios.Scenario{s}, "", false, 99, nil); cells[0].Seed != 99 {
		t.Fatalf("--seed must override: %+v", cells)
	}
}

func TestMatrixCells(t *testing.T) {
	scs := catalogue(t)
	cells := Cells(scs, "", true, 1, nil)
	n := 0
	for _, s := range scs {
		n += 1 + len(s.Kills)
	}
	if len(cells) != n {
		t.Fatalf("%d cells, want %d", len(cells), n)
	}
	for _, c := range cells {
		if (c.Kill != nil) != (c.Variant != "correct") {
			t.Fatalf("cell %s: kill %v variant %s", c.ID(), c.Kill, c.Variant)
		}
	}
	if cells := Cells(scs, "no-sweep", true, 1, nil); len(cells) != len(scs) || cells[0].Kill != nil && cells[0].Variant != "no-sweep" {
		t.Fatalf("--variant runs each scenario once with that variant, got %d cells", len(cells))
	}
}

// TestInterruptLeavesNothing cancels a run in the middle of a cell: Run returns promptly,
// the cell is an error (never a verdict), and no goroutine, listener or MinIO process is left.
func TestInterruptLeavesNothing(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s, err := scenarios.LoadFile("testdata/long-steady.yaml", scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var endpoint string
	go func() {
		time.Sleep(2 * time.Second)
		cancel()
	}()
	start := time.Now()
	sum, err := Run(ctx, []*scenarios.Scenario{s}, Options{Out: t.TempDir(), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > 25*time.Second {
		t.Fatalf("Run took %v after an interrupt at 2s; the 30s scenario was not cut short", d)
	}
	if len(sum.Cells) != 1 || sum.Cells[0].Verdict != checker.Error || !strings.Contains(sum.Cells[0].Error, "interrupted") {
		t.Fatalf("an interrupted cell must be an error, got %+v", sum.Cells[0])
	}
	if sum.ExitCode() != outcome.ExitHarness {
		t.Fatalf("exit code %d, want %d", sum.ExitCode(), outcome.ExitHarness)
	}
	endpoint = strings.TrimPrefix(sum.Store.Endpoint, "http://")
	if c, err := net.DialTimeout("tcp", endpoint, time.Second); err == nil {
		c.Close()
		t.Fatalf("MinIO still answers at %s after the run", endpoint)
	}
}

// TestPrefixIsFreshAndCleaned: a run refuses a prefix that already holds objects, and with
// Cleanup deletes exactly its own objects, leaving everything outside its prefix untouched.
func TestPrefixIsFreshAndCleaned(t *testing.T) {
	srv := testenv.MinIO(t)
	st, err := store.New(store.ClientMinio, srv.Config())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	base := testenv.Prefix(t)
	if _, err := st.Put(ctx, base+"busy/someone-elses", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	if _, err := st.Put(ctx, base+"neighbour", []byte("untouched")); err != nil {
		t.Fatal(err)
	}
	s, err := scenarios.Parse("short.yaml", []byte("name: short\nduration: 700ms\nwriters:\n  - {id: a, role: primary, term: 1}\n"), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = Run(ctx, []*scenarios.Scenario{s}, Options{Out: t.TempDir(), Env: env.Local{Local: srv}, Prefix: base + "busy/"})
	if err == nil || !strings.Contains(err.Error(), "already holds 1 objects") {
		t.Fatalf("a busy prefix: got %v, want a refusal", err)
	}
	sum, err := Run(ctx, []*scenarios.Scenario{s}, Options{Out: t.TempDir(), Env: env.Local{Local: srv}, Prefix: base + "mine/", Cleanup: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Cells[0].Verdict != checker.Pass {
		t.Fatalf("short run: %s %v", sum.Cells[0].Verdict, sum.Cells[0].Result.Reasons)
	}
	if left, _ := st.List(ctx, base+"mine/"); len(left) != 0 {
		t.Fatalf("cleanup left %d objects, first %s", len(left), left[0].Key)
	}
	for k, want := range map[string]string{base + "busy/someone-elses": "theirs", base + "neighbour": "untouched"} {
		if o, err := st.Get(ctx, k); err != nil || string(o.Body) != want {
			t.Fatalf("%s: got %q, %v; the run must not touch objects outside its prefix", k, o.Body, err)
		}
	}
}

// TestNothingImportsTheRunner keeps runner the composition root: no package but the command
// (tests aside) imports it.
func TestNothingImportsTheRunner(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "github.com/fencebench/fencebench/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || f[0] == "github.com/fencebench/fencebench/cmd/fencebench" {
			continue
		}
		if slices.Contains(f[1:], "github.com/fencebench/fencebench/runner") {
			t.Errorf("%s imports runner; only cmd/fencebench may", f[0])
		}
	}
}
