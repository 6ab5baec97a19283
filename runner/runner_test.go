package runner

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"

	"go.uber.org/goleak"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
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
// must pass) and the kill matrix (every variant a scenario declares must be killed), each
// cell on the one seed drawn for it: a kill cell that survives its seed fails the test, as it
// fails `fencebench run --matrix`. It runs on the simulated stack (every cell but those that
// act on the store's drives, which need the local stack) on virtual time, so a loaded machine
// running the race detector beside the MinIO pass cannot change a verdict, and once on MinIO through Toxiproxy
// and the HTTP fault proxy with the minio-go client, two cells at a time; the nightly job
// (testenv.Nightly) adds the aws-sdk client on MinIO, one cell at a time. A failing cell
// prints its reasons and the command that reruns it; the results folder is kept.
func TestCatalogue(t *testing.T) {
	if testing.Short() {
		t.Skip("the catalogue takes minutes; skipped with -short")
	}
	t.Parallel()
	scs := catalogue(t)
	type pass struct {
		name string
		opts func() Options
		scs  []*scenarios.Scenario
	}
	passes := []pass{{name: "sim", scs: onSim(scs), opts: func() Options {
		return Options{Env: env.NewSim(0), Jobs: 2}
	}}, {name: string(store.ClientMinio), scs: scs, opts: func() Options {
		return Options{Env: env.Local{Local: testenv.MinIO(t)}, Client: string(store.ClientMinio), Jobs: 2}
	}}}
	if testenv.Nightly() {
		passes = append(passes, pass{name: string(store.ClientAWS), scs: scs, opts: func() Options {
			return Options{Env: env.Local{Local: testenv.MinIO(t)}, Client: string(store.ClientAWS)}
		}})
	}
	for _, p := range passes {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			out, err := os.MkdirTemp("", "fencebench-catalogue-")
			if err != nil {
				t.Fatal(err)
			}
			opts := p.opts()
			opts.Out, opts.Matrix, opts.RunID = out, true, p.name
			sum, err := Run(context.Background(), p.scs, opts)
			if err != nil {
				t.Fatal(err)
			}
			problems := judgeCatalogue(p.scs, sum)
			for _, p := range problems {
				t.Error(p)
			}
			if len(problems) > 0 {
				t.Logf("results kept in %s", sum.Dir)
				return
			}
			os.RemoveAll(out)
		})
	}
}

// onSim is the part of the catalogue the simulated stack runs: every scenario but those whose
// steps act on the store itself (drives, restarts).
func onSim(scs []*scenarios.Scenario) []*scenarios.Scenario {
	var out []*scenarios.Scenario
	for _, s := range scs {
		if !actsOnStore(s) {
			out = append(out, s)
		}
	}
	return out
}

// judgeCatalogue lists what a catalogue run with the kill matrix got wrong: every cell that
// did not pass on its seed (a correct cell that failed, a variant that survived or was
// inconclusive, a harness error), every declared variant no cell killed, and an exit code that
// disagrees with the cells (0 exactly when every cell passed).
func judgeCatalogue(scs []*scenarios.Scenario, sum *outcome.Summary) []string {
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
			what := "cell"
			if c.Kill {
				what = "kill cell (not killed on its seed)"
			}
			bad = append(bad, fmt.Sprintf("%s %s: %s: %s\n    rerun: %s", what, c.ID, c.Verdict, why, c.Rerun))
		}
	}
	if want := len(Cells(scs, "", true, 1, nil)); len(sum.Cells) != want {
		bad = append(bad, fmt.Sprintf("%d cells ran, the catalogue with the kill matrix has %d", len(sum.Cells), want))
	}
	for _, s := range scs {
		for _, k := range s.Kills {
			if !killed[k.Variant] {
				bad = append(bad, fmt.Sprintf("variant %s survived every scenario that should kill it", k.Variant))
				killed[k.Variant] = true // a variant is reported once
			}
		}
	}
	if allPass := sum.Counts()[checker.Pass] == len(sum.Cells); allPass != (sum.ExitCode() == outcome.ExitPass) {
		bad = append(bad, fmt.Sprintf("exit code %d, but %d of %d cells passed", sum.ExitCode(), sum.Counts()[checker.Pass], len(sum.Cells)))
	}
	return bad
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
	notInCatalogue := []string{"correct"}
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

