package reports

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"flag"
	"github.com/fencebench/fencebench/outcome"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// Wall-clock values and paths vary between runs of the bench; the golden files hold
// placeholders instead.
var scrubbers = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`"(started|duration)": "[^"]*"`), `"$1": "<scrubbed>"`},
	{regexp.MustCompile(`\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d(\.\d+)?( UTC|Z)?`), `<time>`},
	{regexp.MustCompile(`(/tmp|/var|/home|/root|/work)/[^"\s]*`), `<path>`},
}

func scrub(b []byte) []byte {
	for _, s := range scrubbers {
		b = s.re.ReplaceAll(b, []byte(s.with))
	}
	return b
}

func golden(t *testing.T, name string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(scrub(got), '\n')
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./reports -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < max(len(gl), len(wl)); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\ngot  %s\nwant %s\n(run with -update after checking the change)", path, i+1, g, w)
			}
		}
	}
}

func TestViewGolden(t *testing.T) {
	run := synthRun()
	golden(t, "index", buildView(run))
	golden(t, "cell-takeover", buildCellView(run.RunID, run.Cells[0]))
	golden(t, "cell-survived", buildCellView(run.RunID, run.Cells[2]))
}

// TestViewContent pins down what the golden files should show, so that an -update cannot
// silently accept a wrong page.
func TestViewContent(t *testing.T) {
	run := synthRun()
	v := buildView(run)
	if v.Banner.Class != "fail" || !strings.Contains(v.Banner.Text, "FAILED") {
		t.Errorf("banner: got %+v, want a fail banner", v.Banner)
	}
	want := totals{Cells: 6, Pass: 2, Fail: 2, Inconclusive: 1, Error: 1, Kills: 2, Killed: 1, Survived: 1, Acked: 15, Events: v.Totals.Events}
	if v.Totals != want {
		t.Errorf("totals: got %+v want %+v", v.Totals, want)
	}
	if got := strings.Join(v.Variants, ","); got != "no-sweep,restore-before-claim" {
		t.Errorf("matrix columns: got %s", got)
	}
	if len(v.Rows) != 4 {
		t.Fatalf("rows: got %d want 4 (one per scenario)", len(v.Rows))
	}
	pp := v.Rows[0]
	if pp.Scenario != "partitioned-primary" || len(pp.Main) != 1 || pp.Main[0].Label != "fail" {
		t.Errorf("partitioned-primary row: got %+v", pp)
	}
	if pp.Matrix[0] == nil || pp.Matrix[0].Label != labelKilled || pp.Matrix[1] == nil || pp.Matrix[1].Label != labelSurvived {
		t.Errorf("kill matrix: got %+v %+v, want killed and SURVIVED", pp.Matrix[0], pp.Matrix[1])
	}
	if v.Rows[1].Matrix[0] != nil {
		t.Errorf("steady-state has no kill cells, got %+v", v.Rows[1].Matrix[0])
	}
	if pp.Main[0].Href != "partitioned-primary/report.html" {
		t.Errorf("href: got %s", pp.Main[0].Href)
	}

	c := buildCellView(run.RunID, run.Cells[0])
	tl := c.Timeline
	var lanes []string
	for _, l := range tl.Lanes {
		lanes = append(lanes, l.Writer)
	}
	if got := strings.Join(lanes, ","); got != "a,b,auditor" {
		t.Errorf("lanes: got %s want a,b,auditor", got)
	}
	if len(tl.Faults) != 1 || !strings.Contains(tl.Faults[0].Title, "partition-a on a") {
		t.Errorf("fault windows: got %+v", tl.Faults)
	}
	if len(tl.Paused) != 1 {
		t.Errorf("paused windows: got %d want 1", len(tl.Paused))
	}
	var anchors int
	for _, m := range tl.Hot {
		if m.ID == "first-violation" {
			anchors++
			if !strings.Contains(m.Title, " claim by b at 0.100s") {
				t.Errorf("first violation: got %q, want the earliest counterexample event of NoAckedWriteLoss (b's claim)", m.Title)
			}
		}
	}
	if anchors != 1 || tl.Violation == nil {
		t.Errorf("first-violation anchors: got %d (line %v), want 1", anchors, tl.Violation)
	}
	if len(tl.Hot) != 4 {
		t.Errorf("counterexample marks: got %d want 4 (distinct events of both failing invariants)", len(tl.Hot))
	}
	kinds := map[string]bool{}
	for _, m := range tl.Marks {
		kinds[strings.Fields(m.Class)[1]+" "+strings.Fields(m.Class)[2]] = true
	}
	for _, k := range []string{"k-cas o-fail", "k-cas o-amb", "k-own o-ok", "k-term o-ok", "k-read o-fail", "k-seg o-ok", "k-life o-ok"} {
		if !kinds[k] {
			t.Errorf("no mark %q among %v", k, kinds)
		}
	}
	if c.Latency.Count != 10 || c.Latency.Max != "15.0ms" {
		t.Errorf("ack latency: got count %d max %s, want 10 and 15.0ms", c.Latency.Count, c.Latency.Max)
	}
	if c.Faults.Rules[0].Rule != "drop-cas-response" || c.Faults.Rules[0].Count != 2 {
		t.Errorf("rules: got %+v", c.Faults.Rules)
	}
	row := func(tab opTable, op string) map[string]int {
		for _, r := range tab.Rows {
			if r.Op == op {
				m := map[string]int{}
				for i, col := range tab.Columns {
					m[col] = r.Counts[i]
				}
				return m
			}
		}
		return nil
	}
	if got := row(c.Requests, "put-if-absent"); got[col2xx] != 2 || got[col412] != 1 {
		t.Errorf("client put-if-absent: got %v want 2xx 2, 412 1", got)
	}
	if got := row(c.Requests, "get"); got[colAmbiguous] != 1 {
		t.Errorf("client get: got %v want 1 ambiguous", got)
	}
	if got := row(c.StoreSide, "put-if-match"); got[colAmbiguous] != 2 || got[col2xx] != 1 {
		t.Errorf("ledger put-if-match: got %v want 2 ambiguous (answers lost), 1 2xx", got)
	}
	if got := row(c.StoreSide, "get"); got[colInjected] != 1 {
		t.Errorf("ledger get: got %v want 1 injected", got)
	}
	if got := row(c.StoreSide, "delete-many"); got[col2xx] != 1 {
		t.Errorf("ledger delete-many: got %v", got)
	}
	if got := row(c.StoreSide, "list"); got[col2xx] != 1 {
		t.Errorf("ledger list: got %v", got)
	}
	var names []string
	for _, f := range c.Files {
		names = append(names, f.Name)
	}
	if got := strings.Join(names, ","); got != "scenario.yaml,history.jsonl,ledger.jsonl,result.json,store.log" {
		t.Errorf("files: got %s", got)
	}
	if c.Invariants[0].Events[0].Anchor != "ev-first" {
		t.Errorf("counterexample table does not mark the first violation: %+v", c.Invariants[0].Events[0])
	}
}

