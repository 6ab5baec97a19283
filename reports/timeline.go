package reports

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

// Timeline geometry, in SVG user units (the SVG scales to the page width).
const (
	svgWidth   = 1200
	laneLabelW = 118.0 // the label column left of the plot
	svgRight   = 14.0
	axisH      = 26.0
	laneH      = 96.0

	// Rows of a lane, relative to its top: protocol steps, CAS outcomes, client ops and acks,
	// store calls.
	stepsTop, stepsH = 6.0, 30.0
	casTop, barH     = 40.0, 14.0
	ackTop           = 58.0
	storeTop         = 76.0

	// timelineSlices is the number of time slices frequent events are aggregated into.
	timelineSlices = 200
	// markBudget caps the individually drawn protocol marks. Groups of one writer and kind are
	// drawn individually, smallest first, while they fit; larger groups are aggregated per
	// slice. Counterexample events are always drawn individually, beyond the budget.
	markBudget = 600
)

// Per-slice counters of a lane, in the order the tooltip script reads them.
const (
	fOps = iota
	fAcks
	fAcked
	fSyncs
	fCASOK
	fCASRefused
	fCASAmbiguous
	fStore
	fStoreFail
	fStoreAmbiguous
	fRules
	nFields
)

type laneAcc struct {
	name   string
	top    float64
	slices [][nFields]int
}

func laneOrder(a, b string) int {
	rank := func(s string) int {
		switch s {
		case "":
			return 2
		case "auditor":
			return 1
		}
		return 0
	}
	if c := cmp.Compare(rank(a), rank(b)); c != 0 {
		return c
	}
	return cmp.Compare(a, b)
}

// timelineLayout is the state shared by the steps that lay out one timeline: the time scale,
// the lanes and the view being filled.
type timelineLayout struct {
	tv      timelineView
	end     time.Duration
	names   []string
	lanes   []*laneAcc
	laneOf  map[string]*laneAcc
	bottom  float64
	sliceW  float64
	x       func(time.Duration) float64
	sliceOf func(time.Duration) int
}

// markGroup is the writer and kind of a group of protocol marks.
type markGroup struct {
	lane string
	kind history.Kind
}

// buildTimeline lays out the timeline of a cell.
func buildTimeline(ev []history.Event, ledger []history.LedgerEntry, res checker.Result, first *history.Event) timelineView {
	l, ok := newTimelineLayout(ev, ledger)
	if !ok {
		return l.tv
	}
	l.axisAndLanes()
	l.faultWindows(ev)
	l.pauses(ev)
	hot := counterexampleEvents(res)
	groups, hotEvents := l.aggregate(ev, ledger, hot)
	l.tv.Bars = bars(l.lanes, l.x, l.sliceW, l.end)
	l.individualMarks(groups)
	l.hotMarks(hotEvents, hot, first)
	l.tv.Legend = legend()
	l.tooltipData()
	return l.tv
}

// newTimelineLayout finds the run's end and its lanes, one per writer, and sets up the time
// scale; it returns false for a run with nothing to draw.
func newTimelineLayout(ev []history.Event, ledger []history.LedgerEntry) (*timelineLayout, bool) {
	l := &timelineLayout{tv: timelineView{Width: svgWidth}}
	writers := map[string]bool{}
	for i := range ev {
		l.end = max(l.end, ev[i].Complete, ev[i].Invoke)
		k := ev[i].Kind
		if (k == history.FaultStart || k == history.FaultEnd) && ev[i].Writer == "" {
			continue
		}
		writers[ev[i].Writer] = true
	}
	for i := range ledger {
		l.end = max(l.end, ledger[i].Done, ledger[i].Time)
		writers[ledger[i].Writer] = true
	}
	if len(writers) == 0 {
		l.tv.Empty = true
		l.tv.Height = 40
		return l, false
	}
	if l.end <= 0 {
		l.end = time.Millisecond
	}
	end := l.end
	l.tv.End = end
	l.tv.Span = "0 – " + fmtAt(end)
	l.tv.Slice = fmtDur(end / timelineSlices)

	for w := range writers {
		l.names = append(l.names, w)
	}
	slices.SortFunc(l.names, laneOrder)
	l.lanes = make([]*laneAcc, len(l.names))
	l.laneOf = map[string]*laneAcc{}
	for i, w := range l.names {
		l.lanes[i] = &laneAcc{name: w, top: axisH + float64(i)*laneH, slices: make([][nFields]int, timelineSlices)}
		l.laneOf[w] = l.lanes[i]
	}
	l.bottom = axisH + float64(len(l.lanes))*laneH
	l.tv.Height = int(l.bottom) + 6

	plotW := svgWidth - laneLabelW - svgRight
	l.x = func(t time.Duration) float64 { return laneLabelW + plotW*float64(t)/float64(end) }
	l.sliceW = plotW / timelineSlices
	l.sliceOf = func(t time.Duration) int {
		return min(max(int(int64(t)*timelineSlices/int64(end)), 0), timelineSlices-1)
	}
	return l, true
}

