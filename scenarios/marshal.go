package scenarios

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

// Marshal renders a scenario as YAML in the catalogue's style: name, a folded description,
// the seed when non-zero, duration, writers as flow maps, traffic, store, kills, steps and
// expect. Parse gives back an equal scenario (positions, Source and Raw aside) for every
// scenario Parse accepts; fields left at their zero value where the loader has a default
// (protocol "", verdict "", an after count of 0) come back as that default.
func Marshal(sc *Scenario) ([]byte, error) {
	if sc == nil {
		return nil, fmt.Errorf("scenarios: marshal of a nil scenario")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", scalar(sc.Name))
	if d := strings.TrimSpace(sc.Description); d != "" {
		b.WriteString("description: " + block(d, "  ", 92) + "\n")
	}
	if sc.Seed != 0 {
		fmt.Fprintf(&b, "seed: %d\n", sc.Seed)
	}
	fmt.Fprintf(&b, "duration: %s\n", FormatDuration(sc.Duration))
	if sc.Client != "" {
		fmt.Fprintf(&b, "client: %s\n", scalar(sc.Client))
	}
	if sc.Protocol != "" && sc.Protocol != history.CorrectVariant {
		fmt.Fprintf(&b, "protocol: %s\n", scalar(sc.Protocol))
	}
	if st := storeFields(sc.Store); st != "" {
		fmt.Fprintf(&b, "store: {%s}\n", st)
	}
	if len(sc.Writers) > 0 {
		b.WriteString("writers:\n")
		for _, w := range sc.Writers {
			fmt.Fprintf(&b, "  - {%s}\n", writerFields(w))
		}
	}
	fmt.Fprintf(&b, "traffic: {%s}\n", trafficFields(sc.Traffic))
	if len(sc.Kills) > 0 {
		b.WriteString("kills:\n")
		for _, k := range sc.Kills {
			f := fields{}
			f.add("variant", scalar(k.Variant))
			f.list("violates", k.Violates)
			fmt.Fprintf(&b, "  - {%s}\n", f)
		}
	}
	if len(sc.Steps) > 0 {
		b.WriteString("steps:\n")
		for _, st := range sc.Steps {
			if err := writeStep(&b, st); err != nil {
				return nil, err
			}
		}
	}
	writeExpect(&b, sc.Expect)
	return []byte(b.String()), nil
}

// fields is the inside of a flow mapping, built field by field.
type fields []string

func (f *fields) add(k, v string) { *f = append(*f, k+": "+v) }

func (f *fields) list(k string, vs []string) {
	if len(vs) > 0 {
		f.add(k, flowList(vs))
	}
}

func (f fields) String() string { return strings.Join(f, ", ") }

func flowList(vs []string) string {
	q := make([]string, len(vs))
	for i, v := range vs {
		q[i] = scalar(v)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func writerFields(w Writer) string {
	f := fields{}
	f.add("id", scalar(w.ID))
	role := w.Role
	if role == "" {
		role = "standby"
	}
	f.add("role", scalar(role))
	if w.Term != 0 {
		f.add("term", strconv.FormatInt(w.Term, 10))
	}
	return f.String()
}

// trafficFields prints every field when clients send traffic (as the catalogue does), and
// only what differs from the loader's defaults when none do.
func trafficFields(t Traffic) string {
	f := fields{}
	f.add("clients", strconv.Itoa(t.Clients))
	all := t.Clients > 0
	if all || t.Rate != 200 {
		f.add("rate", strconv.FormatFloat(t.Rate, 'f', -1, 64)+"/s")
	}
	if all || t.SyncEvery != 20 {
		f.add("sync_every", strconv.Itoa(t.SyncEvery)+"ops")
	}
	if all || t.SyncInterval != 50*time.Millisecond {
		f.add("sync_interval", FormatDuration(t.SyncInterval))
	}
	return f.String()
}

func storeFields(s StoreSpec) string {
	f := fields{}
	if s.AllowUnenforced {
		f.add("allow_unenforced", "true")
	}
	if s.Drives != 0 {
		f.add("drives", strconv.Itoa(s.Drives))
	}
	return f.String()
}

// writeStep prints one step: its trigger, its action, then its window.
func writeStep(b *strings.Builder, st Step) error {
	spec, ok := Lookup(st.Action)
	if !ok {
		return fmt.Errorf("scenarios: marshal: step %d has unknown action %q", st.Index, st.Action)
	}
	if st.After != nil {
		a := fields{}
		a.add("writer", scalar(st.After.Writer))
		a.add("event", scalar(string(st.After.Event)))
		if st.After.Count > 1 {
			a.add("count", strconv.Itoa(st.After.Count))
		}
		if st.After.Delay != 0 {
			a.add("delay", FormatDuration(st.After.Delay))
		}
		fmt.Fprintf(b, "  - after: {%s}\n", a)
	} else {
		fmt.Fprintf(b, "  - at: %s\n", FormatDuration(st.At))
	}
	f := actionFields(spec, st.Params)
	switch {
	case st.Action == HTTP:
		writeRule(b, st.Params)
	case spec.Short && len(f) == 1:
		fmt.Fprintf(b, "    %s: %s\n", st.Action, scalar(st.Params.Writer))
	default:
		fmt.Fprintf(b, "    %s: {%s}\n", st.Action, f)
	}
	if st.For != 0 {
		fmt.Fprintf(b, "    for: %s\n", FormatDuration(st.For))
	}
	return nil
}

// actionFields are the parameters of a non-http action, in its spec's order, writer first.
func actionFields(spec Spec, pr Params) fields {
	f := fields{}
	if !spec.Store {
		f.add("writer", scalar(pr.Writer))
	}
	for _, name := range spec.Params {
		if v, ok := paramValue(name, pr); ok {
			f.add(name, v)
		}
	}
	return f
}

// paramValue renders one parameter of an action; ok is false when it is left at the
// loader's default.
func paramValue(name string, pr Params) (string, bool) {
	switch name {
	case "mode":
		return scalar(pr.Mode), pr.Mode != ""
	case "delay":
		return FormatDuration(pr.Delay), true
	case "kbps":
		return strconv.FormatInt(pr.KBps, 10), true
	case "on":
		return FormatDuration(pr.On), true
	case "off":
		return FormatDuration(pr.Off), true
	case "term":
		return strconv.FormatInt(pr.Term, 10), true
	case "twin":
		return "true", pr.Twin
	case "as":
		return scalar(pr.As), pr.As != ""
	case "target":
		return scalar(pr.Target), true
	case "abort":
		return scalar(string(pr.AbortAt)), pr.AbortAt != history.AbortNone
	case "lose_handoff":
		if pr.LoseMessage {
			return "message", true
		}
		return "true", pr.LoseHandoff
	case "prehydrate":
		return "true", pr.Prehydrate
	case "from":
		return scalar(pr.From), pr.From != ""
	case "drive":
		return strconv.Itoa(pr.Drive), true
	case "down":
		return FormatDuration(pr.Down), pr.Down != 0
	}
	return "", false
}

// writeRule prints an http step in block form, its match as a flow map.
func writeRule(b *strings.Builder, pr Params) {
	r := pr.Rule
	b.WriteString("    http:\n")
	fmt.Fprintf(b, "      writer: %s\n", scalar(pr.Writer))
	if r.Name != "" {
		fmt.Fprintf(b, "      name: %s\n", scalar(r.Name))
	}
	if m := matchFields(r); len(m) > 0 {
		fmt.Fprintf(b, "      match: {%s}\n", m)
	}
	fmt.Fprintf(b, "      action: %s\n", scalar(string(r.Action)))
	if r.Status != 0 {
		fmt.Fprintf(b, "      status: %d\n", r.Status)
	}
	if r.Code != "" {
		fmt.Fprintf(b, "      code: %s\n", scalar(r.Code))
	}
	if r.Delay != 0 || (r.Action == faults.Delay && pr.Until == nil) {
		fmt.Fprintf(b, "      delay: %s\n", FormatDuration(r.Delay))
	}
	if u := pr.Until; u != nil {
		or := ""
		if u.Or != "" {
			or = ", or: " + scalar(string(u.Or))
		}
		fmt.Fprintf(b, "      until: {writer: %s, event: %s%s, count: %d}\n", scalar(u.Writer), scalar(string(u.Event)), or, u.Count)
	}
}

func matchFields(r faults.Rule) fields {
	m := fields{}
	for _, kv := range [][2]string{{"method", r.Method}, {"key", r.Key}, {"header", r.Header}, {"value", r.Value}} {
		if kv[1] != "" {
			m.add(kv[0], scalar(kv[1]))
		}
	}
	if r.Nth != 0 {
		m.add("nth", strconv.Itoa(r.Nth))
	}
	if r.Count != 0 {
		m.add("count", strconv.Itoa(r.Count))
	}
	return m
}

func writeExpect(b *strings.Builder, e Expect) {
	verdict := e.Verdict
	if verdict == "" {
		verdict = "pass"
	}
	b.WriteString("expect:\n")
	fmt.Fprintf(b, "  verdict: %s\n", scalar(verdict))
	if len(e.Violated) > 0 {
		fmt.Fprintf(b, "  violated: %s\n", flowList(e.Violated))
	}
	if len(e.Fenced) > 0 {
		fmt.Fprintf(b, "  fenced: %s\n", flowList(e.Fenced))
	}
	if e.Serving != "" {
		fmt.Fprintf(b, "  serving: %s\n", scalar(e.Serving))
	}
	if e.MinAcked != 0 {
		fmt.Fprintf(b, "  min_acked: %d\n", e.MinAcked)
	}
	if e.FaultsMustFire != "" && e.FaultsMustFire != "all" {
		fmt.Fprintf(b, "  faults_must_fire: %s\n", scalar(e.FaultsMustFire))
	}
	if e.MaxTimeToFence != 0 {
		fmt.Fprintf(b, "  max_time_to_fence: %s\n", FormatDuration(e.MaxTimeToFence))
	}
	if e.MaxTimeToAck != 0 {
		fmt.Fprintf(b, "  max_time_to_ack: %s\n", FormatDuration(e.MaxTimeToAck))
	}
	if e.ServesAfterHeal {
		b.WriteString("  serves_after_heal: true\n")
	}
}

// FormatDuration prints a duration the way the catalogue writes them: 2s, 1500ms, 50ms, 0s; a
// duration that is not whole milliseconds in microseconds or nanoseconds.
func FormatDuration(d time.Duration) string {
	switch {
	case d == 0:
		return "0s"
	case d%time.Second == 0:
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	case d%time.Millisecond == 0:
		return strconv.FormatInt(int64(d/time.Millisecond), 10) + "ms"
	case d%time.Microsecond == 0:
		return strconv.FormatInt(int64(d/time.Microsecond), 10) + "us"
	}
	return strconv.FormatInt(int64(d), 10) + "ns"
}

// plain are the strings printed without quotes: they read back as the same string in any
// YAML context this file uses them in (a flow map, a flow list, a block value).
var plain = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.'/@-]*$`)

// scalar prints a string value: plain when that is safe, double-quoted otherwise.
func scalar(s string) string {
	switch s {
	case "~", "null", "Null", "NULL":
		return strconv.Quote(s)
	}
	if plain.MatchString(s) {
		return s
	}
	return strconv.Quote(s)
}

// block prints a text as a folded block (">", lines wrapped at width and indented), or
// double-quoted when folding would not read back as the same text.
func block(s, indent string, width int) string {
	if !foldable(s) {
		return strconv.Quote(s)
	}
	var lines []string
	line := ""
	for _, w := range strings.Split(s, " ") {
		switch {
		case line == "":
			line = w
		case len(line)+1+len(w) > width:
			lines = append(lines, line)
			line = w
		default:
			line += " " + w
		}
	}
	lines = append(lines, line)
	return ">\n" + indent + strings.Join(lines, "\n"+indent)
}

// foldable: one paragraph of printable text whose words are separated by single spaces, so
// that a fold at any space reads back as that space.
func foldable(s string) bool {
	if s == "" || strings.Contains(s, "  ") || s != strings.TrimSpace(s) {
		return false
	}
	for _, r := range s {
		if r != ' ' && (!unicode.IsPrint(r) || unicode.IsSpace(r)) {
			return false
		}
	}
	return true
}
