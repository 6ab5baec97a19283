package certify

import (
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"strings"
	"text/tabwriter"
	"time"
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
		return "INCONCLUSIVE: no HARD probe failed, but these could not be judged: " + strings.Join(r.named(Hard, Error), ", ") +
			" (" + tally + ")"
	}
}

func clientList(cs []string) string {
	if len(cs) == 1 {
		return cs[0]
	}
	return strings.Join(cs, " and ")
}

// named lists the results of a class with a verdict as "ID (client)".
func (r *Report) named(c Class, v Verdict) []string {
	var out []string
	for _, x := range r.Results {
		if x.Class == c && x.Verdict == v {
			out = append(out, x.ID+" ("+x.Client+")")
		}
	}
	return out
}

// WriteText writes the report as a table, one line per probe and client, then the verdict.
// Detail lines are shown for failed and errored probes, and for all probes when verbose.
func (r *Report) WriteText(w io.Writer, verbose bool) error {
	var b strings.Builder
	fmt.Fprintf(&b, "fencebench certify: %s at %s, bucket %s (stack %s)\n", r.Store.Server, r.Store.Endpoint, r.Store.Bucket, r.Store.Stack)
	fmt.Fprintf(&b, "prefix %s; clients %s; %d keys per race; racers %s; %d chain writers\n\n", r.Prefix, strings.Join(r.Clients, ", "),
		r.Keys, joinInts(r.Racers), r.Writers)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CLIENT\tPROBE\tCLASS\tVERDICT\tTIME\tOBSERVED")
	for _, x := range r.Results {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\n", x.Client, x.ID, x.Class, verdictText(x), x.Duration.Round(time.Millisecond), oneLine(x.Observed))
		if verbose || x.Verdict == Fail || x.Verdict == Error {
			for _, d := range x.Details {
				if d == "FAIL: "+x.Observed || d == "ERROR: "+x.Observed {
					continue // the observation already says it
				}
				fmt.Fprintf(tw, "\t\t\t\t\t  %s\n", oneLine(d))
			}
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if infoFails := r.named(Informational, Fail); len(infoFails) > 0 {
		fmt.Fprintf(&b, "\ninformational probes that failed (they do not decide the verdict): %s\n", strings.Join(infoFails, ", "))
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

// WriteHTML writes the report as a self-contained HTML page (no scripts, no external
// resources; every value escaped by html/template).
func (r *Report) WriteHTML(w io.Writer) error {
	return pageTemplate.Execute(w, r)
}

var pageTemplate = template.Must(template.New("certify").Funcs(template.FuncMap{
	"ms":      func(d time.Duration) string { return d.Round(time.Millisecond).String() },
	"lower":   func(v Verdict) string { return string(v) },
	"overall": func(v Overall) string { return strings.ReplaceAll(string(v), " ", "-") },
	"ints":    joinInts,
	"join":    strings.Join,
	"when":    func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>fencebench certify: {{.Store.Server}} {{.Store.Endpoint}}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 2em; color: #222; }
h1 { font-size: 1.4em; }
.verdict { font-size: 1.2em; font-weight: bold; padding: .5em 1em; border-radius: 4px; display: inline-block; }
.certified { background: #d9f2dd; color: #145a22; }
.not-certified { background: #f8d7d7; color: #7a1010; }
.inconclusive { background: #fff0c2; color: #6b5000; }
table { border-collapse: collapse; margin-top: 1em; width: 100%; }
th, td { border-bottom: 1px solid #ddd; padding: .35em .6em; text-align: left; vertical-align: top; }
th { background: #f4f4f4; }
td:first-child { white-space: nowrap; }
td.pass { color: #145a22; } td.fail { color: #a01515; font-weight: bold; } td.error { color: #8a6d00; font-weight: bold; }
td.info { color: #285a8c; }
.asserts { color: #666; font-size: .9em; }
dl { display: grid; grid-template-columns: max-content auto; gap: .2em 1em; }
dt { font-weight: bold; }
ul.details { margin: .3em 0; padding-left: 1.2em; font-family: ui-monospace, monospace; font-size: .85em; }
</style>
</head>
<body>
<h1>fencebench certify</h1>
<p class="verdict {{overall .Verdict}}">{{.Summary}}</p>
<dl>
<dt>Store</dt><dd>{{.Store.Server}} at {{.Store.Endpoint}}, bucket {{.Store.Bucket}} (stack {{.Store.Stack}})</dd>
<dt>Prefix</dt><dd>{{.Prefix}}</dd>
<dt>Clients</dt><dd>{{join .Clients ", "}}</dd>
<dt>Scale</dt><dd>{{.Keys}} keys per race; racers {{ints .Racers}}; {{.Writers}} chain writers</dd>
<dt>Started</dt><dd>{{when .Started}}, took {{ms .Duration}}</dd>
{{if .Cleanup}}<dt>Cleanup</dt><dd>{{.Cleanup}}</dd>{{end}}
{{if .Command}}<dt>Command</dt><dd><code>{{.Command}}</code></dd>{{end}}
{{if .Version}}<dt>Version</dt><dd>{{.Version}}</dd>{{end}}
</dl>
<p>HARD probes disqualify the store when they fail; INFO probes are recorded and never decide the verdict.</p>
<table>
<tr><th>Client</th><th>Probe</th><th>Class</th><th>Verdict</th><th>Time</th><th>Observed</th></tr>
{{range .Results}}<tr>
<td>{{.Client}}</td>
<td><b>{{.ID}}</b> {{.Title}}<div class="asserts">{{.Asserts}}</div></td>
<td>{{.Class}}</td>
<td class="{{lower .Verdict}}">{{.Verdict}}</td>
<td>{{ms .Duration}}</td>
<td>{{.Observed}}{{if .Details}}<details><summary>details</summary><ul class="details">{{range .Details}}<li>{{.}}</li>{{end}}</ul></details>{{end}}</td>
</tr>
{{end}}</table>
</body>
</html>
`))
