package reports

import (
	"encoding/xml"
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"strings"
	"time"

	"github.com/fencebench/fencebench/checker"
)

// JUnit XML, in the shape CI systems read (Jenkins, GitLab, GitHub test reporters): one
// testsuite per run and one testcase per cell. A failed cell carries a failure, a harness
// error an error (an infrastructure problem is not a safety violation), an inconclusive cell
// is skipped with the reason.
type junitSuites struct {
	XMLName  xml.Name     `xml:"testsuites"`
	Name     string       `xml:"name,attr"`
	Tests    int          `xml:"tests,attr"`
	Failures int          `xml:"failures,attr"`
	Errors   int          `xml:"errors,attr"`
	Skipped  int          `xml:"skipped,attr"`
	Time     string       `xml:"time,attr"`
	Suites   []junitSuite `xml:"testsuite"`
}

type junitSuite struct {
	Name       string          `xml:"name,attr"`
	ID         string          `xml:"id,attr,omitempty"`
	Tests      int             `xml:"tests,attr"`
	Failures   int             `xml:"failures,attr"`
	Errors     int             `xml:"errors,attr"`
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Timestamp  string          `xml:"timestamp,attr,omitempty"`
	Properties []junitProperty `xml:"properties>property,omitempty"`
	Cases      []junitCase     `xml:"testcase"`
}

type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

type junitCase struct {
	Name      string        `xml:"name,attr"`
	Classname string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitProblem `xml:"failure,omitempty"`
	Error     *junitProblem `xml:"error,omitempty"`
	Skipped   *junitSkipped `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitProblem struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr"`
	Text    string `xml:",chardata"`
}

type junitSkipped struct {
	Message string `xml:"message,attr"`
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// buildJUnit renders the run as JUnit XML.
func buildJUnit(run *outcome.Summary) ([]byte, error) {
	suite := junitSuite{
		Name: "fencebench",
		ID:   run.RunID,
		Time: secs(run.Duration),
	}
	if !run.Started.IsZero() {
		suite.Timestamp = run.Started.UTC().Format("2006-01-02T15:04:05")
	}
	store := storeOf(run)
	for _, p := range [][2]string{
		{"run", run.RunID}, {"bench_version", run.Version}, {"command", run.Command},
		{"store.endpoint", store.Endpoint}, {"store.server", store.Server}, {"store.stack", store.Stack},
		{"store.bucket", store.Bucket}, {"store.prefix", store.Prefix},
	} {
		if p[1] != "" {
			suite.Properties = append(suite.Properties, junitProperty{Name: p[0], Value: p[1]})
		}
	}
	for i := range run.Cells {
		c := run.Cells[i]
		tc := junitCase{Name: c.ID, Classname: c.Scenario, Time: secs(c.Duration)}
		b := cellBadge(c)
		var out strings.Builder
		fmt.Fprintf(&out, "variant: %s\nseed: %d\n", c.Variant, c.Seed)
		if c.Client != "" {
			fmt.Fprintf(&out, "client: %s\n", c.Client)
		}
		fmt.Fprintf(&out, "verdict: %s\nacked: %d\nevents: %d\nreport: %s\n", b.Label, c.Result.Acked, len(c.Events), cellHref(c.ID))
		if c.Rerun != "" {
			fmt.Fprintf(&out, "rerun: %s\n", c.Rerun)
		}
		tc.SystemOut = out.String()
		switch verdictOf(c.Verdict) {
		case checker.Fail:
			suite.Failures++
			msg := firstLine(c.Result.Reasons, "failed")
			typ := "violation"
			if c.Kill {
				typ = "variant-survived"
				if b.Label == labelWrongKill {
					typ = "variant-wrong-kill"
				}
			}
			tc.Failure = &junitProblem{Message: msg, Type: typ, Text: problemText(c)}
		case checker.Error:
			suite.Errors++
			msg := joinErr(c.Error, c.Result.Error)
			if msg == "" {
				msg = firstLine(c.Result.Reasons, "harness error")
			}
			tc.Error = &junitProblem{Message: strings.SplitN(msg, "\n", 2)[0], Type: "harness-error", Text: problemText(c)}
		case checker.Inconclusive:
			suite.Skipped++
			tc.Skipped = &junitSkipped{Message: "inconclusive: " + strings.Join(c.Result.Reasons, "; ")}
		}
		suite.Tests++
		suite.Cases = append(suite.Cases, tc)
	}
	doc := junitSuites{Name: "fencebench " + run.RunID, Tests: suite.Tests, Failures: suite.Failures, Errors: suite.Errors,
		Skipped: suite.Skipped, Time: suite.Time, Suites: []junitSuite{suite}}
	b, err := xml.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, err
	}
	return append([]byte(xml.Header), append(b, '\n')...), nil
}

func firstLine(lines []string, fallback string) string {
	if len(lines) == 0 || lines[0] == "" {
		return fallback
	}
	return lines[0]
}

// problemText is the body of a failure or error: the reasons, the narrative, the failing
// invariants with their own narratives, and the rerun command.
func problemText(c *outcome.CellResult) string {
	var b strings.Builder
	if e := joinErr(c.Error, c.Result.Error); e != "" {
		fmt.Fprintf(&b, "error: %s\n", e)
	}
	for _, r := range c.Result.Reasons {
		fmt.Fprintf(&b, "- %s\n", r)
	}
	if c.Result.Narrative != "" {
		fmt.Fprintf(&b, "\n%s\n", c.Result.Narrative)
	}
	for _, ir := range c.Result.Invariants {
		if ir.Status != checker.Fail {
			continue
		}
		fmt.Fprintf(&b, "\n%s: %s\n", ir.Name, ir.Explanation)
		if ir.Narrative != "" {
			fmt.Fprintf(&b, "  %s\n", ir.Narrative)
		}
	}
	if c.Rerun != "" {
		fmt.Fprintf(&b, "\nrerun: %s\n", c.Rerun)
	}
	return b.String()
}
