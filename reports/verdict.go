package reports

import (
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/checker"
)

// badge is a verdict as a page shows it: a label and the CSS class that colours it.
type badge struct {
	Label string `json:"label"`
	Class string `json:"class"`
	Title string `json:"title,omitempty"`
	Href  string `json:"href,omitempty"`
}

// Labels of a kill-matrix cell.
const (
	labelKilled    = "killed"
	labelSurvived  = "SURVIVED"
	labelWrongKill = "wrong kill"
	// labelStoreUnsafe marks a cell refused because the store failed the pre-flight.
	labelStoreUnsafe = outcome.StoreUnsafeReason
)

func verdictOf(v checker.Verdict) checker.Verdict {
	if v == "" {
		return checker.Error
	}
	return v
}

// cellBadge is the label of a cell's final verdict. A kill cell reads killed / SURVIVED /
// inconclusive / error; a fail in which some invariant outside the variant's expected ones
// failed reads "wrong kill", because the checker caught the variant for the wrong reason.
func cellBadge(c *outcome.CellResult) badge {
	if c.StoreUnsafe != nil {
		return badge{Label: labelStoreUnsafe, Class: string(checker.Fail), Title: c.StoreUnsafe.Witness}
	}
	return verdictBadge(c.Verdict, c.Kill, wrongKill(c.Violates, failedInvariants(c.Result)), c.Result.Reasons, c.Error)
}

func verdictBadge(verdict checker.Verdict, kill, wrong bool, reasons []string, err string) badge {
	v := verdictOf(verdict)
	b := badge{Label: string(v), Class: string(v)}
	if kill {
		switch v {
		case checker.Pass:
			b.Label = labelKilled
		case checker.Fail:
			b.Label = labelSurvived
			if wrong {
				b.Label = labelWrongKill
			}
		}
	}
	if len(reasons) > 0 {
		b.Title = strings.Join(reasons, "\n")
	} else if err != "" {
		b.Title = err
	}
	return b
}

// failedInvariants names the invariants whose raw status is fail.
func failedInvariants(r checker.Result) []string {
	var out []string
	for _, ir := range r.Invariants {
		if ir.Status == checker.Fail {
			out = append(out, ir.Name)
		}
	}
	return out
}

// wrongKill reports whether a kill cell broke an invariant it was not expected to.
func wrongKill(violates, failed []string) bool {
	if len(violates) == 0 {
		return false
	}
	for _, name := range failed {
		if !slices.Contains(violates, name) {
			return true
		}
	}
	return false
}

// failed reports whether a cell counts as a failure (verdict fail or error).
func failed(v checker.Verdict) bool {
	v = verdictOf(v)
	return v == checker.Fail || v == checker.Error
}

// cellHref is the link from a run's index to a cell page.
func cellHref(id string) string { return url.PathEscape(id) + "/report.html" }

// fmtDur renders a duration for people: milliseconds below a second, seconds above.
func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "0s"
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < time.Second:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < 10*time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

// fmtAt renders a run-relative instant in seconds with millisecond precision.
func fmtAt(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// fmtSeed renders a seed as the rerun command spells it.
func fmtSeed(s uint64) string { return fmt.Sprintf("%d", s) }
