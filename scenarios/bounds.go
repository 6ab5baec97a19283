package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Kind says what a bounded quantity measures, and so how its limits read.
type Kind int

const (
	Number    Kind = iota // a whole number
	Span                  // a duration
	PerSecond             // a rate, in operations per second
)

// Bound is the allowed range of one scenario field, or of a quantity derived from several,
// both ends included. Validation rejects a value outside it with the file, line, column,
// field and this range; docs/scenarios.md#field-ranges lists the same table.
type Bound struct {
	Field string // as in error messages, with [] for any index: steps[].flap.on
	Kind  Kind
	// Min and Max: whole numbers as they are, durations in nanoseconds, rates in
	// thousandths of an operation per second.
	Min, Max int64
	What     string // what the range keeps bounded, for the reference
}

const (
	milli  = int64(time.Millisecond)
	minute = int64(time.Minute)
)

// MaxDuration caps a scenario's schedule: scenarios are meant to take seconds.
const MaxDuration = 10 * time.Minute

// Bounds is every bounded quantity of the scenario format, in reference order.
var Bounds = []Bound{
	{"file", Number, 0, 1 << 20, "size of a scenario file in bytes"},
	{"seed", Number, 0, math.MaxInt64, "0 draws a seed at run time"},
	{"duration", Span, milli, int64(MaxDuration), "hard cap of the schedule; a cell's deadline derives from it"},
	{"writers", Number, 1, 64, "declared writers plus the incarnations restart steps create; each gets a fault path with two listeners"},
	{"writers[].term", Number, 1, 1_000_000_000, "a primary's starting term"},
	{"traffic.clients", Number, 0, 64, "one goroutine each; 0 sends no traffic"},
	{"traffic.rate", PerSecond, 100, 5_000_000, "ops per second across all clients; a client's interval is clients/rate"},
	{"traffic.rate × duration", Number, 0, 200_000, "ops the traffic plans when clients > 0; each is recorded in the history"},
	{"traffic.sync_every", Number, 1, 10_000, "buffered ops that start a sync"},
	{"traffic.sync_interval", Span, milli, minute, "period of a sync of whatever is buffered"},
	{"kills", Number, 0, 64, "variants listed"},
	{"steps", Number, 0, 256, "steps listed"},
	{"schedule", Number, 0, 10_000, "planned actions: every step, every window end, every flap toggle (at most 2 per (on+off)/2 of its window)"},
	{"steps[].at", Span, 0, int64(MaxDuration), "time trigger; also at most the scenario's duration"},
	{"steps[].for", Span, 0, int64(MaxDuration), "window after which the fault heals; 0 is none"},
	{"steps[].after.count", Number, 1, 1_000_000, "occurrences of the event before the step fires"},
	{"steps[].after.delay", Span, 0, int64(MaxDuration), "wait after the event"},
	{"steps[].latency.delay", Span, 0, minute, "delay added to every response"},
	{"steps[].slow-close.delay", Span, 0, minute, "delay before a connection closes"},
	{"steps[].bandwidth.kbps", Number, 1, 1_000_000, "kilobytes per second"},
	{"steps[].flap.on", Span, 10 * milli, int64(MaxDuration), "nominal partitioned phase"},
	{"steps[].flap.off", Span, 10 * milli, int64(MaxDuration), "nominal healthy phase"},
	{"steps[].http.match.nth", Number, 1, 1_000_000, "first matching request the rule fires on"},
	{"steps[].http.match.count", Number, 1, 1_000_000, "times the rule fires at most"},
	{"steps[].http.status", Number, 400, 599, "HTTP error status answered"},
	{"steps[].http.delay", Span, milli, minute, "delay of a matching request"},
	{"steps[].http.until.count", Number, 1, 1_000_000, "occurrences of the event that releases the held requests"},
	{"steps[].drive-offline.drive", Number, 1, 16, "the store drive taken away (1-based)"},
	{"steps[].drive-online.drive", Number, 1, 16, "the store drive put back (1-based)"},
	{"steps[].drive-slow.drive", Number, 1, 16, "the store drive slowed (1-based)"},
	{"steps[].drive-slow.delay", Span, milli, 10 * int64(time.Second), "wait before each operation on the drive"},
	{"steps[].store-restart.down", Span, 0, minute, "how long the store stays stopped before it starts again"},
	{"store.drives", Number, 2, 16, "drives of the erasure-coded local MinIO the scenario runs on"},
	{"steps[].promote.term", Number, 1, 1_000_000_000, "term of the promotion"},
	{"steps[].restart.term", Number, 1, 1_000_000_000, "term of the new incarnation"},
	{"expect.min_acked", Number, 0, 200_000, "floor on acknowledged ops"},
	{"expect.max_time_to_fence", Span, 0, int64(MaxDuration), "0 leaves time to fence unchecked"},
	{"expect.max_time_to_ack", Span, 0, int64(MaxDuration), "0 leaves time to acknowledge unchecked"},
}

