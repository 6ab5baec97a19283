package reports

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// plotView is the ack latency over time, drawn on the timeline's time scale.
type plotView struct {
	Width  int     `json:"width"`
	Height int     `json:"height"`
	Left   float64 `json:"left"`
	Right  float64 `json:"right"`
	Top    float64 `json:"top"`
	Bottom float64 `json:"bottom"`
	XTicks []tick  `json:"x_ticks,omitempty"`
	YTicks []tick  `json:"y_ticks,omitempty"`
	P50    string  `json:"p50,omitempty"`
	Max    string  `json:"max,omitempty"`
	// P50Dots and MaxDots mark each slice's value (zero-length strokes with round caps), so
	// an isolated slice is visible where the line has nothing to join.
	P50Dots string  `json:"p50_dots,omitempty"`
	MaxDots string  `json:"max_dots,omitempty"`
	P99Y    float64 `json:"p99_y,omitempty"`
	P99     string  `json:"p99,omitempty"`
	Empty   bool    `json:"empty,omitempty"`
	Slices  int     `json:"slices,omitempty"`
	SliceAt string  `json:"slice,omitempty"`
}

// sample is one acknowledged op: when it was acknowledged and how long after its submission.
type sample struct {
	at, lat time.Duration
	writer  string
}

const plotSlices = 120

// ackLatency measures, for every op an ack covers, the time from the op's submission (its Op
// event) to the ack (the Ack event's Complete), and plots it over time on [0, end].
func ackLatency(ev []history.Event, end time.Duration) latencyView {
	submitted := map[int64]time.Duration{}
	for i := range ev {
		e := &ev[i]
		if e.Kind == history.Op && e.Outcome != history.Fail && len(e.Ops) > 0 {
			if _, seen := submitted[e.Ops[0]]; !seen {
				submitted[e.Ops[0]] = e.Invoke
			}
		}
	}
	var v latencyView
	var samples []sample
	for i := range ev {
		e := &ev[i]
		if e.Kind != history.Ack || (e.Outcome != "" && e.Outcome != history.OK) {
			continue
		}
		for _, op := range e.Ops {
			t, ok := submitted[op]
			if !ok || e.Complete < t {
				v.Unmatched++
				continue
			}
			samples = append(samples, sample{at: e.Complete, lat: e.Complete - t, writer: e.Writer})
		}
	}
	v.Count = len(samples)
	if len(samples) == 0 {
		v.Plot = plotView{Empty: true}
		return v
	}
	all := make([]time.Duration, len(samples))
	byWriter := map[string][]time.Duration{}
	for i, s := range samples {
		all[i] = s.lat
		byWriter[s.writer] = append(byWriter[s.writer], s.lat)
	}
	slices.Sort(all)
	v.P50, v.P90, v.P99, v.Max = fmtDur(pct(all, 50)), fmtDur(pct(all, 90)), fmtDur(pct(all, 99)), fmtDur(all[len(all)-1])
	writers := make([]string, 0, len(byWriter))
	for w := range byWriter {
		writers = append(writers, w)
	}
	slices.Sort(writers)
	if len(writers) > 1 {
		for _, w := range writers {
			l := byWriter[w]
			slices.Sort(l)
			v.PerWriter = append(v.PerWriter, latencyRow{Writer: w, Count: len(l), P50: fmtDur(pct(l, 50)),
				P90: fmtDur(pct(l, 90)), P99: fmtDur(pct(l, 99)), Max: fmtDur(l[len(l)-1])})
		}
	}
	v.Plot = latencyPlot(samples, end, pct(all, 99), all[len(all)-1])
	return v
}

// pct is the nearest-rank percentile of sorted values.
func pct(sorted []time.Duration, p int) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := (p*len(sorted) + 99) / 100
	return sorted[max(rank, 1)-1]
}

func latencyPlot(samples []sample, end, p99, top time.Duration) plotView {
	p := plotView{Width: svgWidth, Height: 190, Left: laneLabelW, Right: svgWidth - svgRight, Top: 12, Bottom: 160, Slices: plotSlices}
	if end <= 0 {
		end = time.Second
	}
	for _, s := range samples {
		end = max(end, s.at)
	}
	yMax := niceCeil(top)
	buckets := make([][]time.Duration, plotSlices)
	for _, s := range samples {
		i := min(int(int64(s.at)*plotSlices/int64(end)), plotSlices-1)
		buckets[i] = append(buckets[i], s.lat)
	}
	p.SliceAt = fmtDur(end / plotSlices)
	x := func(t time.Duration) float64 { return p.Left + (p.Right-p.Left)*float64(t)/float64(end) }
	y := func(d time.Duration) float64 { return p.Bottom - (p.Bottom-p.Top)*float64(d)/float64(yMax) }
	var p50, mx, p50d, mxd strings.Builder
	for i, b := range buckets {
		if len(b) == 0 {
			continue
		}
		slices.Sort(b)
		mid := time.Duration((int64(i)*2 + 1) * int64(end) / (2 * plotSlices))
		cmd := "L"
		if p50.Len() == 0 || len(buckets[max(i-1, 0)]) == 0 {
			cmd = "M"
		}
		fmt.Fprintf(&p50, "%s%s %s", cmd, num(x(mid)), num(y(pct(b, 50))))
		fmt.Fprintf(&mx, "%s%s %s", cmd, num(x(mid)), num(y(b[len(b)-1])))
		fmt.Fprintf(&p50d, "M%s %sh0", num(x(mid)), num(y(pct(b, 50))))
		fmt.Fprintf(&mxd, "M%s %sh0", num(x(mid)), num(y(b[len(b)-1])))
	}
	p.P50, p.Max, p.P50Dots, p.MaxDots = p50.String(), mx.String(), p50d.String(), mxd.String()
	p.P99Y = round1(y(p99))
	p.P99 = "p99 " + fmtDur(p99)
	for _, t := range timeTicks(end) {
		p.XTicks = append(p.XTicks, tick{X: round1(x(t)), Label: fmtTick(t)})
	}
	for i := 0; i <= 4; i++ {
		d := yMax * time.Duration(i) / 4
		p.YTicks = append(p.YTicks, tick{X: round1(y(d)), Label: fmtDur(d)})
	}
	return p
}

// niceCeil rounds d up to 1, 2 or 5 times a power of ten (in nanoseconds).
func niceCeil(d time.Duration) time.Duration {
	if d <= 0 {
		return time.Millisecond
	}
	step := time.Duration(1)
	for step*10 <= d {
		step *= 10
	}
	for _, m := range []time.Duration{1, 2, 5, 10} {
		if m*step >= d {
			return m * step
		}
	}
	return 10 * step
}

type latencyView struct {
	Count     int          `json:"count"`
	P50       string       `json:"p50,omitempty"`
	P90       string       `json:"p90,omitempty"`
	P99       string       `json:"p99,omitempty"`
	Max       string       `json:"max,omitempty"`
	PerWriter []latencyRow `json:"per_writer,omitempty"`
	Unmatched int          `json:"unmatched,omitempty"`
	Plot      plotView     `json:"plot"`
}

type latencyRow struct {
	Writer string `json:"writer"`
	Count  int    `json:"count"`
	P50    string `json:"p50"`
	P90    string `json:"p90"`
	P99    string `json:"p99"`
	Max    string `json:"max"`
}
