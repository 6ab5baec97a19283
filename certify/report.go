package certify

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/reports"
)

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// Summary is the report's verdict in one line, with the probes that decided it.
func (r *Report) Summary() string {
	c := r.Counts()
	tally := fmt.Sprintf("%d results: %d pass, %d fail, %d info, %d error, in %v", len(r.Results), c[Pass], c[Fail], c[Info],
		c[Error], r.Duration.Round(time.Millisecond))
	switch r.Verdict {
	case Certified:
		return "CERTIFIED: every HARD probe passed with " + clientList(r.Clients) + " (" + tally + ")"
	case NotCertified:
		return "NOT CERTIFIED: HARD probes failed: " + strings.Join(r.named(Hard, Fail), ", ") + " (" + tally + ")"
	default:
		s := "INCONCLUSIVE: no HARD probe failed, but these could not be judged: " + strings.Join(r.named(Hard, Error), ", ")
		if first := r.firstCause(); first != "" {
			s += "; first cause: " + first
		}
		return s + " (" + tally + ")"
	}
}

// firstCause is the cause of the first HARD result that could not be judged, with its class
// and the probe it belongs to, or "".
func (r *Report) firstCause() string {
	for _, x := range r.Results {
		if x.Class == Hard && x.Verdict == Error && x.Cause != "" {
			return fmt.Sprintf("%s (%s) [%s] %s", x.ID, x.Client, x.ErrorClass, x.Cause)
		}
	}
	return ""
}

// CauseLine is an errored result's class and cause in one line ("[overloaded] deadline 1m0s
// exceeded after ..."), or "" for any other result.
func (x Result) CauseLine() string {
	if x.Verdict != Error || x.Cause == "" {
		return ""
	}
	if x.ErrorClass == "" {
		return oneLine(x.Cause)
	}
	return "[" + string(x.ErrorClass) + "] " + oneLine(x.Cause)
}

func clientList(cs []string) string {
	if len(cs) == 1 {
		return cs[0]
	}
	return strings.Join(cs, " and ")
}

// named lists the results of a class with a verdict as "ID (client)", or, over several
// rounds, "ID (client, failed 2 of 5 rounds)".
func (r *Report) named(c Class, v Verdict) []string {
	var out []string
	for _, x := range r.Results {
		if x.Class == c && x.Verdict == v {
			switch {
			case x.Rounds > 1 && v == Fail:
				out = append(out, fmt.Sprintf("%s (%s, failed %d of %d rounds)", x.ID, x.Client, x.Failed, x.Rounds))
			case v == Error && x.ErrorClass != "":
				out = append(out, fmt.Sprintf("%s (%s, %s)", x.ID, x.Client, x.ErrorClass))
			default:
				out = append(out, x.ID+" ("+x.Client+")")
			}
		}
	}
	return out
}

// rounds says how many rounds the report holds ("1 round", "5 rounds, fresh keys each").
func (r *Report) rounds() string {
	if r.Rounds <= 1 {
		return "1 round"
	}
	return fmt.Sprintf("%d rounds, fresh keys each", r.Rounds)
}

// bounds says the run's deadlines ("every probe run 1m0s, the whole run 4m0s").
func (r *Report) bounds() string {
	if r.ProbeTimeout == 0 && r.Timeout == 0 {
		return "none recorded"
	}
	return fmt.Sprintf("every probe run %v, the whole run %v", r.ProbeTimeout, r.Timeout)
}

// varied lists the results whose rounds disagreed as "ID (client): variation".
func (r *Report) varied() []string {
	var out []string
	for _, x := range r.Results {
		if x.Variation != "" {
			out = append(out, x.ID+" ("+x.Client+"): "+x.Variation)
		}
	}
	return out
}