// Limit returns the bound of a field as Bounds names it; it panics for a field without one,
// which is a mistake in this package.
func Limit(field string) Bound {
	for _, b := range Bounds {
		if b.Field == field {
			return b
		}
	}
	panic("scenarios: no bound for " + field)
}

// Holds reports whether a whole number or a duration in nanoseconds is in range.
func (b Bound) Holds(v int64) bool { return v >= b.Min && v <= b.Max }

// HoldsRate reports whether a rate in operations per second is in range.
func (b Bound) HoldsRate(v float64) bool {
	return v >= float64(b.Min)/1000 && v <= float64(b.Max)/1000
}

// Range renders the bound as the reference and error messages show it: "1 to 64",
// "10ms to 10m", "0.1/s to 5000/s".
func (b Bound) Range() string {
	if b.Kind == PerSecond {
		return showRate(float64(b.Min)/1000) + " to " + showRate(float64(b.Max)/1000)
	}
	return b.show(b.Min) + " to " + b.show(b.Max)
}

func (b Bound) show(v int64) string {
	if b.Kind == Span {
		return showSpan(time.Duration(v))
	}
	return strconv.FormatInt(v, 10)
}

func showRate(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) + "/s" }

// showSpan prints a duration without trailing zero units: 10m, 1h, 1m30s, 1.5s.
func showSpan(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}

var index = regexp.MustCompile(`\[\d+\]`)

// inRange reports a whole number or duration outside its field's bound at the value's node.
func (p *parser) inRange(n *yaml.Node, field string, v int64) {
	if b := Limit(index.ReplaceAllString(field, "[]")); !b.Holds(v) {
		p.errf(n, field, "expected %s, got %s", b.Range(), b.show(v))
	}
}

// rateInRange reports a rate outside its field's bound at the value's node.
func (p *parser) rateInRange(n *yaml.Node, field string, v float64) {
	if b := Limit(index.ReplaceAllString(field, "[]")); !b.HoldsRate(v) {
		p.errf(n, field, "expected %s, got %s", b.Range(), showRate(v))
	}
}

// totals checks the quantities that add up over a whole scenario: how many writers, steps
// and kills it declares, how many actions its schedule plans and how many ops its traffic
// sends. Together with the field bounds they keep one cell's goroutines, listeners and
// memory bounded.
func (p *parser) totals(s *Scenario) {
	count := func(field string, n int, what string) {
		if _, given := p.pos[field]; given && !Limit(field).Holds(int64(n)) {
			p.at(Pos{}, field, "expected %s %s, got %d", Limit(field).Range(), what, n)
		}
	}
	count("writers", len(s.WriterIDs()), "writers (restart steps count as writers)")
	count("steps", len(s.Steps), "steps")
	count("kills", len(s.Kills), "kills")
	ops := Limit("traffic.rate × duration")
	if n := s.TrafficOps(); n > float64(ops.Max) {
		p.at(Pos{}, "traffic.rate", "expected %s ops over the duration (rate × duration), got %s × %v = %.0f; lower the rate or shorten the duration",
			ops.Range(), showRate(s.Traffic.Rate), s.Duration, n)
	}
	plan := Limit("schedule")
	total := int64(0)
	for i, st := range s.Steps {
		total += PlannedActions(s, st)
		if !plan.Holds(total) {
			p.at(st.Pos, fmt.Sprintf("steps[%d]", i), "expected %s planned actions, got up to %d by this step (window ends and flap toggles included); lengthen the flap's on/off or shorten its window",
				plan.Range(), total)
			return
		}
	}
}

// PlannedActions is an upper bound on the entries step st adds to its scenario's plan: the
// step, the end of its window, and each toggle of a time-triggered flap. A flap phase lasts
// at least half its nominal length, so an on/off pair advances at least (on+off)/2.
func PlannedActions(s *Scenario, st Step) int64 {
	if st.Trigger != TriggerAt {
		return 1
	}
	n := int64(1)
	if st.For > 0 {
		n = 2
	}
	window := int64(st.End(s.Duration) - st.At)
	if !st.Spec().Rhythm || window <= 0 {
		return n
	}
	half := int64(st.Params.On/2) + int64(st.Params.Off/2)
	if half <= 0 || window/half > math.MaxInt64/8 {
		return math.MaxInt64 / 2
	}
	return n + 2*(window/half+1)
}

// End is when a time-triggered step's fault ends: at the end of its window (For), and never
// after the scenario's duration.
func (st Step) End(duration time.Duration) time.Duration {
	if st.For > 0 && st.At < duration && st.For < duration-st.At {
		return st.At + st.For
	}
	return duration
}

// TrafficOps is how many ops the scenario's traffic plans: rate × duration, 0 without clients.
func (s *Scenario) TrafficOps() float64 {
	if s.Traffic.Clients <= 0 {
		return 0
	}
	return s.Traffic.Rate * s.Duration.Seconds()
}
