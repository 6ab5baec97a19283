package reports

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/outcome"
)

// hostileWitness is a witness whose values and ETags a store chose.
func hostileWitness() *checker.Witness {
	return &checker.Witness{Key: "fence__<b>", Initial: "any state", Of: 401, Minimal: true,
		Why: "op 2 read <script>alert(3)</script> after op 1's CAS had completed",
		Ops: []checker.WitnessOp{
			{N: 1, ID: 17, Client: "writer 1", Invoke: time.Millisecond, Complete: 2 * time.Millisecond, Request: "PUT If-Match:e0",
				Answer: "ok", ETag: `"><img src=x>`, Value: "value=6"},
			{N: 2, ID: 23, Client: "writer <2>", Invoke: 3 * time.Millisecond, Complete: 4 * time.Millisecond, Request: "GET",
				Answer: "ok", ETag: "e0", Value: "<script>alert(1)</script>"},
		}}
}

func wantWitnessTable(t *testing.T, page string) {
	t.Helper()
	for _, want := range []string{"Witness: 2 of 401 operations", "<code>fence__&lt;b&gt;</code>", "&lt;script&gt;alert(1)&lt;/script&gt;",
		"&#34;&gt;&lt;img src=x&gt;", "writer &lt;2&gt;", "0.003000s", "<b>Why:</b> op 2 read &lt;script&gt;alert(3)", "PUT If-Match:e0"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>alert", "<img src=x", "fence__<b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
}

// TestCertificationPageWitness: a probe's witness is a table on the certification page, its
// values escaped.
func TestCertificationPageWitness(t *testing.T) {
	var b bytes.Buffer
	err := WriteCertification(&b, Certification{Title: "S3", Verdict: checker.Fail, Summary: "NOT CERTIFIED: B11",
		Rows: []CertificationRow{{Client: "minio-go", ID: "B11", Class: "HARD", Verdict: checker.Fail, VerdictLabel: "FAIL",
			Observed: "not linearizable", Witness: hostileWitness()}}})
	if err != nil {
		t.Fatal(err)
	}
	wantWitnessTable(t, b.String())
}

// TestCellWitness: StoreLinearizable's witness is a table in the cell report's invariant
// section, its values escaped.
func TestCellWitness(t *testing.T) {
	c := simpleCell("lying-store", "lying-store", "correct", false, nil, checker.Fail, nil)
	c.Result.Invariants = append(c.Result.Invariants, checker.InvariantResult{Name: checker.StoreLinearizable,
		Status: checker.Fail, Explanation: "not linearizable", Narrative: "no order fits", Witness: hostileWitness()})
	dir := t.TempDir()
	writeRun(t, dir, &outcome.Summary{RunID: "r", Cells: []*outcome.CellResult{c}})
	b, err := os.ReadFile(filepath.Join(dir, "lying-store", "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	i := strings.Index(page, `id="inv-StoreLinearizable"`)
	if i < 0 {
		t.Fatal("no StoreLinearizable row")
	}
	wantWitnessTable(t, page[i:])
}
