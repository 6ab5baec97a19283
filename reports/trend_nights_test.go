package reports

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/internal/browser"
	"github.com/fencebench/fencebench/outcome"
)

// writeNights writes five nights into root, oldest first, and the trend page: steady-state
// always passes, flaky passes and fails in turn, regress fails from night 3 on, and the
// variant of partial-sweep--no-reverify survives from night 3 on.
func writeNights(t *testing.T, root string) {
	t.Helper()
	pf := map[bool]checker.Verdict{true: checker.Pass, false: checker.Fail}
	for n := 1; n <= 5; n++ {
		run := &outcome.Summary{
			RunID:   fmt.Sprintf("night-%d", n),
			Started: time.Date(2026, 3, n, 2, 17, 0, 0, time.UTC),
			Cells: []*outcome.CellResult{
				simpleCell("steady-state", "steady-state", "correct", false, nil, checker.Pass, nil),
				simpleCell("flaky", "flaky", "correct", false, nil, pf[n%2 == 1], nil),
				simpleCell("regress", "regress", "correct", false, nil, pf[n < 3], nil),
				simpleCell("partial-sweep--no-reverify", "partial-sweep", "no-reverify", true, []string{checker.NoAckedWriteLoss},
					pf[n < 3], nil),
			},
		}
		if err := Write(filepath.Join(root, run.RunID), run); err != nil {
			t.Fatal(err)
		}
	}
	if err := WriteTrend(root); err != nil {
		t.Fatal(err)
	}
}

// TestTrendAcrossNights: over five nights the flaky cell is marked flaky and nothing else is,
// the failure that stays is failing and not flaky, the kill cell's variant first survived on
// night 3, each night links to its report, and the newest night's summary.json flags the
// flaky cell for a dashboard.
func TestTrendAcrossNights(t *testing.T) {
	root := t.TempDir()
	writeNights(t, root)
	b, err := os.ReadFile(filepath.Join(root, "trend.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v trendView
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Runs) != 5 || v.Runs[0].ID != "night-5" || v.Runs[0].Href != "night-5/index.html" {
		t.Fatalf("runs: %+v", v.Runs)
	}
	if !slices.Equal(v.Flaky, []string{"flaky"}) {
		t.Errorf("flaky cells: %v, want [flaky]", v.Flaky)
	}
	rows := map[string]trendRow{}
	for _, r := range v.Rows {
		rows[r.Cell] = r
	}
	for cell, want := range map[string]trendRow{
		"steady-state":               {Flips: 0},
		"flaky":                      {Flips: 4, Flaky: true},
		"regress":                    {Flips: 1, Failing: true},
		"partial-sweep--no-reverify": {Flips: 1, Failing: true, FirstSurvived: "night-3"},
	} {
		got := rows[cell]
		if got.Flips != want.Flips || got.Flaky != want.Flaky || got.Failing != want.Failing || got.FirstSurvived != want.FirstSurvived {
			t.Errorf("%s: flips %d flaky %v failing %v first survived %q; want %+v", cell, got.Flips, got.Flaky, got.Failing,
				got.FirstSurvived, want)
		}
	}
	for night, want := range map[string]bool{"night-5": true, "night-2": false} {
		s, err := ReadSummary(filepath.Join(root, night, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range s.Cells {
			if c.Flaky != (want && c.ID == "flaky") {
				t.Errorf("%s summary.json: cell %s flaky %v", night, c.ID, c.Flaky)
			}
		}
	}
}

// TestTrendBrowserFlaky opens the trend page of five nights in headless Chromium, screenshots
// it, and finds the flaky cell marked, and only it.
func TestTrendBrowserFlaky(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	root := t.TempDir()
	writeNights(t, root)
	bctx, stop := browser.Open(t, 1400, 1000)
	if err := chromedp.Do(bctx,
		chromedp.Navigate(browser.FileURL(filepath.Join(root, "index.html"))),
		chromedp.WaitVisible(chromedp.CSS("#trend-table")),
	); err != nil {
		t.Fatalf("trend page: %v", err)
	}
	png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "trend-nights.png")
	if err := os.WriteFile(p, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(p); err != nil || st.Size() == 0 {
		t.Fatalf("screenshot %s: %v", p, err)
	}
	marked, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](
		`[...document.querySelectorAll("#trend-table tr[data-flaky='true']")].filter(r => r.querySelector(".flag.flaky")).map(r => r.dataset.cell)`))
	if err != nil || !slices.Equal(marked, []string{"flaky"}) {
		t.Errorf("flaky rows marked on the page: %v (%v), want [flaky]", marked, err)
	}
	links, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("#trend-table thead a[href$='/index.html']").length`))
	if err != nil || links != 5 {
		t.Errorf("links to the nights' reports: %d (%v), want 5", links, err)
	}
	if console := stop(); len(console) > 0 {
		t.Errorf("console messages or exceptions: %q", console)
	}
}
