package reports

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/fencebench/fencebench/internal/browser"
)

// TestBrowserExploration opens an exploration page in headless Chromium: the banner, the
// coverage table and the failure boxes render, the link to a failure's cell page leads
// there, no injected script runs, and the page writes nothing to the console.
func TestBrowserExploration(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	dir := t.TempDir()
	if err := WriteExploration(dir, richExploration()); err != nil {
		t.Fatal(err)
	}
	cell := filepath.Join(dir, "explore-1016")
	if err := os.MkdirAll(cell, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cell, "report.html"),
		[]byte(`<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>cell</title></head><body><h1 id="cell">cell</h1></body></html>`), 0o644); err != nil {
		t.Fatal(err)
	}

	bctx, stop := browser.Open(t, 1400, 1000)
	if err := chromedp.Do(bctx,
		chromedp.Navigate(browser.FileURL(filepath.Join(dir, ExplorePage))),
		chromedp.WaitVisible(chromedp.CSS("#coverage-table")),
	); err != nil {
		t.Fatalf("explore.html: %v", err)
	}
	banner, err := chromedp.Run(bctx, chromedp.Evaluate[string](`document.getElementById("banner").textContent.trim()`))
	if err != nil || banner != "4 failures in 2000 schedules" {
		t.Errorf("banner %q (%v)", banner, err)
	}
	counts, err := chromedp.Run(bctx, chromedp.Evaluate[[]int](`[
		document.querySelectorAll("#coverage-table tbody tr").length,
		document.querySelectorAll("#coverage-table thead th").length,
		document.querySelectorAll("h3.group").length,
		document.querySelectorAll(".failure").length,
		document.querySelectorAll("script, img").length,
		document.querySelectorAll("a[href^='javascript:'], a[href^='http'], a[href^='/'], a[href^='..']").length]`))
	if err != nil {
		t.Fatalf("counting: %v", err)
	}
	// 3 faults and the reach row; fault, 6 phases and total; 2 groups; 4 failures; no
	// script or image from the untrusted text; no link out of the folder.
	if want := []int{4, 8, 2, 4, 0, 0}; !slices.Equal(counts, want) {
		t.Errorf("rows, columns, groups, failures, injected elements, outward links: %v, want %v", counts, want)
	}
	if png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100)); err == nil {
		saveShot(t, "explore.png", png)
	} else {
		t.Errorf("screenshot: %v", err)
	}

	if err := chromedp.Do(bctx,
		chromedp.Click(chromedp.CSS("#failure-1 a.cell-link")),
		chromedp.WaitVisible(chromedp.CSS("#cell")),
	); err != nil {
		t.Fatalf("following the cell link: %v", err)
	}
	if loc, err := chromedp.Run(bctx, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/explore-1016/report.html") {
		t.Errorf("after the click: at %q (%v), want the cell page", loc, err)
	}

	if console := stop(); len(console) > 0 {
		t.Errorf("console messages or exceptions: %q", console)
	}
	if err := bctx.Err(); errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("the browser test ran out of time")
	}
}

// saveShot keeps a screenshot in the test's folder, and in $FENCEBENCH_SCREENSHOTS when set.
func saveShot(t *testing.T, name string, png []byte) {
	t.Helper()
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