// TestMatrixCells: the kill matrix adds, after each scenario's own cell, one cell per
// variant it declares, in order, on the scenario's seed; --variant runs each scenario once
// with that variant, as a kill cell exactly where the scenario declares it.
func TestMatrixCells(t *testing.T) {
	scs := catalogue(t)
	cells := Cells(scs, "", true, 1, nil)
	i := 0
	for _, s := range scs {
		want := []string{s.Name}
		for _, k := range s.Kills {
			want = append(want, s.Name+"--"+k.Variant)
		}
		for j, id := range want {
			if i >= len(cells) {
				t.Fatalf("%d cells, the matrix lacks %s", len(cells), id)
			}
			c := cells[i]
			if c.ID() != id || c.Scenario != s || c.Seed != 1 || (c.Kill != nil) != (j > 0) ||
				(j > 0 && (c.Kill != &s.Kills[j-1] || c.Variant != s.Kills[j-1].Variant)) {
				t.Fatalf("cell %d is %s (variant %s, kill %v, seed %d), want %s", i, c.ID(), c.Variant, c.Kill, c.Seed, id)
			}
			i++
		}
	}
	if i != len(cells) {
		t.Fatalf("%d cells, want %d", len(cells), i)
	}
	cells = Cells(scs, "no-sweep", true, 1, nil)
	if len(cells) != len(scs) {
		t.Fatalf("--variant runs each scenario once, got %d cells for %d scenarios", len(cells), len(scs))
	}
	kills := 0
	for i, c := range cells {
		declares := slices.ContainsFunc(scs[i].Kills, func(k scenarios.Kill) bool { return k.Variant == "no-sweep" })
		if c.Scenario != scs[i] || c.Variant != "no-sweep" || (c.Kill != nil) != declares {
			t.Fatalf("--variant no-sweep: cell %s has variant %s, kill %v (the scenario declares it: %v)", c.ID(), c.Variant, c.Kill, declares)
		}
		if declares {
			kills++
		}
	}
	if kills == 0 {
		t.Fatal("no scenario kills no-sweep: the --variant check above judged no kill cell")
	}
}

// TestJudgeCatalogueFailsASurvivor: a kill cell that survived its seed, or was inconclusive,
// is a problem of the catalogue run even when another scenario kills the same variant, and an
// exit code that hides a problem is one too.
func TestJudgeCatalogueFailsASurvivor(t *testing.T) {
	scs := catalogue(t)
	sum := &outcome.Summary{}
	for _, c := range Cells(scs, "", true, 1, nil) {
		sum.Cells = append(sum.Cells, &outcome.CellResult{ID: c.ID(), Scenario: c.Scenario.Name, Variant: c.Variant,
			Kill: c.Kill != nil, Seed: c.Seed, Verdict: checker.Pass})
	}
	if p := judgeCatalogue(scs, sum); len(p) != 0 {
		t.Fatalf("every cell passed, yet: %v", p)
	}
	for _, v := range []checker.Verdict{checker.Fail, checker.Inconclusive} {
		i := slices.IndexFunc(sum.Cells, func(c *outcome.CellResult) bool { return c.ID == "paused-primary--no-sweep" })
		if i < 0 {
			t.Fatal("the catalogue has no cell paused-primary--no-sweep")
		}
		sum.Cells[i].Verdict = v
		p := judgeCatalogue(scs, sum)
		if len(p) != 1 || !strings.Contains(p[0], "paused-primary--no-sweep") || !strings.Contains(p[0], "not killed") {
			t.Fatalf("no-sweep %s on its seed (partitioned-primary still kills it): got %q", v, p)
		}
		sum.Cells[i].Verdict = checker.Pass
	}
	sum.Cells = sum.Cells[1:]
	if p := judgeCatalogue(scs, sum); len(p) != 1 || !strings.Contains(p[0], "cells ran") {
		t.Fatalf("a missing cell: got %q", p)
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
	st, err := s3store.New(store.ClientMinio, srv.Config())
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
	sum, err := Run(ctx, []*scenarios.Scenario{s}, Options{Out: t.TempDir(), Env: env.Local{Local: srv}, Prefix: base + "mine/", Cleanup: true, NoReports: true})
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
