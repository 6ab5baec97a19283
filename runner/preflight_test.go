package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// TestPreflightOnMinIO: the pinned MinIO passes both racing probes of the pre-flight, the
// run goes on as before, and the summary and the store panel say what was raced.
func TestPreflightOnMinIO(t *testing.T) {
	out := t.TempDir()
	sum, err := Run(context.Background(), []*scenarios.Scenario{quick(t, "first", "1s")},
		Options{Out: out, Env: env.Local{Local: testenv.MinIO(t)}, Prefix: testenv.Prefix(t), Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ExitCode() != outcome.ExitPass {
		t.Fatalf("exit %d: %+v", sum.ExitCode(), sum.Cells[0].Result.Reasons)
	}
	pf := sum.Preflight
	if pf == nil || pf.Error != "" || pf.Unsafe() != nil || len(pf.Probes) != 4 {
		t.Fatalf("pre-flight %+v; want two sequential and two racing probes, passed", pf)
	}
	for _, p := range pf.Probes[2:] {
		// A starved machine may spend a racer count's share of the budget before its 16
		// keys: then fewer races are judged and the cut is named, never a verdict changed.
		full := p.Races == 32 && p.Cut == ""
		cut := p.Races >= 2 && p.Races < 32 && p.Cut != ""
		if !(full || cut) || p.Wins != p.Races || !slices.Equal(p.Racers, []int{8, 32}) {
			t.Errorf("%s: %+v; want 16 keys x N=8 and N=32 (or fewer with the cut named), one winner each", p.ID, p)
		}
		if cut {
			t.Logf("%s: the pre-flight's budget cut the races: %s", p.ID, p.Cut)
		}
	}
	html := readFile(t, filepath.Join(sum.Dir, "index.html"))
	if !strings.Contains(html, `id="preflight"`) || !strings.Contains(html, "B10 CAS race") {
		t.Errorf("the store panel does not show the pre-flight")
	}
}

// TestUnsafeStoreIsRefused: a store whose conditional writes are check-then-act passes the
// sequential conditional-write probe, so only the racing pre-flight catches it. Its cells
// are refused with the store-unsafe verdict, the run exits 1, and the witness is in
// result.json, summary.json and the store panel. A scenario that allows an unenforcing
// store (lying-store) still runs and passes, as on any store.
func TestUnsafeStoreIsRefused(t *testing.T) {
	ctx := context.Background()
	front, err := unsafestore.Start(testenv.MinIO(t).Config(), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	prefix := testenv.Prefix(t)
	seq, err := s3store.New(store.ClientMinio, front.Config())
	if err != nil {
		t.Fatal(err)
	}
	if err := fence.Probe(ctx, seq, prefix+"sequential/"); err != nil {
		t.Fatalf("the sequential probe refused the check-then-act store (it must accept it): %v", err)
	}
	e, err := env.NewExternal(front.Config(), "check-then-act front", prefix+"run/")
	if err != nil {
		t.Fatal(err)
	}
	scs := pick(t, "steady-state", "partitioned-primary", "lying-store")
	sum, err := Run(ctx, scs, Options{Out: t.TempDir(), Env: e, Prefix: prefix + "run/", Seed: 1, Cleanup: true})
	if err != nil {
		t.Fatal(err)
	}
	if sum.ExitCode() != outcome.ExitFail {
		t.Errorf("exit %d, want %d", sum.ExitCode(), outcome.ExitFail)
	}
	u := sum.Preflight.Unsafe()
	if u == nil || !strings.Contains(u.Witness, "racers got 2xx") {
		t.Fatalf("pre-flight %+v; want a store-unsafe witness", sum.Preflight)
	}
	t.Logf("witness: %s", u.Witness)
	for _, c := range sum.Cells {
		if c.Scenario == "lying-store" {
			if c.Verdict != checker.Pass || c.StoreUnsafe != nil {
				t.Errorf("lying-store: %s %v %s; want it to run and pass as on any store", c.Verdict, c.Result.Reasons, c.Error)
			}
			continue
		}
		if c.Verdict != checker.Fail || c.StoreUnsafe == nil || c.StoreUnsafe.Witness != u.Witness ||
			len(c.Result.Reasons) != 1 || !strings.HasPrefix(c.Result.Reasons[0], "store unsafe: B9 create race: ") {
			t.Errorf("%s: %s %v %+v; want fail, store unsafe, with the witness", c.ID, c.Verdict, c.Result.Reasons, c.StoreUnsafe)
			continue
		}
		var stored outcome.CellResult
		if err := json.Unmarshal([]byte(readFile(t, filepath.Join(c.Dir, "result.json"))), &stored); err != nil ||
			stored.StoreUnsafe == nil || stored.StoreUnsafe.Witness != u.Witness {
			t.Errorf("%s: result.json does not hold the witness (%v)", c.ID, err)
		}
	}
	var summary struct {
		StoreUnsafe *outcome.StoreUnsafe `json:"store_unsafe"`
	}
	if err := json.Unmarshal([]byte(readFile(t, filepath.Join(sum.Dir, "summary.json"))), &summary); err != nil ||
		summary.StoreUnsafe == nil || summary.StoreUnsafe.Witness != u.Witness {
		t.Errorf("summary.json does not hold the witness (%v)", err)
	}
	html := readFile(t, filepath.Join(sum.Dir, "index.html"))
	for _, want := range []string{`id="preflight-witness"`, "STORE UNSAFE", "B9 create race", "not atomic"} {
		if !strings.Contains(html, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
}

func pick(t *testing.T, names ...string) []*scenarios.Scenario {
	t.Helper()
	var out []*scenarios.Scenario
	for _, sc := range catalogue(t) {
		if slices.Contains(names, sc.Name) {
			out = append(out, sc)
		}
	}
	if len(out) != len(names) {
		t.Fatalf("found %d of the scenarios %v", len(out), names)
	}
	return out
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
