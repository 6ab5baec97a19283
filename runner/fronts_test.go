package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
)

// TestUnsafeFrontsTurnRunRed: two catalogue scenarios run through each front of package
// unsafestore exit 1, every cell refused with the store named as the cause and the
// pre-flight probe that caught it (A5 for a front that creates on If-Match to a missing key,
// D17 for stale reads after a CAS, B9 for non-atomic or skipped conditions); on the pinned
// MinIO the same scenarios run and pass.
func TestUnsafeFrontsTurnRunRed(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	probe := map[unsafestore.Mode]string{
		unsafestore.CheckThenAct:    "B9 create race",
		unsafestore.IgnoreUnderLoad: "B9 create race",
		unsafestore.CreateOnIfMatch: "A5 If-Match on a missing key",
		unsafestore.StaleAfterCAS:   "D17 read after CAS",
	}
	type row struct {
		name  string
		front *unsafestore.Options
		probe string
	}
	rows := []row{{name: "pinned MinIO"}}
	for _, o := range unsafestore.Every() {
		rows = append(rows, row{o.Mode.String(), &o, probe[o.Mode]})
	}
	for _, tc := range rows {
		t.Run(tc.name, func(t *testing.T) {
			prefix := testenv.Prefix(t) + "run/"
			cfg, name := unsafestore.Serve(t, testenv.MinIO(t).Config(), tc.front)
			sum, err := Run(context.Background(), pick(t, "steady-state", "partitioned-primary"),
				Options{Out: t.TempDir(), Env: testenv.External(t, cfg, name, prefix), Prefix: prefix, Seed: 1, Cleanup: true})
			if err != nil {
				t.Fatal(err)
			}
			if tc.front == nil {
				if sum.ExitCode() != outcome.ExitPass || sum.Preflight.Unsafe() != nil {
					t.Fatalf("exit %d, pre-flight %+v; want exit 0 and a passed pre-flight", sum.ExitCode(), sum.Preflight)
				}
				return
			}
			if sum.ExitCode() != outcome.ExitFail {
				t.Errorf("exit %d, want %d", sum.ExitCode(), outcome.ExitFail)
			}
			u := sum.Preflight.Unsafe()
			if u == nil || u.Probe != tc.probe {
				t.Fatalf("pre-flight %+v; want the store unsafe by %s", sum.Preflight, tc.probe)
			}
			t.Logf("witness: %.400s", u.Witness)
			for _, c := range sum.Cells {
				if c.Verdict != checker.Fail || c.StoreUnsafe == nil || c.StoreUnsafe.Probe != tc.probe || c.Error != "" ||
					len(c.Result.Reasons) != 1 || !strings.HasPrefix(c.Result.Reasons[0], outcome.StoreUnsafeReason+": "+tc.probe) {
					t.Errorf("%s: %s %v %+v %s; want fail, the store unsafe by %s", c.ID, c.Verdict, c.Result.Reasons, c.StoreUnsafe, c.Error, tc.probe)
				}
			}
		})
	}
}
