package reports

import (
	"context"
	"errors"
	"github.com/fencebench/fencebench/outcome"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fencebench/fencebench/internal/browser"
)

// TestBrowser opens the generated pages in headless Chromium: the index shows the verdict
// matrix, a scenario link leads to a cell page with the timeline, the hover read-out works,
// the trend page renders, and no page writes to the console or throws.
func TestBrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	root := t.TempDir()
	runDir := filepath.Join(root, "run-1")
	if err := Write(runDir, synthRun()); err != nil {
		t.Fatal(err)
	}
	if err := WriteTrend(root); err != nil {
		t.Fatal(err)
	}

	bctx, stop := browser.Open(t, 1400, 1000)

	shot := func(name, sel string) {
		t.Helper()
		action := chromedp.FullScreenshot(100)
		if sel != "" {
			action = chromedp.Screenshot(chromedp.CSS(sel))
		}
		png, err := chromedp.Run(bctx, action)
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		p := filepath.Join(t.TempDir(), name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
		if dir := os.Getenv("FENCEBENCH_SCREENSHOTS"); dir != "" {
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, name), png, 0o644)
		}
	}

	// The run's index: the verdict matrix, with a link per scenario.
	if err := chromedp.Do(bctx,
		chromedp.Navigate(browser.FileURL(filepath.Join(runDir, "index.html"))),
		chromedp.WaitVisible(chromedp.CSS("#verdict-matrix")),
	); err != nil {
		t.Fatalf("index: %v", err)
	}
	rows, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("#verdict-matrix tbody tr").length`))
	if err != nil || rows != 4 {
		t.Errorf("verdict matrix rows: got %d (%v), want 4", rows, err)
	}
	survived, err := chromedp.Run(bctx, chromedp.Evaluate[int](
		`[...document.querySelectorAll("#verdict-matrix a.v")].filter(a => a.textContent === "SURVIVED").length`))
	if err != nil || survived != 1 {
		t.Errorf("SURVIVED cells in the matrix: got %d (%v), want 1", survived, err)
	}
	shot("index.png", "")

	// Follow the first scenario link to its cell page.
	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS("#verdict-matrix a.scenario-link")),
		chromedp.WaitVisible(chromedp.CSS("#timeline")),
	); err != nil {
		t.Fatalf("following the scenario link: %v", err)
	}
	loc, err := chromedp.Run(bctx, chromedp.Location())
	if err != nil || !strings.HasSuffix(loc, "/partitioned-primary/report.html") {
		t.Errorf("after the click: at %q (%v), want the partitioned-primary cell page", loc, err)
	}
	marks, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("#timeline path").length`))
	if err != nil || marks < 10 {
		t.Errorf("timeline paths: got %d (%v)", marks, err)
	}
	anchor, err := chromedp.Run(bctx, chromedp.Evaluate[bool](`document.querySelector("svg #first-violation") !== null`))
	if err != nil || !anchor {
		t.Errorf("first-violation anchor in the timeline: %v (%v)", anchor, err)
	}
	// The hover read-out of the aggregated rows: move over lane a's ack row.
	tip, err := chromedp.Run(bctx, chromedp.Evaluate[string](`(() => {
		const svg = document.getElementById("timeline");
		const d = JSON.parse(document.getElementById("timeline-data").textContent);
		const lane = d.lanes[0];
		const i = lane.s.findIndex(s => s && s[2] > 0);
		const pt = svg.createSVGPoint();
		pt.x = d.left + (i + 0.5) * d.sw; pt.y = lane.y0 + 60;
		const p = pt.matrixTransform(svg.getScreenCTM());
		svg.dispatchEvent(new MouseEvent("mousemove", {clientX: p.x, clientY: p.y, bubbles: true}));
		const tip = document.getElementById("tl-tip");
		return tip.hidden ? "" : tip.textContent;
	})()`))
	if err != nil || !strings.Contains(tip, "ops acked") {
		t.Errorf("hover read-out: got %q (%v), want the slice's counts", tip, err)
	}
	shot("cell.png", "")
	shot("timeline.png", "#tl-wrap")

	// The anchor jump works.
	if err := chromedp.Do(bctx, chromedp.Click(chromedp.CSS(`a[href="#first-violation"]`))); err != nil {
		t.Errorf("jump to first violation: %v", err)
	}
	if loc, _ := chromedp.Run(bctx, chromedp.Location()); !strings.HasSuffix(loc, "#first-violation") {
		t.Errorf("after the jump: at %q", loc)
	}

	// The trend page.
	if err := chromedp.Do(bctx,
		chromedp.Navigate(browser.FileURL(filepath.Join(root, "index.html"))),
		chromedp.WaitVisible(chromedp.CSS("#trend-table")),
	); err != nil {
		t.Fatalf("trend page: %v", err)
	}
	shot("trend.png", "")

	// A long run stays legible: 30k events over 30 seconds.
	big := bigCell(30_000)
	if err := Write(filepath.Join(root, "run-big"), &outcome.Summary{RunID: "run-big", Cells: []*outcome.CellResult{big}}); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(bctx,
		chromedp.Navigate(browser.FileURL(filepath.Join(root, "run-big", big.ID, "report.html"))),
		chromedp.WaitVisible(chromedp.CSS("#timeline")),
	); err != nil {
		t.Fatalf("large cell page: %v", err)
	}
	shot("timeline-30k.png", "#tl-wrap")

	if console := stop(); len(console) > 0 {
		t.Errorf("console messages or exceptions: %q", console)
	}
	if err := bctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the browser test ran out of time")
	}
}
