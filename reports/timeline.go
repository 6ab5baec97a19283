package reports

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
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

// timelineView is the geometry of the SVG timeline: everything is computed here, so the
// template only emits elements.
type timelineView struct {
	Width  int           `json:"width"`
	Height int           `json:"height"`
	End    time.Duration `json:"-"`
	Span   string        `json:"span"`
	Slice  string        `json:"slice"`
	Empty  bool          `json:"empty,omitempty"`
	Ticks  []tick        `json:"ticks,omitempty"`
	Lanes  []laneView    `json:"lanes,omitempty"`
	Faults []rectView    `json:"faults,omitempty"`
	Paused []rectView    `json:"paused,omitempty"`
	Bars   []barView     `json:"bars,omitempty"`
	Marks  []markView    `json:"marks,omitempty"`
	Hot    []markView    `json:"hot,omitempty"`
	// Violation is the vertical line at the first violation.
	Violation *lineView    `json:"violation,omitempty"`
	Legend    []legendItem `json:"legend,omitempty"`
	Notes     []string     `json:"notes,omitempty"`
	// Data feeds the hover read-out of the aggregated rows.
	Data tlData `json:"-"`
}

type tick struct {
	X     float64 `json:"x"`
	Label string  `json:"label"`
}

type laneView struct {
	Writer string  `json:"writer"`
	Y      float64 `json:"y"`
	H      float64 `json:"h"`
	Odd    bool    `json:"odd,omitempty"`
	Rows   []tick  `json:"rows"` // X holds the row's baseline Y
}

type rectView struct {
	X     float64 `json:"x"`
	Y     float64 `json:"y"`
	W     float64 `json:"w"`
	H     float64 `json:"h"`
	Label string  `json:"label,omitempty"`
	Title string  `json:"title"`
}

// barView is one class of aggregated bars, drawn as one stroked path.
type barView struct {
	Class string  `json:"class"`
	W     float64 `json:"w"`
	D     string  `json:"d"`
}

type markView struct {
	ID    string `json:"id,omitempty"`
	Class string `json:"class"`
	D     string `json:"d"`
	// Ring outlines a counterexample event.
	Ring  string `json:"ring,omitempty"`
	Title string `json:"title"`
}

type lineView struct {
	X      float64 `json:"x"`
	Anchor string  `json:"anchor"` // text-anchor of the label
	Y1     float64 `json:"y1"`
	Y2     float64 `json:"y2"`
	Label  string  `json:"label"`
}

type legendItem struct {
	Class string `json:"class"`
	D     string `json:"d"`
	Label string `json:"label"`
}

// tlData is what the hover script needs: where lanes and slices are, and their counters.
type tlData struct {
	Left    float64  `json:"left"`
	SliceW  float64  `json:"sw"`
	N       int      `json:"n"`
	SliceMS float64  `json:"slice_ms"`
	Lanes   []tlLane `json:"lanes"`
}

type tlLane struct {
	W  string  `json:"w"`
	Y0 float64 `json:"y0"`
	Y1 float64 `json:"y1"`
	S  [][]int `json:"s"`
}

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