// axisAndLanes adds the time ticks and the lane backgrounds with their row labels.
func (l *timelineLayout) axisAndLanes() {
	for _, t := range timeTicks(l.end) {
		l.tv.Ticks = append(l.tv.Ticks, tick{X: round1(l.x(t)), Label: fmtTick(t)})
	}
	for i, ln := range l.lanes {
		label := ln.name
		if label == "" {
			label = "(run)"
		}
		l.tv.Lanes = append(l.tv.Lanes, laneView{Writer: label, Y: ln.top, H: laneH, Odd: i%2 == 1, Rows: []tick{
			{X: ln.top + stepsTop + stepsH - 4, Label: "steps"},
			{X: ln.top + casTop + barH, Label: "CAS"},
			{X: ln.top + ackTop + barH, Label: "ops/acks"},
			{X: ln.top + storeTop + barH, Label: "store"},
		}})
	}
}

// faultWindows adds the fault windows. A label that would run into the previous one of its
// lane is left out; the hover title still names the window.
func (l *timelineLayout) faultWindows(ev []history.Event) {
	labelEnd := map[string]float64{}
	for _, w := range faultWindows(ev, l.end) {
		title := fmt.Sprintf("fault %s on %s: %s – %s", w.name, orAll(w.writer), fmtAt(w.start), fmtAt(w.end))
		if w.open {
			title += " (never healed)"
		}
		x0, x1 := l.x(w.start), l.x(w.end)
		wpx := max(x1-x0, 1.5)
		label := w.name
		if wpx < 8*float64(len(label))*0.6 || x0 < labelEnd[w.writer] {
			label = "" // too narrow to read, or on top of another label; the hover title names it
		} else {
			labelEnd[w.writer] = x0 + 8*float64(len(label))*0.6
		}
		if w.writer == "" {
			l.tv.Faults = append(l.tv.Faults, rectView{X: round1(x0), Y: axisH, W: round1(wpx), H: l.bottom - axisH, Label: label, Title: title})
			continue
		}
		if ln := l.laneOf[w.writer]; ln != nil {
			l.tv.Faults = append(l.tv.Faults, rectView{X: round1(x0), Y: ln.top + 1, W: round1(wpx), H: laneH - 2, Label: label, Title: title})
		}
	}
}

// pauses adds a rectangle for every pause, up to its resume or the end of the run.
func (l *timelineLayout) pauses(ev []history.Event) {
	pausedAt := map[string]time.Duration{}
	for i := range ev {
		e := &ev[i]
		switch e.Kind {
		case history.Pause:
			if _, ok := pausedAt[e.Writer]; !ok {
				pausedAt[e.Writer] = e.Invoke
			}
		case history.Resume:
			if t0, ok := pausedAt[e.Writer]; ok {
				l.tv.Paused = append(l.tv.Paused, pauseRect(l.laneOf[e.Writer], l.x(t0), l.x(e.Invoke), e.Writer, t0, e.Invoke))
				delete(pausedAt, e.Writer)
			}
		}
	}
	for _, w := range l.names {
		if t0, ok := pausedAt[w]; ok {
			l.tv.Paused = append(l.tv.Paused, pauseRect(l.laneOf[w], l.x(t0), l.x(l.end), w, t0, l.end))
		}
	}
}

// counterexampleEvents maps the ID of every event of a failed invariant's counterexample to
// the invariants it proves broken.
func counterexampleEvents(res checker.Result) map[int64][]string {
	hot := map[int64][]string{}
	for _, ir := range res.Invariants {
		if ir.Status != checker.Fail {
			continue
		}
		for _, id := range ir.Counterexample {
			if !slices.Contains(hot[id], ir.Name) {
				hot[id] = append(hot[id], ir.Name)
			}
		}
	}
	return hot
}

// aggregate counts frequent events per slice and lane, and collects the rare protocol steps
// (grouped by lane and kind) and the counterexample events that get individual marks.
func (l *timelineLayout) aggregate(ev []history.Event, ledger []history.LedgerEntry, hot map[int64][]string) (map[markGroup][]*history.Event, []*history.Event) {
	groups := map[markGroup][]*history.Event{}
	var hotEvents []*history.Event
	for i := range ev {
		e := &ev[i]
		ln := l.laneOf[e.Writer]
		if ln == nil {
			continue
		}
		_, isHot := hot[e.ID]
		if isHot {
			hotEvents = append(hotEvents, e)
		}
		countEvent(&ln.slices[l.sliceOf(markAt(e))], e)
		if individual(e) && !isHot {
			k := markGroup{e.Writer, e.Kind}
			groups[k] = append(groups[k], e)
		}
	}
	for i := range ledger {
		if ledger[i].Rule == "" {
			continue
		}
		if ln := l.laneOf[ledger[i].Writer]; ln != nil {
			ln.slices[l.sliceOf(ledger[i].Time)][fRules]++
		}
	}
	return groups, hotEvents
}

