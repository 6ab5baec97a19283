package reports

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/outcome"
)

// TestComparison: rows where the stores disagree are marked (in the page and the JSON), a
// store without a result reads "not run", run cells link to their pages, and everything the
// stores or the scenarios said is escaped.
func TestComparison(t *testing.T) {
	c := Comparison{Kind: "certify", ExitCode: 1, Stores: []ComparedStore{
		{Name: "minio", Server: "MinIO RELEASE.2025-07-23T15-54-02Z", Verdict: checker.Pass, Report: "minio/certify.html"},
		{Name: "<b>gw</b>", Verdict: checker.Fail, Summary: `NOT CERTIFIED <script>alert(1)</script>`}}}
	c.Set("A1 (minio-go)", "create refused", 0, ComparedCell{Verdict: checker.Pass, Label: "pass"})
	c.Set("A1 (minio-go)", "create refused", 1, ComparedCell{Verdict: checker.Pass, Label: "pass"})
	c.Set("B9 (minio-go)", "race", 0, ComparedCell{Verdict: checker.Pass, Label: "pass"})
	c.Set("B9 (minio-go)", "race", 1, ComparedCell{Verdict: checker.Fail, Label: "fail", Note: `"two" <winners>`})
	c.Set("C14 (minio-go)", "", 1, ComparedCell{Verdict: "info", Label: "info"})
	c.Set("E19 (minio-go)", "", 0, ComparedCell{Verdict: "info", Label: "info", Detail: "honoured=false"})
	c.Set("E19 (minio-go)", "", 1, ComparedCell{Verdict: "info", Label: "info", Detail: "honoured=true"})
	dir := t.TempDir()
	if err := WriteComparison(dir, c); err != nil {
		t.Fatal(err)
	}
	var got Comparison
	b, _ := os.ReadFile(filepath.Join(dir, "compare.json"))
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	differs := map[string]bool{}
	for _, r := range got.Rows {
		differs[r.ID] = r.Differs
	}
	if differs["A1 (minio-go)"] || !differs["B9 (minio-go)"] || !differs["C14 (minio-go)"] || !differs["E19 (minio-go)"] || got.Differing != 3 {
		t.Errorf("differs %v, count %d; want B9, C14 and E19 only", differs, got.Differing)
	}
	if got.Rows[2].Cells[0].Label != notRun {
		t.Errorf("missing cell reads %q, want %q", got.Rows[2].Cells[0].Label, notRun)
	}
	html, _ := os.ReadFile(filepath.Join(dir, "compare.html"))
	page := string(html)
	for _, bad := range []string{"<script>alert", "<b>gw</b>", `"two" <winners>`} {
		if strings.Contains(page, bad) {
			t.Errorf("compare.html holds unescaped %q", bad)
		}
	}
	if n := strings.Count(page, `class="differs"`); n != 3 {
		t.Errorf("%d highlighted rows, want 3", n)
	}
	if n := strings.Count(page, "MinIO RELEASE.2025-07-23T15-54-02Z"); n != 2 {
		t.Errorf("the store's server is named %d times, want 2 (its row and its column)", n)
	}
	if !strings.Contains(page, `href="minio/certify.html"`) {
		t.Errorf("the store's report is not linked")
	}

	run := Comparison{Kind: "run", Stores: []ComparedStore{{Name: "a"}, {Name: "b"}}}
	run.AddRun(0, "a", &outcome.Summary{Cells: []*outcome.CellResult{{ID: "steady", Verdict: checker.Pass}}})
	run.AddRun(1, "b", &outcome.Summary{Cells: []*outcome.CellResult{{ID: "steady", Verdict: checker.Fail,
		StoreUnsafe: &outcome.StoreUnsafe{Witness: "w"}}}})
	run.Finish()
	if r := run.Rows[0]; !r.Differs || r.Cells[1].Label != labelStoreUnsafe || r.Cells[1].Link != "b/steady/report.html" {
		t.Errorf("run row %+v", r)
	}
}

// TestComparisonStoreCards: a store's card shows how long it took, what it enforces, what it
// got wrong with the witness, and its hand checks with their steps and judgements, all
// escaped; a store without any of them has no card.
func TestComparisonStoreCards(t *testing.T) {
	c := Comparison{Kind: "certify", ExitCode: 1, Stores: []ComparedStore{
		{Name: "gw", Server: "versitygw v1.8.0", Verdict: checker.Fail, Duration: 20 * time.Second,
			Enforces: []string{"A1 If-None-Match: * refused"},
			Wrong:    []StoreFinding{{Row: "B11 (aws-sdk)", Verdict: checker.Fail, Seen: "not linearizable", Witness: "op 1 <GET> body v2 ETag E1"}},
			Checks: []HandCheck{{Finding: "B11: torn read", Judgement: StoreProperty, Why: "a GET returned <two> versions",
				Steps: []string{`GET /b/k  ->  200 body "<script>x</script>"`}}}},
		{Name: "plain"}}}
	c.Set("A1 (minio-go)", "", 0, ComparedCell{Verdict: checker.Pass, Label: "pass"})
	dir := t.TempDir()
	if err := WriteComparison(dir, c); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "compare.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	for _, want := range []string{`id="store-gw"`, "took 20s", "A1 If-None-Match: * refused", "B11 (aws-sdk)", "op 1 &lt;GET&gt; body v2 ETag E1",
		"property of the store", "a GET returned &lt;two&gt; versions", "&lt;script&gt;x&lt;/script&gt;"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	if strings.Contains(page, "<script>x") || strings.Contains(page, `id="store-plain"`) {
		t.Errorf("unescaped content, or a card for a store with nothing to show")
	}
}