func TestAckLatencyPercentiles(t *testing.T) {
	var l eventLog
	for i := 1; i <= 100; i++ {
		l.add(history.Event{Invoke: ms(i), Writer: "a", Kind: history.Op, Ops: []int64{int64(i)}})
		l.add(history.Event{Invoke: ms(i), Complete: ms(i) + ms(i), Writer: "a", Kind: history.Ack, Ops: []int64{int64(i)}})
	}
	l.add(history.Event{Invoke: ms(200), Complete: ms(201), Writer: "a", Kind: history.Ack, Ops: []int64{999}})
	v := ackLatency(l.ev, ms(200))
	if v.Count != 100 || v.Unmatched != 1 {
		t.Fatalf("count %d unmatched %d, want 100 and 1", v.Count, v.Unmatched)
	}
	if v.P50 != "50.0ms" || v.P90 != "90.0ms" || v.P99 != "99.0ms" || v.Max != "100.0ms" {
		t.Errorf("percentiles: got p50 %s p90 %s p99 %s max %s", v.P50, v.P90, v.P99, v.Max)
	}
	if v.Plot.Empty || v.Plot.P50 == "" || v.Plot.Max == "" {
		t.Errorf("plot is empty: %+v", v.Plot)
	}
}

func writeRun(t *testing.T, dir string, run *outcome.Summary) {
	t.Helper()
	if err := Write(dir, run); err != nil {
		t.Fatal(err)
	}
}