// buildTimeline lays out the timeline of a cell.
func buildTimeline(ev []history.Event, ledger []history.LedgerEntry, res checker.Result, first *history.Event) timelineView {
	tv := timelineView{Width: svgWidth}
	var end time.Duration
	writers := map[string]bool{}
	for i := range ev {
		end = max(end, ev[i].Complete, ev[i].Invoke)
		k := ev[i].Kind
		if (k == history.FaultStart || k == history.FaultEnd) && ev[i].Writer == "" {
			continue
		}
		writers[ev[i].Writer] = true
	}
	for i := range ledger {
		end = max(end, ledger[i].Done, ledger[i].Time)
		writers[ledger[i].Writer] = true
	}
	if len(writers) == 0 {
		tv.Empty = true
		tv.Height = 40
		return tv
	}
	if end <= 0 {
		end = time.Millisecond
	}
	tv.End = end
	tv.Span = "0 – " + fmtAt(end)
	tv.Slice = fmtDur(end / timelineSlices)

	names := make([]string, 0, len(writers))
	for w := range writers {
		names = append(names, w)
	}
	slices.SortFunc(names, laneOrder)
	lanes := make([]*laneAcc, len(names))
	laneOf := map[string]*laneAcc{}
	for i, w := range names {
		lanes[i] = &laneAcc{name: w, top: axisH + float64(i)*laneH, slices: make([][nFields]int, timelineSlices)}
		laneOf[w] = lanes[i]
	}
	bottom := axisH + float64(len(lanes))*laneH
	tv.Height = int(bottom) + 6

	plotW := svgWidth - laneLabelW - svgRight
	x := func(t time.Duration) float64 { return laneLabelW + plotW*float64(t)/float64(end) }
	sliceW := plotW / timelineSlices
	sliceOf := func(t time.Duration) int {
		return min(max(int(int64(t)*timelineSlices/int64(end)), 0), timelineSlices-1)
	}

	for _, t := range timeTicks(end) {
		tv.Ticks = append(tv.Ticks, tick{X: round1(x(t)), Label: fmtTick(t)})
	}
	for i, l := range lanes {
		label := l.name
		if label == "" {
			label = "(run)"
		}
		tv.Lanes = append(tv.Lanes, laneView{Writer: label, Y: l.top, H: laneH, Odd: i%2 == 1, Rows: []tick{
			{X: l.top + stepsTop + stepsH - 4, Label: "steps"},
			{X: l.top + casTop + barH, Label: "CAS"},
			{X: l.top + ackTop + barH, Label: "ops/acks"},
			{X: l.top + storeTop + barH, Label: "store"},
		}})
	}

	// Fault windows and pauses. A label that would run into the previous one of its lane is
	// left out; the hover title still names the window.
	labelEnd := map[string]float64{}
	for _, w := range faultWindows(ev, end) {
		title := fmt.Sprintf("fault %s on %s: %s – %s", w.name, orAll(w.writer), fmtAt(w.start), fmtAt(w.end))
		if w.open {
			title += " (never healed)"
		}
		x0, x1 := x(w.start), x(w.end)
		wpx := max(x1-x0, 1.5)
		label := w.name
		if wpx < 8*float64(len(label))*0.6 || x0 < labelEnd[w.writer] {
			label = "" // too narrow to read, or on top of another label; the hover title names it
		} else {
			labelEnd[w.writer] = x0 + 8*float64(len(label))*0.6
		}
		if w.writer == "" {
			tv.Faults = append(tv.Faults, rectView{X: round1(x0), Y: axisH, W: round1(wpx), H: bottom - axisH, Label: label, Title: title})
			continue
		}
		if l := laneOf[w.writer]; l != nil {
			tv.Faults = append(tv.Faults, rectView{X: round1(x0), Y: l.top + 1, W: round1(wpx), H: laneH - 2, Label: label, Title: title})
		}
	}
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
				tv.Paused = append(tv.Paused, pauseRect(laneOf[e.Writer], x(t0), x(e.Invoke), e.Writer, t0, e.Invoke))
				delete(pausedAt, e.Writer)
			}
		}
	}
	for _, w := range names {
		if t0, ok := pausedAt[w]; ok {
			tv.Paused = append(tv.Paused, pauseRect(laneOf[w], x(t0), x(end), w, t0, end))
		}
	}

	// Aggregate frequent events per slice; collect candidates for individual marks.
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
	type groupKey struct {
		lane string
		kind history.Kind
	}
	groups := map[groupKey][]*history.Event{}
	var hotEvents []*history.Event
	for i := range ev {
		e := &ev[i]
		l := laneOf[e.Writer]
		if _, isHot := hot[e.ID]; isHot && l != nil {
			hotEvents = append(hotEvents, e)
		}
		if l == nil {
			continue
		}
		s := &l.slices[sliceOf(markAt(e))]
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
		case strings.HasPrefix(string(e.Kind), "store."):
			s[fStore]++
			switch e.Outcome {
			case history.OK, "":
			case history.Ambiguous:
				s[fStoreAmbiguous]++
			default:
				s[fStoreFail]++
			}
		}
		if individual(e) {
			if _, isHot := hot[e.ID]; !isHot {
				k := groupKey{e.Writer, e.Kind}
				groups[k] = append(groups[k], e)
			}
		}
	}
	for i := range ledger {
		if ledger[i].Rule == "" {
			continue
		}
		if l := laneOf[ledger[i].Writer]; l != nil {
			l.slices[sliceOf(ledger[i].Time)][fRules]++
		}
	}

	tv.Bars = bars(lanes, x, sliceW, end)

	// Individual marks: whole groups, smallest first, while the budget lasts.
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
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
		l := laneOf[k.lane]
		f := families[k.kind]
		if len(g) <= budget {
			budget -= len(g)
			for _, e := range g {
				tv.Marks = append(tv.Marks, markView{
					Class: "m " + f.class + " o-" + outcomeClass(e.Outcome),
					D:     f.glyph(x(markAt(e)), l.top+stepsTop+f.level),
					Title: eventTitle(e),
				})
			}
			continue
		}
		budget = 0
		aggregated = append(aggregated, fmt.Sprintf("%s of %s (%d)", k.kind, orRun(k.lane), len(g)))
		tv.Marks = append(tv.Marks, aggregateMarks(g, f, l.top+stepsTop+f.level, sliceOf, x, end)...)
	}
	if len(aggregated) > 0 {
		tv.Notes = append(tv.Notes, fmt.Sprintf("Too many to draw one by one, shown one mark per %s slice with a count: %s.",
			tv.Slice, strings.Join(aggregated, ", ")))
	}
	slices.SortStableFunc(tv.Marks, func(a, b markView) int { return cmp.Compare(a.Class, b.Class) })

	// Counterexample events, drawn last so they sit on top.
	slices.SortFunc(hotEvents, func(a, b *history.Event) int {
		return cmp.Or(cmp.Compare(markAt(a), markAt(b)), cmp.Compare(a.ID, b.ID))
	})
	for _, e := range hotEvents {
		l := laneOf[e.Writer]
		xx := x(markAt(e))
		y := hotY(e, l.top)
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
			tv.Violation = &lineView{X: round1(xx), Y1: axisH - 2, Y2: bottom, Anchor: "start",
				Label: fmt.Sprintf("first violation: #%d %s by %s", e.ID, e.Kind, orRun(e.Writer))}
			if xx > svgWidth*0.7 {
				tv.Violation.Anchor = "end"
			}
		}
		tv.Hot = append(tv.Hot, m)
	}

	tv.Legend = legend()
	tv.Data = tlData{Left: laneLabelW, SliceW: round3(sliceW), N: timelineSlices,
		SliceMS: float64(end) / timelineSlices / float64(time.Millisecond)}
	for _, l := range lanes {
		tl := tlLane{W: orRun(l.name), Y0: l.top, Y1: l.top + laneH, S: make([][]int, timelineSlices)}
		for i := range l.slices {
			if l.slices[i] != ([nFields]int{}) {
				tl.S[i] = l.slices[i][:]
			}
		}
		tv.Data.Lanes = append(tv.Data.Lanes, tl)
	}
	return tv
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
	case strings.HasPrefix(string(e.Kind), "store."):
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
func glyphTriUp(x, y float64) string {
	return fmt.Sprintf("M%s %sl5 9h-10z", num(x), num(y-5))
}

