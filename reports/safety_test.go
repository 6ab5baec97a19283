package reports

import (
	"bytes"
	"encoding/xml"
	"os"
	"path/filepath"
	"testing"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
)

func TestStoreCredentialsRedacted(t *testing.T) {
	run := synthRun()
	run.Store.Endpoint = "https://AKIAEXAMPLE:s3cr3t@s3.example.com:9000"
	dir := t.TempDir()
	writeRun(t, dir, run)
	for _, f := range []string{"index.html", "junit.xml", "summary.json"} {
		b, _ := os.ReadFile(filepath.Join(dir, f))
		if bytes.Contains(b, []byte("s3cr3t")) || bytes.Contains(b, []byte("AKIAEXAMPLE")) {
			t.Errorf("%s shows the endpoint's user information", f)
		}
		if !bytes.Contains(b, []byte("s3.example.com")) {
			t.Errorf("%s lacks the endpoint host", f)
		}
	}
}

const (
	xssScript = `<script>alert(1)</script>`
	xssImg    = `"><img src=x onerror=alert(2)>`
)

// xssRun puts markup everywhere untrusted text can reach a page.
func xssRun() *outcome.Summary {
	run := synthRun()
	c := run.Cells[0]
	c.Description = "desc " + xssImg
	c.Result.Narrative = "narrative " + xssScript
	c.Result.Reasons = append(c.Result.Reasons, "reason "+xssScript)
	c.Result.Invariants[0].Narrative = "inv " + xssScript
	c.Error = "harness " + xssScript
	c.Rerun = "fencebench run --scenario '" + xssImg + "'"
	c.Files = append(c.Files, `x"><script>alert(1)</script>.log`)
	for i := range c.Events {
		e := &c.Events[i]
		if e.Key != "" {
			e.Key = "key/" + xssScript
		}
		if e.Kind == history.Fenced || e.Kind == history.CAS {
			e.Err = "err " + xssScript
		}
		if e.Kind == history.FaultStart || e.Kind == history.FaultEnd {
			e.Detail = "fault " + xssImg
		}
		if e.Writer == "b" {
			e.Writer = `b</script><script>alert(1)</script>`
		}
	}
	for i := range c.Ledger {
		c.Ledger[i].Key = "key/" + xssScript
		if c.Ledger[i].Rule != "" {
			c.Ledger[i].Rule = "rule " + xssImg
		}
		c.Ledger[i].Err = "ledger " + xssScript
	}
	c.Result.Attestation[1].Name = "rule " + xssImg
	run.Cells[1].Description = c.Description
	run.Store.Server = "MinIO " + xssScript
	run.Command = "fencebench " + xssImg
	run.Cells[2].Result.Reasons = []string{"survived " + xssScript}
	return run
}

func TestUntrustedTextIsInert(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "run-1")
	writeRun(t, dir, xssRun())
	if err := WriteTrend(root); err != nil {
		t.Fatal(err)
	}
	pages := map[string][]byte{}
	for _, p := range []string{"run-1/index.html", "run-1/partitioned-primary/report.html",
		"run-1/partitioned-primary--restore-before-claim/report.html", "index.html"} {
		b, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			t.Fatal(err)
		}
		pages[p] = b
		for _, raw := range []string{"<script>alert", "<img src=x", "</script><script>", `"><img`, "ZgotmplZ"} {
			if bytes.Contains(b, []byte(raw)) {
				i := bytes.Index(b, []byte(raw))
				t.Errorf("%s: raw %q at %q", p, raw, b[max(i-80, 0):min(i+80, len(b))])
			}
		}
	}
	cell := pages["run-1/partitioned-primary/report.html"]
	for _, esc := range []string{
		"&lt;script&gt;alert(1)&lt;/script&gt;", // text and attribute context
		"&#34;&gt;&lt;img src=x onerror=alert(2)&gt;",
		`\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e`, // the JSON of the hover script
	} {
		if !bytes.Contains(cell, []byte(esc)) {
			t.Errorf("cell page lacks the escaped form %q", esc)
		}
	}
	idx := pages["run-1/index.html"]
	for _, esc := range []string{"MinIO &lt;script&gt;alert(1)&lt;/script&gt;", "desc &#34;&gt;&lt;img src=x onerror=alert(2)&gt;"} {
		if !bytes.Contains(idx, []byte(esc)) {
			t.Errorf("index lacks the escaped form %q", esc)
		}
	}
	junit, _ := os.ReadFile(filepath.Join(dir, "junit.xml"))
	if bytes.Contains(junit, []byte("<script>")) {
		t.Error("junit.xml holds raw markup")
	}
	if err := xml.Unmarshal(junit, new(any)); err != nil {
		t.Errorf("junit.xml with markup in it does not parse: %v", err)
	}
}

type xmlSuites struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
	Skipped  int `xml:"skipped,attr"`
	Suites   []struct {
		Name     string `xml:"name,attr"`
		Tests    int    `xml:"tests,attr"`
		Failures int    `xml:"failures,attr"`
		Errors   int    `xml:"errors,attr"`
		Skipped  int    `xml:"skipped,attr"`
		Props    []struct {
			Name  string `xml:"name,attr"`
			Value string `xml:"value,attr"`
		} `xml:"properties>property"`
		Cases []struct {
			Name      string `xml:"name,attr"`
			Classname string `xml:"classname,attr"`
			Failure   *struct {
				Message string `xml:"message,attr"`
				Type    string `xml:"type,attr"`
				Text    string `xml:",chardata"`
			} `xml:"failure"`
			Error *struct {
				Message string `xml:"message,attr"`
				Text    string `xml:",chardata"`
			} `xml:"error"`
			Skipped *struct {
				Message string `xml:"message,attr"`
			} `xml:"skipped"`
			SystemOut string `xml:"system-out"`
		} `xml:"testcase"`
	} `xml:"testsuite"`
}
