package reports

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// family groups protocol kinds that share a glyph and a colour.
type family struct {
	class string
	glyph func(x, y float64) string
	level float64 // y offset inside the steps row
	label string
}

var (
	famOwn  = family{"k-own", glyphTriUp, 9, "claim / adopt / revert / promote"}
	famHand = family{"k-hand", glyphTriRight, 18, "transfer / handoff"}
	famTerm = family{"k-term", glyphSquare, 9, "fenced / stand-down / crash"}
	famRead = family{"k-read", glyphCircle, 26, "restore-read / hydrate / audit"}
	famSeg  = family{"k-seg", glyphDiamond, 26, "publish / collect"}
	famCAS  = family{"k-cas", glyphCross, 18, "CAS refused / ambiguous"}
	famLife = family{"k-life", glyphBar, 18, "pause / resume"}
	famDot  = family{"k-dot", glyphDot, 0, "other event"}
)

var families = map[history.Kind]family{
	history.Claim: famOwn, history.Adopt: famOwn, history.Revert: famOwn, history.Promote: famOwn,
	history.Transfer: famHand, history.Handoff: famHand,
	history.Fenced: famTerm, history.StandDown: famTerm, history.Crash: famTerm,
	history.RestoreRead: famRead, history.Hydrate: famRead, history.Audit: famRead,
	history.Publish: famSeg, history.Collect: famSeg,
	history.CAS:   famCAS,
	history.Pause: famLife, history.Resume: famLife,
}

// individual reports whether e is a rare protocol step that gets its own mark.
func individual(e *history.Event) bool {
	f, ok := families[e.Kind]
	if !ok {
		return false
	}
	if f.class == famCAS.class {
		return e.Outcome != history.OK && e.Outcome != ""
	}
	return true
}

// markAt is when an event is drawn: an ack at the moment it acknowledged, anything else when
// it was invoked (the order the history and the checker's narratives use).
func markAt(e *history.Event) time.Duration {
	if e.Kind == history.Ack {
		return e.Complete
	}
	return e.Invoke
}

func orAll(w string) string {
	if w == "" {
		return "all writers"
	}
	return w
}

func orRun(w string) string {
	if w == "" {
		return "(run)"
	}
	return w
}

func pauseRect(l *laneAcc, x0, x1 float64, w string, t0, t1 time.Duration) rectView {
	if l == nil {
		return rectView{}
	}
	return rectView{X: round1(x0), Y: l.top + stepsTop, W: round1(max(x1-x0, 1.5)), H: laneH - stepsTop - 4,
		Title: fmt.Sprintf("%s paused: %s – %s", w, fmtAt(t0), fmtAt(t1))}
}

// hotY places a counterexample event in the row its kind belongs to.
func hotY(e *history.Event, top float64) float64 {
	switch {
	case e.Kind == history.CAS:
		return top + casTop + barH/2
	case e.Kind == history.Ack || e.Kind == history.Op || e.Kind == history.Sync:
		return top + ackTop + barH/2
	case e.Kind.StoreCall():
		return top + storeTop + barH/2
	}
	if f, ok := families[e.Kind]; ok {
		return top + stepsTop + f.level
	}
	return top + stepsTop + stepsH/2
}

func outcomeClass(o history.Outcome) string {
	switch o {
	case "", history.OK:
		return "ok"
	case history.Ambiguous:
		return "amb"
	default:
		return "fail"
	}
}

// eventTitle is the hover text of a mark.
func eventTitle(e *history.Event) string {
	var b strings.Builder
	fmt.Fprintf(&b, "#%d %s", e.ID, e.Kind)
	if e.Writer != "" {
		fmt.Fprintf(&b, " by %s", e.Writer)
	}
	if e.Complete > e.Invoke {
		fmt.Fprintf(&b, " at %s–%s", fmtAt(e.Invoke), fmtAt(e.Complete))
	} else {
		fmt.Fprintf(&b, " at %s", fmtAt(e.Invoke))
	}
	if e.Outcome != "" {
		fmt.Fprintf(&b, " → %s", e.Outcome)
	}
	if e.Term != 0 {
		fmt.Fprintf(&b, "\nterm %d", e.Term)
		if e.Seq != 0 {
			fmt.Fprintf(&b, " seq %d", e.Seq)
		}
	}
	if e.Key != "" {
		fmt.Fprintf(&b, "\nkey %s", e.Key)
	}
	if e.Detail != "" {
		fmt.Fprintf(&b, "\n%s", e.Detail)
	}
	if len(e.Ops) > 0 {
		fmt.Fprintf(&b, "\nops %s", fmtOps(e.Ops))
	}
	if e.Status != 0 {
		fmt.Fprintf(&b, "\nstatus %d %s", e.Status, e.Code)
	}
	if e.Err != "" {
		fmt.Fprintf(&b, "\n%s", e.Err)
	}
	return b.String()
}

