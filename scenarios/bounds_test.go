package scenarios

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// boundsDoc holds every bounded field once, each value as a placeholder <<field>> naming the
// field as errors do. Values not under test take the defaults in boundsDefaults.
const boundsDoc = `name: bounds
seed: <<seed>>
duration: <<duration>>
writers:
  - {id: a, role: primary, term: <<writers[0].term>>}
  - {id: b, role: standby}
traffic:
  clients: <<traffic.clients>>
  rate: <<traffic.rate>>
  sync_every: <<traffic.sync_every>>
  sync_interval: <<traffic.sync_interval>>
steps:
  - at: <<steps[0].at>>
    latency: {writer: a, delay: <<steps[0].latency.delay>>}
    for: <<steps[0].for>>
  - after: {writer: a, event: acked, count: <<steps[1].after.count>>, delay: <<steps[1].after.delay>>}
    slow-close: {writer: a, delay: <<steps[1].slow-close.delay>>}
  - at: 0s
    bandwidth: {writer: a, kbps: <<steps[2].bandwidth.kbps>>}
  - at: 0s
    flap: {writer: a, on: <<steps[3].flap.on>>, off: <<steps[3].flap.off>>}
    for: 100ms
  - at: 0s
    http:
      writer: a
      match: {nth: <<steps[4].http.match.nth>>, count: <<steps[4].http.match.count>>}
      action: status
      status: <<steps[4].http.status>>
  - at: 0s
    http: {writer: a, action: delay, delay: <<steps[5].http.delay>>, until: {writer: b, event: claimed, count: <<steps[5].http.until.count>>}}
  - at: 0s
    promote: {writer: b, term: <<steps[6].promote.term>>}
  - at: 0s
    crash: a
  - at: 0s
    restart: {writer: a, as: a2, term: <<steps[8].restart.term>>}
  - at: 0s
    drive-offline: {drive: <<steps[9].drive-offline.drive>>}
  - at: 0s
    drive-online: {drive: <<steps[10].drive-online.drive>>}
  - at: 0s
    store-restart: {down: <<steps[11].store-restart.down>>}
  - at: 0s
    drive-slow: {drive: <<steps[12].drive-slow.drive>>, delay: <<steps[12].drive-slow.delay>>}
store:
  drives: <<store.drives>>
expect:
  min_acked: <<expect.min_acked>>
  max_time_to_fence: <<expect.max_time_to_fence>>
  max_time_to_ack: <<expect.max_time_to_ack>>
`

var boundsDefaults = map[string]string{
	"seed": "1", "duration": "2s", "writers[0].term": "5", "traffic.clients": "2", "traffic.rate": "10/s",
	"traffic.sync_every": "20ops", "traffic.sync_interval": "50ms", "steps[0].at": "1s",
	"steps[0].latency.delay": "20ms", "steps[0].for": "500ms", "steps[1].after.count": "3",
	"steps[1].after.delay": "10ms", "steps[1].slow-close.delay": "10ms", "steps[2].bandwidth.kbps": "200",
	"steps[3].flap.on": "20ms", "steps[3].flap.off": "30ms", "steps[4].http.match.nth": "1",
	"steps[4].http.match.count": "1", "steps[4].http.status": "503", "steps[5].http.delay": "100ms", "steps[5].http.until.count": "1",
	"steps[6].promote.term": "6", "steps[8].restart.term": "7", "expect.min_acked": "0",
	"expect.max_time_to_fence": "1s", "expect.max_time_to_ack": "1s", "steps[9].drive-offline.drive": "1", "steps[10].drive-online.drive": "1",
	"steps[11].store-restart.down": "0s", "store.drives": "16",
	"steps[12].drive-slow.drive": "1", "steps[12].drive-slow.delay": "200ms",
}

var placeholder = regexp.MustCompile(`<<([^>]+)>>`)

// render fills the placeholders, field set to value (and each of also), and returns the
// document with the line and column where field's value starts.
func render(field, value string, also map[string]string) (doc string, line, col int) {
	lines := strings.Split(boundsDoc, "\n")
	for i, l := range lines {
		for {
			m := placeholder.FindStringSubmatchIndex(l)
			if m == nil {
				break
			}
			f, v := l[m[2]:m[3]], boundsDefaults[l[m[2]:m[3]]]
			if x, ok := also[f]; ok {
				v = x
			}
			if f == field {
				v, line, col = value, i+1, m[0]+1
			}
			l = l[:m[0]] + v + l[m[1]:]
		}
		lines[i] = l
	}
	return strings.Join(lines, "\n"), line, col
}

