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
	"syscall"
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
	if p, ok := onPath(); ok {
		return p
	}
	// Test binaries of several packages run at once, and each may find no browser: one installs
	// while the others wait on a lock file, then find it on PATH.
	unlock, err := lockInstall()
	if err != nil {
		t.Fatalf("locking the browser installation: %v", err)
	}
	defer unlock()
	if p, ok := onPath(); ok {
		return p
	}
	t.Log("chromium not found on PATH: installing the Debian package")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	// apt waits for another apt or dpkg process (an unattended upgrade) instead of failing.
	wait := []string{"-o", "DPkg::Lock::Timeout=300"}
	for _, args := range [][]string{{"update"}, {"install", "-y", "--no-install-recommends", "chromium"}} {
		cmd := exec.CommandContext(ctx, "apt-get", append(wait, args...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("apt-get %s: %v\n%s\n(set FENCEBENCH_NO_BROWSER=1 to skip the browser test)", strings.Join(args, " "), err, out)
		}
	}
	p, ok := onPath()
	if !ok {
		t.Fatal("chromium installed but not on PATH")
	}
	return p
}

func onPath() (string, bool) {
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// lockInstall takes an exclusive lock on a file in the temporary folder, shared by every
// process on the machine, and returns its release.
func lockInstall() (func(), error) {
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "fencebench-browser-install.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		_ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
		f.Close()
	}, nil
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