// aggregateMarks draws one mark per slice for a group too large to draw event by event.
func aggregateMarks(g []*history.Event, f family, y float64, sliceOf func(time.Duration) int, x func(time.Duration) float64, end time.Duration) []markView {
	type acc struct {
		n, fail, amb int
	}
	per := map[int]*acc{}
	for _, e := range g {
		i := sliceOf(markAt(e))
		a := per[i]
		if a == nil {
			a = &acc{}
			per[i] = a
		}
		a.n++
		switch outcomeClass(e.Outcome) {
		case "fail":
			a.fail++
		case "amb":
			a.amb++
		}
	}
	idx := make([]int, 0, len(per))
	for i := range per {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	kind, writer := g[0].Kind, g[0].Writer
	var out []markView
	for _, i := range idx {
		a := per[i]
		t0 := time.Duration(int64(i) * int64(end) / timelineSlices)
		t1 := time.Duration(int64(i+1) * int64(end) / timelineSlices)
		oc := "ok"
		if a.fail > 0 {
			oc = "fail"
		} else if a.amb > 0 {
			oc = "amb"
		}
		title := fmt.Sprintf("%s ×%d by %s, %s–%s", kind, a.n, orRun(writer), fmtAt(t0), fmtAt(t1))
		if a.fail > 0 || a.amb > 0 {
			title += fmt.Sprintf(" (%d failed, %d ambiguous)", a.fail, a.amb)
		}
		out = append(out, markView{Class: "m agg " + f.class + " o-" + oc, D: f.glyph(x((t0+t1)/2), y), Title: title})
	}
	return out
}

// bars draws the aggregated rows. Each bar is a vertical stroke in its slice; a stacked bar
// gives non-ok parts at least 2 units so a single refusal among many successes stays visible.
func bars(lanes []*laneAcc, x func(time.Duration) float64, sliceW float64, end time.Duration) []barView {
	var cas, ack, st []int
	for _, l := range lanes {
		for _, s := range l.slices {
			cas = append(cas, s[fCASOK]+s[fCASRefused]+s[fCASAmbiguous])
			ack = append(ack, max(s[fOps], s[fAcked]))
			st = append(st, s[fStore])
		}
	}
	casMax, ackMax, storeMax := barScale(cas), barScale(ack), barScale(st)
	classes := []string{"b-ops", "b-acked", "b-cas-ok", "b-cas-ref", "b-cas-amb", "b-st-ok", "b-st-fail", "b-st-amb", "b-rule"}
	paths := map[string]*strings.Builder{}
	for _, c := range classes {
		paths[c] = &strings.Builder{}
	}
	seg := func(class string, cx, base, h float64) {
		if h <= 0 {
			return
		}
		fmt.Fprintf(paths[class], "M%s %sv-%s", num(cx), num(base), num(h))
	}
	stack := func(cx, base float64, total, scale int, parts []int, cls []string) {
		if total == 0 {
			return
		}
		h := min(max(barH*float64(total)/float64(scale), 1.5), barH)
		hs := make([]float64, len(parts))
		rest := h
		for i := 1; i < len(parts); i++ {
			if parts[i] > 0 {
				hs[i] = max(h*float64(parts[i])/float64(total), 2)
				rest -= hs[i]
			}
		}
		if parts[0] > 0 {
			hs[0] = max(rest, 1)
		}
		y := base
		for i := range parts {
			seg(cls[i], cx, y, hs[i])
			y -= hs[i]
		}
	}
	for _, l := range lanes {
		for i, s := range l.slices {
			t := time.Duration((int64(i)*2 + 1) * int64(end) / (2 * timelineSlices))
			cx := x(t)
			if ackMax > 0 {
				if s[fOps] > 0 {
					seg("b-ops", cx, l.top+ackTop+barH, barHeight(s[fOps], ackMax))
				}
				if s[fAcked] > 0 {
					seg("b-acked", cx, l.top+ackTop+barH, barHeight(s[fAcked], ackMax))
				}
			}
			stack(cx, l.top+casTop+barH, s[fCASOK]+s[fCASRefused]+s[fCASAmbiguous], casMax,
				[]int{s[fCASOK], s[fCASRefused], s[fCASAmbiguous]}, []string{"b-cas-ok", "b-cas-ref", "b-cas-amb"})
			ok := s[fStore] - s[fStoreFail] - s[fStoreAmbiguous]
			stack(cx, l.top+storeTop+barH, s[fStore], storeMax,
				[]int{ok, s[fStoreFail], s[fStoreAmbiguous]}, []string{"b-st-ok", "b-st-fail", "b-st-amb"})
			if s[fRules] > 0 {
				seg("b-rule", cx, l.top+storeTop+4, 4)
			}
		}
	}
	w := round1(max(sliceW-0.8, 0.8))
	var out []barView
	for _, c := range classes {
		if paths[c].Len() == 0 {
			continue
		}
		bw := w
		if c == "b-acked" {
			bw = round1(max(sliceW*0.5, 0.6))
		}
		out = append(out, barView{Class: c, W: bw, D: paths[c].String()})
	}
	return out
}

// barScale is the count that fills a row: the 98th percentile of the non-empty slices, so a
// single burst (an auditor's final listing, a retry storm) does not flatten every other bar.
// Slices above it are drawn at full height; the hover read-out has the exact counts.
func barScale(counts []int) int {
	var nz []int
	for _, c := range counts {
		if c > 0 {
			nz = append(nz, c)
		}
	}
	if len(nz) == 0 {
		return 1
	}
	slices.Sort(nz)
	return max(nz[(len(nz)-1)*98/100], 1)
}

func barHeight(n, scale int) float64 {
	return min(max(barH*float64(n)/float64(scale), 1.5), barH)
}

func legend() []legendItem {
	var out []legendItem
	for _, f := range []family{famOwn, famHand, famTerm, famRead, famSeg, famCAS, famLife} {
		oc := " o-ok"
		if f.class == famCAS.class {
			oc = " o-fail" // a CAS is drawn individually only when it did not succeed
		}
		out = append(out, legendItem{Class: "m " + f.class + oc, D: f.glyph(8, 8), Label: f.label})
	}
	out = append(out,
		legendItem{Class: "m k-own o-fail", D: glyphTriUp(8, 8), Label: "hollow: refused / fenced"},
		legendItem{Class: "m k-own o-amb", D: glyphTriUp(8, 8), Label: "orange outline: ambiguous"},
		legendItem{Class: "ring", D: glyphRing(8, 8), Label: "counterexample event"},
	)
	return out
}

// Glyphs, as path data centred on (x, y).
var (
	glyphTriUp    = glyph(0, -5, "l5 9h-10z")
	glyphTriRight = glyph(-4, -5, "l9 5-9 5z")
	glyphSquare   = glyph(-4, -4, "h8v8h-8z")
	glyphCircle   = glyph(-4, 0, "a4 4 0 1 0 8 0a4 4 0 1 0-8 0")
	glyphDiamond  = glyph(0, -5, "l5 5-5 5-5-5z")
	glyphCross    = glyph(-4, -4, "l8 8m0-8-8 8")
	glyphBar      = glyph(-1, -7, "h2v14h-2z")
	glyphDot      = glyph(-3, 0, "a3 3 0 1 0 6 0a3 3 0 1 0-6 0")
	glyphRing     = glyph(-8, 0, "a8 8 0 1 0 16 0a8 8 0 1 0-16 0")
)

// glyph is a shape whose path starts at (x+dx, y+dy).
func glyph(dx, dy float64, path string) func(x, y float64) string {
	return func(x, y float64) string { return fmt.Sprintf("M%s %s%s", num(x+dx), num(y+dy), path) }
}

// timeTicks picks about ten round instants in [0, end].
func timeTicks(end time.Duration) []time.Duration {
	if end <= 0 {
		return nil
	}
	step := niceCeil(end / 10)
	var out []time.Duration
	for t := time.Duration(0); t <= end; t += step {
		out = append(out, t)
	}
	return out
}

func fmtTick(t time.Duration) string {
	switch {
	case t == 0:
		return "0"
	case t%time.Second == 0:
		return fmt.Sprintf("%ds", t/time.Second)
	case t < time.Second:
		return strconv.FormatFloat(float64(t)/float64(time.Millisecond), 'f', -1, 64) + "ms"
	default:
		return strconv.FormatFloat(t.Seconds(), 'f', -1, 64) + "s"
	}
}

func round1(f float64) float64 { return math.Round(f*10) / 10 }

func round3(f float64) float64 { return math.Round(f*1000) / 1000 }

// num formats a coordinate with at most one decimal.
func num(f float64) string { return strconv.FormatFloat(round1(f), 'f', -1, 64) }