// countEvent adds e to the counters of its slice.
func countEvent(s *[nFields]int, e *history.Event) {
	switch {
	case e.Kind == history.Op:
		s[fOps]++
	case e.Kind == history.Ack:
		s[fAcks]++
		s[fAcked] += len(e.Ops)
	case e.Kind == history.Sync:
		s[fSyncs]++
	case e.Kind == history.CAS:
		switch e.Outcome {
		case history.OK, "":
			s[fCASOK]++
		case history.Ambiguous:
			s[fCASAmbiguous]++
		default:
			s[fCASRefused]++
		}
	case e.Kind.StoreCall():
		s[fStore]++
		switch e.Outcome {
		case history.OK, "":
		case history.Ambiguous:
			s[fStoreAmbiguous]++
		default:
			s[fStoreFail]++
		}
	}
}

// individualMarks draws whole groups one mark per event, smallest first, while the budget
// lasts; larger groups get one mark per slice with a count.
func (l *timelineLayout) individualMarks(groups map[markGroup][]*history.Event) {
	keys := make([]markGroup, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b markGroup) int {
		if c := cmp.Compare(len(groups[a]), len(groups[b])); c != 0 {
			return c
		}
		if c := laneOrder(a.lane, b.lane); c != 0 {
			return c
		}
		return cmp.Compare(a.kind, b.kind)
	})
	budget := markBudget
	var aggregated []string
	for _, k := range keys {
		g := groups[k]
		ln := l.laneOf[k.lane]
		f := families[k.kind]
		if len(g) <= budget {
			budget -= len(g)
			for _, e := range g {
				l.tv.Marks = append(l.tv.Marks, markView{
					Class: "m " + f.class + " o-" + outcomeClass(e.Outcome),
					D:     f.glyph(l.x(markAt(e)), ln.top+stepsTop+f.level),
					Title: eventTitle(e),
				})
			}
			continue
		}
		budget = 0
		aggregated = append(aggregated, fmt.Sprintf("%s of %s (%d)", k.kind, orRun(k.lane), len(g)))
		l.tv.Marks = append(l.tv.Marks, aggregateMarks(g, f, ln.top+stepsTop+f.level, l.sliceOf, l.x, l.end)...)
	}
	if len(aggregated) > 0 {
		l.tv.Notes = append(l.tv.Notes, fmt.Sprintf("Too many to draw one by one, shown one mark per %s slice with a count: %s.",
			l.tv.Slice, strings.Join(aggregated, ", ")))
	}
	slices.SortStableFunc(l.tv.Marks, func(a, b markView) int { return cmp.Compare(a.Class, b.Class) })
}

// hotMarks draws the counterexample events last, so they sit on top, and the line of the
// first violation.
func (l *timelineLayout) hotMarks(hotEvents []*history.Event, hot map[int64][]string, first *history.Event) {
	slices.SortFunc(hotEvents, func(a, b *history.Event) int {
		return cmp.Or(cmp.Compare(markAt(a), markAt(b)), cmp.Compare(a.ID, b.ID))
	})
	for _, e := range hotEvents {
		ln := l.laneOf[e.Writer]
		xx := l.x(markAt(e))
		y := hotY(e, ln.top)
		f, ok := families[e.Kind]
		if !ok || (f.class == famCAS.class && outcomeClass(e.Outcome) == "ok") {
			// An accepted CAS is not drawn as a cross, which reads as a refusal.
			f = famDot
		}
		m := markView{
			Class: "m " + f.class + " o-" + outcomeClass(e.Outcome),
			D:     f.glyph(xx, y),
			Ring:  glyphRing(xx, y),
			Title: eventTitle(e) + "\ncounterexample of " + strings.Join(hot[e.ID], ", "),
		}
		if first != nil && e.ID == first.ID {
			m.ID = "first-violation"
			l.tv.Violation = &lineView{X: round1(xx), Y1: axisH - 2, Y2: l.bottom, Anchor: "start",
				Label: fmt.Sprintf("first violation: #%d %s by %s", e.ID, e.Kind, orRun(e.Writer))}
			if xx > svgWidth*0.7 {
				l.tv.Violation.Anchor = "end"
			}
		}
		l.tv.Hot = append(l.tv.Hot, m)
	}
}

// tooltipData is the per-slice counters the hover script reads.
func (l *timelineLayout) tooltipData() {
	l.tv.Data = tlData{Left: laneLabelW, SliceW: round3(l.sliceW), N: timelineSlices,
		SliceMS: float64(l.end) / timelineSlices / float64(time.Millisecond)}
	for _, ln := range l.lanes {
		tl := tlLane{W: orRun(ln.name), Y0: ln.top, Y1: ln.top + laneH, S: make([][]int, timelineSlices)}
		for i := range ln.slices {
			if ln.slices[i] != ([nFields]int{}) {
				tl.S[i] = ln.slices[i][:]
			}
		}
		l.tv.Data.Lanes = append(l.tv.Data.Lanes, tl)
	}
}
