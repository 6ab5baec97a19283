package reports

import (
	"time"
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
