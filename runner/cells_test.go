package runner

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/env"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/scenarios"
)

// TestCatalogueCell runs one shipped scenario per subtest, with the correct protocol and
// every variant it declares it kills, so a few cells can be selected with -run
// 'TestCatalogueCell/<name>'. The correct protocol must pass and every variant must be
// killed, on seed 1 and nothing else. TestCatalogue runs the same cells in `make test`, so
// this one runs in the nightly job (FENCEBENCH_NIGHTLY=1) or when FENCEBENCH_CELLS=1 asks for
// it, e.g. FENCEBENCH_CELLS=1 go test ./runner -run 'TestCatalogueCell/partial-sweep'.
func TestCatalogueCell(t *testing.T) {
	if testing.Short() {
		t.Skip("cells run against a real store; skipped with -short")
	}
	if !testenv.Nightly() && os.Getenv("FENCEBENCH_CELLS") != "1" {
		t.Skip("TestCatalogue runs these cells; set FENCEBENCH_CELLS=1 (or FENCEBENCH_NIGHTLY=1, make nightly) to run them one per subtest")
	}
	for _, s := range catalogue(t) {
		t.Run(s.Name, func(t *testing.T) {
			srv := testenv.MinIO(t)
			opts := Options{Out: t.TempDir(), Matrix: true, Env: env.Local{Local: srv}, Prefix: testenv.Prefix(t), Seed: 1, Cleanup: true}
			sum, err := Run(context.Background(), []*scenarios.Scenario{s}, opts)
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range sum.Cells {
				t.Logf("%s: %s", c.ID, c.Verdict)
				if c.Verdict != checker.Pass {
					t.Errorf("%s: %s: %s %s", c.ID, c.Verdict, c.Error, strings.Join(c.Result.Reasons, "; "))
				}
			}
		})
	}
}
