package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestTrendShowsWhenACertificationChanged: three nights certify store A (certified twice, then
// not) and one certifies store B; the trend page lists them newest first and marks the night
// A's verdict changed, with what it was.
func TestTrendShowsWhenACertificationChanged(t *testing.T) {
	dir := t.TempDir()
	day := time.Date(2026, 11, 1, 2, 0, 0, 0, time.UTC)
	write := func(id, server, verdict string, night int) {
		t.Helper()
		f := map[string]any{"store": map[string]string{"server": server, "endpoint": "https://s3.example", "bucket": "b"},
			"started": day.Add(time.Duration(night) * 24 * time.Hour), "verdict": verdict}
		b, _ := json.Marshal(f)
		if err := os.MkdirAll(filepath.Join(dir, id), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, id, "certify.json"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("certify-1", "A<script>", "certified", 1)
	write("certify-2", "A<script>", "certified", 2)
	write("certify-3", "B", "certified", 2)
	write("certify-4", "A<script>", "not certified", 3)
	if err := WriteTrend(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "trend.json"))
	if err != nil {
		t.Fatal(err)
	}
	var v trendView
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	if len(v.Certs) != 4 || v.Certs[0].ID != "certify-4" || !v.Certs[0].Changed || v.Certs[0].Was != "certified" {
		t.Fatalf("certifications %+v", v.Certs)
	}
	for _, c := range v.Certs[1:] {
		if c.Changed {
			t.Fatalf("%s marked changed: %+v", c.ID, v.Certs)
		}
	}
	page, err := os.ReadFile(filepath.Join(dir, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="certs-table"`, `class="cert-changed"`, "was certified", `href="certify-4/certify.html"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("trend page lacks %q", want)
		}
	}
	if strings.Contains(string(page), "A<script>") {
		t.Error("a store's name reached the page unescaped")
	}
}