// WriteText writes the report as a table, one line per probe and client, then the verdict.
// Detail lines are shown for failed and errored probes, and for all probes when verbose.
func (r *Report) WriteText(w io.Writer, verbose bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fencebench certify: %s at %s, bucket %s (stack %s)\n", r.Store.Server, r.Store.Endpoint, r.Store.Bucket, r.Store.Stack)
	fmt.Fprintf(&b, "prefix %s; clients %s; %d keys per race; racers %s; %d chain writers; %s; deadlines: %s\n\n", r.Prefix,
		strings.Join(r.Clients, ", "), r.Keys, joinInts(r.Racers), r.Writers, r.rounds(), r.bounds())
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tPROBE\tCLASS\tVERDICT\tFAILED\tTIME\tOBSERVED")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%v\t%s\n", x.Client, x.ID, x.Class, verdictText(x), x.Rate(),
			x.Duration.Round(time.Millisecond), oneLine(x.Observed))
		if x.Variation != "" {
			fmt.Fprintf(tw, "\t\t\t\t\t\t  %s\n", x.Variation)
		}
		if c := x.CauseLine(); c != "" && c != "["+string(x.ErrorClass)+"] "+oneLine(x.Observed) {
			fmt.Fprintf(tw, "\t\t\t\t\t\t  cause %s\n", c)
		} else if c != "" {
			fmt.Fprintf(tw, "\t\t\t\t\t\t  class %s\n", x.ErrorClass)
		}
		if verbose || x.Verdict == Fail || x.Verdict == Error {
			if n := x.roundNote(); n != "" {
				fmt.Fprintf(tw, "\t\t\t\t\t\t  %s:\n", n)
			}
			for _, d := range x.Details {
				if d == "FAIL: "+x.Observed || d == "ERROR: "+x.Observed {
					continue // the observation already says it
				}
				fmt.Fprintf(tw, "\t\t\t\t\t\t  %s\n", oneLine(d))
			}
		}
		if x.Witness != nil && x.Verdict == Fail {
			for _, l := range witnessLines(x.Witness) {
				fmt.Fprintf(tw, "\t\t\t\t\t\t  %s\n", l)
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if infoFails := r.named(Informational, Fail); len(infoFails) > 0 {
		fmt.Fprintf(&b, "\ninformational probes that failed (they do not decide the verdict): %s\n", strings.Join(infoFails, ", "))
	}
	if v := r.varied(); len(v) > 0 {
		fmt.Fprintf(&b, "\nrounds that disagreed:\n  %s\n", strings.Join(v, "\n  "))
	}
	if r.Cleanup != "" {
		fmt.Fprintf(&b, "\ncleanup: %s\n", r.Cleanup)
	}
	fmt.Fprintf(&b, "\nverdict: %s\n", r.Summary())
	_, err := io.WriteString(w, b.String())
	return err
}

// verdictText marks the verdicts that decide the certification.
func verdictText(x Result) string {
	if x.Class == Hard && (x.Verdict == Fail || x.Verdict == Error) {
		return strings.ToUpper(string(x.Verdict))
	}
	return string(x.Verdict)
}

func oneLine(s string) string {
	s = strings.ReplaceAll(s, "\r", " ")
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// WriteHTML writes the report as a self-contained HTML page in the style of the bench's run
// reports (no scripts, no external resources; every value escaped by html/template).
func (r *Report) WriteHTML(w io.Writer) error {
	ms := func(d time.Duration) string { return d.Round(time.Millisecond).String() }
	c := reports.Certification{
		Title:   r.Store.Server + " " + r.Store.Endpoint,
		Verdict: overallVerdict[r.Verdict],
		Summary: r.Summary(),
		Facts: []reports.Fact{
			{Label: "store", Value: fmt.Sprintf("%s at %s, bucket %s (stack %s)", r.Store.Server, r.Store.Endpoint, r.Store.Bucket, r.Store.Stack)},
			{Label: "prefix", Value: r.Prefix},
			{Label: "clients", Value: strings.Join(r.Clients, ", ")},
			{Label: "scale", Value: fmt.Sprintf("%d keys per race; racers %s; %d chain writers", r.Keys, joinInts(r.Racers), r.Writers)},
			{Label: "rounds", Value: r.rounds() + "; a HARD probe fails when any round fails"},
			{Label: "bounds", Value: r.bounds()},
			{Label: "started", Value: r.Started.UTC().Format(time.RFC3339) + ", took " + ms(r.Duration)},
		},
		Note: "HARD probes disqualify the store when they fail; INFO probes are recorded and never decide the verdict.",
	}
	for _, f := range []reports.Fact{{Label: "cleanup", Value: r.Cleanup}, {Label: "command", Value: r.Command, Code: true},
		{Label: "version", Value: r.Version}} {
		if f.Value != "" {
			c.Facts = append(c.Facts, f)
		}
	}
	for _, x := range r.Results {
		c.Rows = append(c.Rows, reports.CertificationRow{Client: x.Client, ID: x.ID, Title: x.Title, Asserts: x.Asserts,
			Class: string(x.Class), Verdict: x.Verdict, VerdictLabel: verdictText(x), Duration: ms(x.Duration),
			Observed: x.Observed, Cause: x.Cause, ErrorClass: string(x.ErrorClass), Details: x.Details, Witness: x.Witness, Rate: x.Rate(), Variation: x.Variation, Round: x.roundNote()})
	}
	return reports.WriteCertification(w, c)
}

// overallVerdict colours the report's verdict as the checker's verdict of the same meaning.
var overallVerdict = map[Overall]checker.Verdict{Certified: checker.Pass, NotCertified: checker.Fail, Inconclusive: checker.Inconclusive}
