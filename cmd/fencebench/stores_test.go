package main

import (
	"bytes"
	"encoding/json"
	"image"
	"image/png"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/fencebench/fencebench/internal/browser"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
)

// TestCertifyStores certifies three stores from one stores file: the pinned MinIO, and a
// check-then-act front and an If-Match-creates front over a second MinIO. The comparison
// shows MinIO passing A5, B9 and B10, the check-then-act front failing B9 and B10, the other
// front failing A5, those rows marked as differing; the exit code is the worst (1); each
// store's report is linked; no credential is anywhere; and the page renders in Chromium.
func TestCertifyStores(t *testing.T) {
	pinned, other := externalMinIO(t), externalMinIO(t)
	cta, _ := unsafestore.Serve(t, other.Config(), &unsafestore.Options{Mode: unsafestore.CheckThenAct, Gap: 5 * time.Millisecond})
	coim, _ := unsafestore.Serve(t, other.Config(), &unsafestore.Options{Mode: unsafestore.CreateOnIfMatch})
	t.Setenv("MINIO_A_KEY", pinned.AccessKey)
	t.Setenv("MINIO_A_SECRET", pinned.SecretKey)
	t.Setenv("MINIO_B_KEY", other.AccessKey)
	t.Setenv("MINIO_B_SECRET", other.SecretKey)
	file := filepath.Join(t.TempDir(), "stores.yaml")
	yaml := "- name: pinned-minio\n  endpoint: " + pinned.Endpoint + "\n  bucket: " + pinned.Bucket +
		"\n  access_key_env: MINIO_A_KEY\n  secret_key_env: MINIO_A_SECRET\n"
	for name, ep := range map[string]string{"check-then-act": cta.Endpoint, "create-on-if-match": coim.Endpoint} {
		yaml += "- name: " + name + "\n  endpoint: " + ep + "\n  bucket: " + other.Bucket +
			"\n  addressing: path\n  access_key_env: MINIO_B_KEY\n  secret_key_env: MINIO_B_SECRET\n"
	}
	if err := os.WriteFile(file, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	code, stdout, stderr := runCLI("certify", "--stores", file, "--probes", "A5,B9,B10", "--client", "minio-go", "--keys", "3", "--out", out)
	t.Logf("stdout:\n%s\nstderr:\n%.3000s", stdout, stderr)
	if code != outcome.ExitFail {
		t.Errorf("exit %d, want %d (the worst of the stores)", code, outcome.ExitFail)
	}
	dirs, _ := filepath.Glob(filepath.Join(out, "certify-*"))
	if len(dirs) != 1 {
		t.Fatalf("result folders %v, want one", dirs)
	}
	cmp := readComparison(t, dirs[0])
	want := map[string]map[string]string{
		"pinned-minio":       {"A5": "pass", "B9": "pass", "B10": "pass"},
		"check-then-act":     {"A5": "pass", "B9": "fail", "B10": "fail"},
		"create-on-if-match": {"A5": "fail", "B9": "pass", "B10": "pass"},
	}
	for i, s := range cmp.Stores {
		for _, r := range cmp.Rows {
			id := strings.TrimSuffix(r.ID, " (minio-go)")
			if w := want[s.Name][id]; r.Cells[i].Label != w {
				t.Errorf("%s %s: %q, want %q (%s)", s.Name, r.ID, r.Cells[i].Label, w, r.Cells[i].Note)
			}
			if !r.Differs {
				t.Errorf("row %s not marked as differing", r.ID)
			}
		}
		if _, err := os.Stat(filepath.Join(dirs[0], s.Report)); err != nil || s.Report != s.Name+"/certify.html" {
			t.Errorf("%s: report %q: %v", s.Name, s.Report, err)
		}
	}
	if len(cmp.Stores) != 3 || len(cmp.Rows) != 3 || cmp.ExitCode != outcome.ExitFail {
		t.Errorf("%d stores, %d rows, exit %d", len(cmp.Stores), len(cmp.Rows), cmp.ExitCode)
	}
	noSecrets(t, out, stdout+stderr, pinned.SecretKey, other.SecretKey)
	screenshotComparison(t, filepath.Join(dirs[0], "compare.html"), cmp.Differing)
}

func readComparison(t *testing.T, dir string) reports.Comparison {
	t.Helper()
	var cmp reports.Comparison
	b, err := os.ReadFile(filepath.Join(dir, "compare.json"))
	if err == nil {
		err = json.Unmarshal(b, &cmp)
	}
	if err != nil {
		t.Fatalf("compare.json: %v", err)
	}
	return cmp
}

// noSecrets fails the test when a secret is in the output or in any file under dir.
func noSecrets(t *testing.T, dir, output string, secrets ...string) {
	t.Helper()
	for _, s := range secrets {
		if strings.Contains(output, s) {
			t.Errorf("the output holds a credential")
		}
	}
	_ = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		for _, s := range secrets {
			if err == nil && bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds a credential", p)
			}
		}
		return err
	})
}

// screenshotComparison opens the page in Chromium: the highlighted rows are there, the page
// logs nothing, and its screenshot is a real page, the highlight's colour included.
func screenshotComparison(t *testing.T, page string, differing int) {
	bctx, stop := browser.Open(t, 1400, 900)
	if err := chromedp.Do(bctx, chromedp.Navigate(browser.FileURL(page)), chromedp.WaitVisible(chromedp.CSS("#comparison"))); err != nil {
		t.Fatalf("compare.html: %v", err)
	}
	n, err := chromedp.Run(bctx, chromedp.Evaluate[int](`document.querySelectorAll("#comparison tr.differs").length`))
	if err != nil || n != differing || n == 0 {
		t.Errorf("highlighted rows in the browser: %d (%v), want %d", n, err, differing)
	}
	shot, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	p := filepath.Join(t.TempDir(), "compare.png")
	_ = os.WriteFile(p, shot, 0o644)
	t.Logf("screenshot: %s", p)
	if dir := os.Getenv("FENCEBENCH_SCREENSHOTS"); dir != "" {
		_ = os.MkdirAll(dir, 0o755)
		_ = os.WriteFile(filepath.Join(dir, "compare.png"), shot, 0o644)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	colours, highlight, failBadge := pixels(img)
	if b := img.Bounds(); b.Dx() < 800 || b.Dy() < 300 || colours < 50 || highlight < 500 || failBadge < 50 {
		t.Errorf("screenshot %dx%d: %d colours, %d highlight pixels, %d fail-badge pixels: not the comparison page",
			b.Dx(), b.Dy(), colours, highlight, failBadge)
	}
	if msgs := stop(); len(msgs) > 0 {
		t.Errorf("console messages or exceptions: %q", msgs)
	}
}

// pixels counts the distinct colours of img, its pixels of the differing rows' background
// (#fff8c5) and of the fail badge (#cf222e).
func pixels(img image.Image) (colours, highlight, failBadge int) {
	seen := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			r, g, bl = r>>8, g>>8, bl>>8
			seen[r<<16|g<<8|bl] = true
			switch {
			case r == 0xff && g == 0xf8 && bl == 0xc5:
				highlight++
			case r == 0xcf && g == 0x22 && bl == 0x2e:
				failBadge++
			}
		}
	}
	return len(seen), highlight, failBadge
}
