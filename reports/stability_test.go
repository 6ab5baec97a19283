package reports

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/outcome"
)

// TestStabilityFlipRate: over four rounds, a correct cell inconclusive once and a kill cell
// that survived twice are counted as flipping with their rates, the steady cells are not, a
// round that could not run is listed as an error, the exit code is the worst round's, and
// the page escapes what it shows.
func TestStabilityFlipRate(t *testing.T) {
	dir := t.TempDir()
	s := Stability{Rounds: 4, Clients: []string{"minio-go"}, Command: "fencebench stability <b>"}
	for r := 1; r <= 4; r++ {
		v := checker.Pass
		if r == 3 {
			v = checker.Inconclusive
		}
		k := checker.Pass
		if r%2 == 0 {
			k = checker.Fail
		}
		sum := &outcome.Summary{Cells: []*outcome.CellResult{
			simpleCell("steady-state", "steady-state", "correct", false, nil, checker.Pass, nil),
			simpleCell("twin", "twin", "correct", false, nil, v, nil),
			simpleCell("twin--no-guard", "twin", "no-guard", true, []string{checker.NoAckedWriteLoss}, k, nil),
		}}
		s.AddRun(r, "minio-go", "r0"+string(rune('0'+r))+"-minio-go", uint64(r), sum, nil)
	}
	s.AddRun(5, "minio-go", "r05-minio-go", 5, nil, errors.New("store died"))
	if err := WriteStability(dir, s); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "stability.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got Stability
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	want := map[string][2]int{"steady-state": {0, 4}, "twin": {1, 4}, "twin--no-guard": {2, 4}}
	for _, c := range got.Cells {
		w := want[c.ID]
		if c.Unexpected != w[0] || c.Runs != w[1] {
			t.Errorf("%s: %d/%d unexpected, want %d/%d", c.ID, c.Unexpected, c.Runs, w[0], w[1])
		}
	}
	if got.Unexpected != 3 || got.Flipping != 2 {
		t.Errorf("unexpected %d in %d cells, want 3 in 2", got.Unexpected, got.Flipping)
	}
	if code := s.ExitCode(); code != outcome.ExitHarness {
		t.Errorf("exit code %d, want %d (a round could not run)", code, outcome.ExitHarness)
	}
	page, err := os.ReadFile(filepath.Join(dir, "stability.html"))
	if err != nil {
		t.Fatal(err)
	}
	html := string(page)
	for _, w := range []string{"3 unexpected verdicts in 2 of 3 cells", "2/4", "50%", "store died",
		`href="r02-minio-go/twin--no-guard/report.html"`, "&lt;b&gt;"} {
		if !strings.Contains(html, w) {
			t.Errorf("stability.html lacks %q", w)
		}
	}
	if strings.Index(html, "twin--no-guard") > strings.Index(html, ">steady-state<") {
		t.Error("the flipping cells are not listed first")
	}
	clean := Stability{}
	clean.AddRun(1, "aws-sdk", "r01-aws-sdk", 1, &outcome.Summary{Cells: []*outcome.CellResult{
		simpleCell("steady-state", "steady-state", "correct", false, nil, checker.Pass, nil)}}, nil)
	if code := clean.ExitCode(); code != outcome.ExitPass {
		t.Errorf("exit code %d of a stable run, want 0", code)
	}
}
