package reports

import (
	"bytes"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/checker"
)

// TestCertificationPage: the page carries the verdict's banner colour and each probe's badge,
// in the run pages' style, and escapes what the store answered.
func TestCertificationPage(t *testing.T) {
	var b bytes.Buffer
	err := WriteCertification(&b, Certification{Title: "S3 <b>", Verdict: checker.Fail, Summary: "NOT CERTIFIED: B9",
		Facts: []Fact{{Label: "command", Value: "fencebench certify <x>", Code: true}},
		Rows: []CertificationRow{{Client: "minio-go", ID: "B9", Class: "HARD", Verdict: checker.Fail, VerdictLabel: "FAIL",
			Observed: "<script>alert(1)</script>", Details: []string{"<img src=x>"}}}})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`class="banner fail"`, `<span class="v fail">FAIL</span>`, "&lt;script&gt;", "<code>fencebench certify &lt;x&gt;</code>", "<style>"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	for _, bad := range []string{"<script>", "<img", "S3 <b>"} {
		if strings.Contains(page, bad) {
			t.Errorf("the page contains %q unescaped", bad)
		}
	}
}