func glyphTriRight(x, y float64) string {
	return fmt.Sprintf("M%s %sl9 5-9 5z", num(x-4), num(y-5))
}

func glyphSquare(x, y float64) string {
	return fmt.Sprintf("M%s %sh8v8h-8z", num(x-4), num(y-4))
}

func glyphCircle(x, y float64) string {
	return fmt.Sprintf("M%s %sa4 4 0 1 0 8 0a4 4 0 1 0-8 0", num(x-4), num(y))
}

func glyphDiamond(x, y float64) string {
	return fmt.Sprintf("M%s %sl5 5-5 5-5-5z", num(x), num(y-5))
}

func glyphCross(x, y float64) string {
	return fmt.Sprintf("M%s %sl8 8m0-8-8 8", num(x-4), num(y-4))
}

func glyphBar(x, y float64) string {
	return fmt.Sprintf("M%s %sh2v14h-2z", num(x-1), num(y-7))
}

func glyphDot(x, y float64) string {
	return fmt.Sprintf("M%s %sa3 3 0 1 0 6 0a3 3 0 1 0-6 0", num(x-3), num(y))
}

func glyphRing(x, y float64) string {
	return fmt.Sprintf("M%s %sa8 8 0 1 0 16 0a8 8 0 1 0-16 0", num(x-8), num(y))
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
