// Package browser opens pages in a real headless Chromium for tests: it finds (or installs)
// the browser, starts it with the flags a container needs, and shows what the page logged.
//
// Tests that need a browser fail (they do not skip) when none can be found or installed,
// unless FENCEBENCH_NO_BROWSER=1 says the machine has none; -short skips them.
package browser

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// Chromium returns the path of a Chromium binary, installing the Debian package when none is
// on PATH. Installation failure fails the test; FENCEBENCH_NO_BROWSER=1 skips it instead.
func Chromium(t testing.TB) string {
	t.Helper()
	if os.Getenv("FENCEBENCH_NO_BROWSER") == "1" {
		t.Skip("FENCEBENCH_NO_BROWSER=1")
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Log("chromium not found on PATH: installing the Debian package")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "chromium"}} {
		cmd := exec.CommandContext(ctx, "apt-get", args...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("apt-get %s: %v\n%s\n(set FENCEBENCH_NO_BROWSER=1 to skip the browser test)", strings.Join(args, " "), err, out)
		}
	}
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Fatalf("chromium installed but not on PATH: %v", err)
	}
	return p
}

// FileURL is the file:// URL of a local path.
func FileURL(path string) string {
	return (&url.URL{Scheme: "file", Path: filepath.ToSlash(path)}).String()
}

// Open starts a headless Chromium for the test and returns its context (for chromedp
// actions) and a function that stops the browser and returns every console message and
// uncaught exception the pages produced. The browser stops when the test ends in any case.
func Open(t testing.TB, width, height int) (context.Context, func() []string) {
	t.Helper()
	exe := Chromium(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	actx, acancel := chromedp.NewExecAllocator(ctx, chromedp.ExecPath(exe), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-extensions", true), chromedp.Flag("disable-background-networking", true),
		chromedp.WindowSize(width, height))
	bctx, bcancel := chromedp.NewContext(actx)
	stop := func() { bcancel(); acancel(); cancel() }
	t.Cleanup(stop)
	if err := chromedp.Listen(bctx, func(ev any) {}); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	var mu sync.Mutex
	var console []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		for m, err := range chromedp.Console(bctx) {
			if err != nil {
				return
			}
			mu.Lock()
			console = append(console, m.String())
			mu.Unlock()
		}
	}()
	return bctx, func() []string {
		_, _ = chromedp.Run(bctx, chromedp.Evaluate[chromedp.Void](`0`))
		time.Sleep(200 * time.Millisecond)
		stop()
		<-done
		mu.Lock()
		defer mu.Unlock()
		return console
	}
}
