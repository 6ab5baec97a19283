package reports

import (
	"io"

	"github.com/fencebench/fencebench/checker"
)

// Certification is the data of a store certification page, as plain text: the reports
// render it with the run pages' style and verdict badges without knowing the probes.
type Certification struct {
	// Title names the store in the page title.
	Title string
	// Verdict is checker.Pass, checker.Fail or checker.Inconclusive: the banner's colour.
	Verdict checker.Verdict
	// Summary is the verdict in one line.
	Summary string
	// Facts describe the store and the run, one label and value each.
	Facts []Fact
	// Note is a line shown above the results.
	Note string
	// Rows holds one row per probe and client.
	Rows []CertificationRow
}

// Fact is one label and value of a page's description; Code shows the value as code.
type Fact struct {
	Label, Value string
	Code         bool
}

// CertificationRow is one probe run with one client. Verdict is the probe's verdict
// ("pass", "fail", "error" or "info"); VerdictLabel is how the row spells it. Rate is the
// failed rounds over the rounds ("0/3"), Variation how the rounds disagreed ("" when they
// agreed), and Round which round the observation and details come from ("" when it goes
// without saying).
type CertificationRow struct {
	Client, ID, Title, Asserts, Class string
	Verdict                           checker.Verdict
	VerdictLabel                      string
	Duration, Observed                string
	// Cause, on an errored row, says in one line why the probe could not be judged, and
	// ErrorClass sorts it ("overloaded", "unsupported-header", "harness", "not-run").
	Cause, ErrorClass string
	Details           []string
	// Witness, when set, is shown as a table under the observation.
	Witness                *checker.Witness
	Rate, Variation, Round string
}

type certificationPage struct {
	Certification
	Class string
	Rows  []certificationRowView
}

type certificationRowView struct {
	CertificationRow
	Verdict badge
	Witness *witnessView
}

// WriteCertification writes a certification page: a single self-contained file, every value
// escaped by html/template.
func WriteCertification(w io.Writer, c Certification) error {
	p := certificationPage{Certification: c, Class: string(verdictOf(c.Verdict))}
	for _, r := range c.Rows {
		class := string(r.Verdict)
		if class == "info" {
			class = ""
		}
		p.Rows = append(p.Rows, certificationRowView{CertificationRow: r, Verdict: badge{Label: r.VerdictLabel, Class: class},
			Witness: toWitnessView(r.Witness)})
	}
	return pages.ExecuteTemplate(w, "certify.html.tmpl", p)
}