// totalBounds are the bounds of quantities summed over a scenario rather than of one field.
var totalBounds = []string{"file", "writers", "kills", "steps", "schedule", "traffic.rate × duration"}

// fieldBounds maps each field placeholder of boundsDoc to its bound, and checks every
// single-field bound has one.
func fieldBounds(t *testing.T) map[string]Bound {
	out := map[string]Bound{}
	held := map[string]bool{}
	for f := range boundsDefaults {
		out[f] = Limit(index.ReplaceAllString(f, "[]"))
		held[out[f].Field] = true
	}
	for _, b := range Bounds {
		if !held[b.Field] && !slices.Contains(totalBounds, b.Field) {
			t.Errorf("bound %s is a field but boundsDoc does not hold it", b.Field)
		}
	}
	return out
}

// literal writes a bound's value the way a scenario file would.
func literal(b Bound, v float64) string {
	switch b.Kind {
	case Span:
		return time.Duration(v).String()
	case PerSecond:
		return strconv.FormatFloat(v, 'g', -1, 64) + "/s"
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

// edges returns the ends of a bound and the nearest values just outside it that still
// decode (a negative duration or an int64 overflow is a different error).
func edges(b Bound) (in, out []string) {
	lo, hi := float64(b.Min), float64(b.Max)
	if b.Kind == PerSecond {
		lo, hi = lo/1000, hi/1000
		return []string{literal(b, lo), literal(b, hi)},
			[]string{literal(b, math.Nextafter(lo, 0)), literal(b, math.Nextafter(hi, math.Inf(1)))}
	}
	in = []string{literal(b, lo), strconv.FormatInt(b.Max, 10)}
	if b.Kind == Span {
		in[1] = literal(b, hi)
	}
	if b.Min > 0 {
		out = append(out, literal(b, lo-1))
	} else if b.Kind == Number {
		out = append(out, "-1")
	}
	if b.Max < math.MaxInt64 {
		out = append(out, literal(b, hi+1))
	}
	return in, out
}

// needs are the other values an edge value needs to make a valid scenario: a step at 10m
// needs a 10m duration.
func needs(field, value string) map[string]string {
	switch {
	case field == "steps[0].at":
		return map[string]string{"duration": "10m"}
	case field == "duration":
		return map[string]string{"steps[0].at": "0s"}
	case field == "traffic.rate":
		return map[string]string{"duration": "1s"}
	}
	return nil
}

func TestFieldBoundsRejectOutsideWithPositionAndRange(t *testing.T) {
	for field, b := range fieldBounds(t) {
		_, outside := edges(b)
		for _, v := range outside {
			t.Run(field+"="+v, func(t *testing.T) {
				doc, line, col := render(field, v, needs(field, v))
				_, err := Parse("b.yaml", []byte(doc), Options{})
				want := fmt.Sprintf("b.yaml:%d:%d: %s: expected %s, got ", line, col, field, b.Range())
				if err == nil || !strings.Contains(err.Error(), want) {
					t.Fatalf("%s: %s is outside %s: got %v, want an error starting %q", field, v, b.Range(), err, want)
				}
			})
		}
	}
}

func TestFieldBoundsAcceptTheirEnds(t *testing.T) {
	if doc, _, _ := render("", "", nil); !strings.Contains(doc, "seed: 1\n") {
		t.Fatalf("placeholders left in\n%s", doc)
	} else if _, err := Parse("b.yaml", []byte(doc), Options{}); err != nil {
		t.Fatalf("the defaults must validate: %v", err)
	}
	for field, b := range fieldBounds(t) {
		inside, _ := edges(b)
		for _, v := range inside {
			doc, _, _ := render(field, v, needs(field, v))
			if _, err := Parse("b.yaml", []byte(doc), Options{}); err != nil {
				t.Errorf("%s: %s is in %s but was rejected: %v", field, v, b.Range(), err)
			}
		}
	}
}