func TestWriteLayout(t *testing.T) {
	dir := t.TempDir()
	run := synthRun()
	writeRun(t, dir, run)
	for _, f := range []string{"index.html", "junit.xml", "summary.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
	for _, c := range run.Cells {
		b, err := os.ReadFile(filepath.Join(dir, c.ID, "report.html"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(b, []byte(`<svg id="timeline"`)) {
			t.Errorf("%s: no timeline", c.ID)
		}
	}
	idx, _ := os.ReadFile(filepath.Join(dir, "index.html"))
	for _, c := range run.Cells {
		if !bytes.Contains(idx, []byte(`href="`+c.ID+`/report.html"`)) {
			t.Errorf("index has no link to %s", c.ID)
		}
	}
	for _, s := range []string{"http://127.0.0.1:9000", "MinIO RELEASE.2025-01-01", "v0.1.0-test", `id="verdict-matrix"`, "SURVIVED", "killed"} {
		if !bytes.Contains(idx, []byte(s)) {
			t.Errorf("index lacks %q", s)
		}
	}
	cell, _ := os.ReadFile(filepath.Join(dir, "partitioned-primary", "report.html"))
	for _, s := range []string{`id="first-violation"`, `href="#first-violation"`, "--seed 42", `href="history.jsonl"`, `href="store.log"`} {
		if !bytes.Contains(cell, []byte(s)) {
			t.Errorf("cell page lacks %q", s)
		}
	}
	for _, page := range [][]byte{idx, cell} {
		if bytes.Contains(page, []byte("ZgotmplZ")) {
			t.Error("html/template rejected a value as unsafe for its context (ZgotmplZ)")
		}
		for _, ext := range []string{`src="http`, `href="http`, "@import", "url(http", "<link "} {
			if bytes.Contains(page, []byte(ext)) {
				t.Errorf("page references an external resource: %q", ext)
			}
		}
	}
}

func TestWriteRejectsUnsafeCellIDs(t *testing.T) {
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`} {
		run := synthRun()
		run.Cells[0].ID = id
		if err := Write(t.TempDir(), run); err == nil {
			t.Errorf("cell id %q: got nil error, want a refusal", id)
		}
	}
	run := synthRun()
	run.Cells[1].ID = run.Cells[0].ID
	if err := Write(t.TempDir(), run); err == nil || !strings.Contains(err.Error(), "duplicate") {
		t.Errorf("duplicate cell ids: got %v", err)
	}
}

func TestJUnit(t *testing.T) {
	dir := t.TempDir()
	run := synthRun()
	writeRun(t, dir, run)
	b, err := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var doc xmlSuites
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("junit.xml does not parse: %v", err)
	}
	if doc.Tests != 6 || doc.Failures != 2 || doc.Errors != 1 || doc.Skipped != 1 {
		t.Errorf("totals: got tests %d failures %d errors %d skipped %d, want 6 2 1 1", doc.Tests, doc.Failures, doc.Errors, doc.Skipped)
	}
	if len(doc.Suites) != 1 {
		t.Fatalf("suites: got %d want 1", len(doc.Suites))
	}
	s := doc.Suites[0]
	if s.Tests != 6 || s.Failures != 2 || s.Errors != 1 || s.Skipped != 1 || len(s.Cases) != 6 {
		t.Errorf("suite: got tests %d failures %d errors %d skipped %d cases %d", s.Tests, s.Failures, s.Errors, s.Skipped, len(s.Cases))
	}
	byName := map[string]int{}
	for i, c := range s.Cases {
		byName[c.Name] = i
		if c.Classname != run.Cells[i].Scenario || c.Name != run.Cells[i].ID {
			t.Errorf("case %d: got %s/%s want %s/%s", i, c.Classname, c.Name, run.Cells[i].Scenario, run.Cells[i].ID)
		}
	}
	fail := s.Cases[byName["partitioned-primary"]]
	if fail.Failure == nil || !strings.Contains(fail.Failure.Text, "op 9, acknowledged by a") ||
		!strings.Contains(fail.Failure.Text, "NoAckedWriteLoss failed") || !strings.Contains(fail.Failure.Text, "--seed 42") {
		t.Errorf("failing cell: got %+v, want a failure with reasons, narrative and rerun command", fail.Failure)
	}
	surv := s.Cases[byName["partitioned-primary--restore-before-claim"]]
	if surv.Failure == nil || surv.Failure.Type != "variant-survived" || !strings.Contains(surv.Failure.Message, "survived") {
		t.Errorf("surviving variant: got %+v", surv.Failure)
	}
	if k := s.Cases[byName["partitioned-primary--no-sweep"]]; k.Failure != nil || k.Error != nil || k.Skipped != nil {
		t.Errorf("killed variant must pass, got %+v", k)
	}
	if inc := s.Cases[byName["flaky-store"]]; inc.Skipped == nil || !strings.Contains(inc.Skipped.Message, "never fired") {
		t.Errorf("inconclusive cell must be skipped with its reason, got %+v", inc.Skipped)
	}
	if e := s.Cases[byName["lying-store"]]; e.Error == nil || !strings.Contains(e.Error.Message, "store died") {
		t.Errorf("harness error: got %+v", e.Error)
	}
	props := map[string]string{}
	for _, p := range s.Props {
		props[p.Name] = p.Value
	}
	if props["store.server"] != "MinIO RELEASE.2025-01-01" || props["bench_version"] != "v0.1.0-test" {
		t.Errorf("properties: got %v", props)
	}
}

func TestSummaryRoundTrip(t *testing.T) {
	dir := t.TempDir()
	run := synthRun()
	run.Cells[0].Seed = 1<<64 - 3 // beyond what a double holds exactly
	writeRun(t, dir, run)
	got, err := ReadSummary(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	want := summarize(run)
	if !reflect.DeepEqual(got, want) {
		gj, _ := json.MarshalIndent(got, "", " ")
		wj, _ := json.MarshalIndent(want, "", " ")
		t.Fatalf("summary round trip:\ngot  %s\nwant %s", gj, wj)
	}
	if got.Cells[0].Seed != 1<<64-3 {
		t.Errorf("seed: got %d", got.Cells[0].Seed)
	}
	if got.Verdict != checker.Error || got.Totals.Killed != 1 || got.Totals.Survived != 1 {
		t.Errorf("summary: verdict %s totals %+v", got.Verdict, got.Totals)
	}
	if got.Cells[0].Duration != 1500*time.Millisecond || got.Cells[0].Acked != 10 || len(got.Cells[0].Reasons) != 2 {
		t.Errorf("cell: got %+v", got.Cells[0])
	}
	if l := got.Cells[2].Label(); l != labelSurvived {
		t.Errorf("label of the surviving kill cell: got %s", l)
	}

	raw, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	newer := bytes.Replace(raw, []byte(`"format": 1`), []byte(`"format": 99`), 1)
	p := filepath.Join(dir, "newer.json")
	os.WriteFile(p, newer, 0o644)
	if _, err := ReadSummary(p); err == nil {
		t.Error("a summary of a newer format must be refused")
	}
}

func TestTrendShowsChangedVerdict(t *testing.T) {
	root := t.TempDir()
	older := synthRun()
	older.RunID = "run-1"
	older.Started = time.Date(2026, 1, 1, 2, 0, 0, 0, time.UTC)
	newer := synthRun()
	newer.RunID = "run-2"
	newer.Started = older.Started.Add(24 * time.Hour)
	older.Cells[3].Verdict = checker.Pass // steady-state: pass, then fail
	newer.Cells[3].Verdict = checker.Fail
	newer.Cells[3].Result.Reasons = []string{"MutualExclusion failed"}
	writeRun(t, filepath.Join(root, "run-1"), older)
	writeRun(t, filepath.Join(root, "run-2"), newer)
	os.MkdirAll(filepath.Join(root, "not-a-run"), 0o755)
	os.WriteFile(filepath.Join(root, "stray.txt"), []byte("x"), 0o644)
	if err := WriteTrend(root); err != nil {
		t.Fatal(err)
	}

	var sums []Summary
	for _, id := range []string{"run-1", "run-2"} {
		s, err := ReadSummary(filepath.Join(root, id, "summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		sums = append(sums, s)
	}
	v := buildTrend(sums)
	if len(v.Runs) != 2 || v.Runs[0].ID != "run-2" {
		t.Fatalf("runs: got %+v, want run-2 first", v.Runs)
	}
	if len(v.Changes) != 1 {
		t.Fatalf("changes: got %+v, want one", v.Changes)
	}
	ch := v.Changes[0]
	if ch.Cell != "steady-state" || ch.Run != "run-2" || ch.Prev != "run-1" || ch.From.Label != "pass" || ch.To.Label != "fail" {
		t.Errorf("change: got %+v", ch)
	}
	b, err := os.ReadFile(filepath.Join(root, "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{`class="mc changed"`, `href="run-2/steady-state/report.html"`, `href="run-1/index.html"`, "was pass in run-1"} {
		if !bytes.Contains(b, []byte(s)) {
			t.Errorf("trend page lacks %q", s)
		}
	}
	if n := bytes.Count(b, []byte(`class="mc changed"`)); n != 1 {
		t.Errorf("changed cells: got %d want 1", n)
	}
}

func TestLargeCellPageStaysSmall(t *testing.T) {
	c := bigCell(100_000)
	page, err := renderCell("big", c)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(page, []byte(`<svg id="timeline"`))
	j := bytes.Index(page[i:], []byte("</svg>"))
	svg := j
	t.Logf("100k events: page %d KB, timeline SVG %d KB", len(page)/1024, svg/1024)
	if svg > 450*1024 {
		t.Errorf("timeline SVG is %d KB for 100k events, want at most 450 KB", svg/1024)
	}
	if len(page) > 900*1024 {
		t.Errorf("page is %d KB for 100k events, want at most 900 KB", len(page)/1024)
	}
}

// A cell page says what the clients did, leaving out the counts that are zero.
func TestCellPageShowsTraffic(t *testing.T) {
	c := *synthRun().Cells[0]
	c.Traffic = &outcome.Traffic{Sent: 7, Accepted: 5, Refused: 2, Unrouted: 3}
	page, err := renderCell("traffic", &c)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(page, []byte("<b>7</b> ops sent (5 accepted, 2 refused, 3 unrouted)")) {
		t.Errorf("the page does not show the traffic counts")
	}
	if bytes.Contains(page, []byte("skipped)")) {
		t.Errorf("the page shows a zero skipped count")
	}
	c.Traffic = nil
	if page, err = renderCell("traffic", &c); err != nil || bytes.Contains(page, []byte("ops sent")) {
		t.Errorf("a cell without traffic shows traffic counts (err %v)", err)
	}
}