// TestComparisonCatalogue gives each certified store the catalogue's verdict from a run of the
// same stores: the cells that were not a pass, linked through the run's folder, and a meaning
// that tells a lost write from a bug the store hid, a pre-flight refusal and a green catalogue
// on a refused store.
func TestComparisonCatalogue(t *testing.T) {
	c := Comparison{Kind: "certify", ExitCode: 1, Stores: []ComparedStore{
		{Name: "pin", Verdict: checker.Pass}, {Name: "front", Verdict: checker.Fail, Summary: "B9 failed"},
		{Name: "old", Verdict: checker.Fail, Summary: "A5 failed"}, {Name: "quiet", Verdict: checker.Fail, Summary: "B11 failed"},
		{Name: "absent", Verdict: checker.Pass}}}
	run := Comparison{Kind: "run", Stores: []ComparedStore{
		{Name: "pin", Verdict: checker.Pass, Summary: "2 cells: 2 pass"}, {Name: "front", Verdict: checker.Fail, Summary: "2 cells: 2 fail"},
		{Name: "old", Verdict: checker.Fail, Summary: "2 cells: 2 fail"}, {Name: "quiet", Verdict: checker.Pass, Summary: "2 cells: 2 pass"}}}
	pass := ComparedCell{Verdict: checker.Pass, Label: "pass"}
	killed := ComparedCell{Verdict: checker.Pass, Label: labelKilled}
	unsafe := ComparedCell{Verdict: checker.Fail, Label: labelStoreUnsafe, Note: "A5 <created>"}
	run.Set("double-takeover", "", 0, pass)
	run.Set("double-takeover", "", 1, ComparedCell{Verdict: checker.Fail, Label: "fail", Note: "NoAckedWriteLoss: op 3 <lost>", Link: "front/double-takeover/report.html"})
	run.Set("double-takeover", "", 2, unsafe)
	run.Set("double-takeover", "", 3, pass)
	run.Set("double-takeover--no-sweep", "", 0, killed)
	run.Set("double-takeover--no-sweep", "", 1, ComparedCell{Verdict: checker.Fail, Label: labelSurvived})
	run.Set("double-takeover--no-sweep", "", 2, unsafe)
	run.Set("double-takeover--no-sweep", "", 3, killed)
	c.AddCatalogue(run, "run-1")
	want := []struct {
		red     int
		meaning string
	}{{0, "every cell passed: the correct protocol"}, {2, "1 correct-protocol cell(s) failed (double-takeover)"},
		{2, "the run's pre-flight refused the store: 2 of its 2 cells were refused without running"}, {0, "the certification refused this store (B11 failed)"}}
	for i, w := range want {
		cat := c.Stores[i].Catalogue
		if cat == nil || len(cat.Red) != w.red || !strings.Contains(cat.Meaning, w.meaning) || cat.Page != "run-1/compare.html" {
			t.Errorf("%s: catalogue %+v, want %d red and a meaning with %q", c.Stores[i].Name, cat, w.red, w.meaning)
		}
	}
	if m := c.Stores[1].Catalogue.Meaning; !strings.Contains(m, "1 kill cell(s) were not killed as declared (double-takeover--no-sweep)") {
		t.Errorf("front: the survived kill is not said: %s", m)
	}
	if l := c.Stores[1].Catalogue.Red[0].Link; l != "run-1/front/double-takeover/report.html" {
		t.Errorf("front: link %q", l)
	}
	if c.Stores[4].Catalogue != nil {
		t.Errorf("a store the run did not include was given a catalogue")
	}
	dir := t.TempDir()
	if err := WriteComparison(dir, c); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "compare.html"))
	page := string(b)
	for _, s := range []string{"the catalogue on this store", "NoAckedWriteLoss: op 3 &lt;lost&gt;", `href="run-1/front/double-takeover/report.html"`, `href="run-1/compare.html"`} {
		if !strings.Contains(page, s) {
			t.Errorf("the page lacks %q", s)
		}
	}
	if strings.Contains(page, "<lost>") {
		t.Errorf("unescaped witness on the page")
	}
}
