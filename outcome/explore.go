package outcome

import (
	"time"

	"github.com/fencebench/fencebench/history"
)

// Exploration is what one `fencebench explore` produced: how many generated schedules ran
// and how fast, which fault kinds met which protocol phases, and every failure found, shrunk
// to a scenario and replayed. It is written as explore.json beside explore.html in the
// exploration's folder.
type Exploration struct {
	ID       string        `json:"id"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	// Stack is where the schedules ran ("sim", "local", ...); Confirm is the stack a shrunk
	// failure was re-run on ("" when confirmation was off).
	Stack   string `json:"stack"`
	Confirm string `json:"confirm,omitempty"`
	Variant string `json:"variant"` // the protocol variant explored ("correct" by default)
	Client  string `json:"client,omitempty"`
	Seed    uint64 `json:"seed"`   // the first schedule's seed; schedule i uses Seed+i
	Budget  string `json:"budget"` // as given: "2000 schedules", "10m0s"
	// ShardK of ShardN, when the exploration is one shard of a larger one (schedule indices
	// i with i mod N = K, K from 0).
	ShardK int `json:"shard_k,omitempty"`
	ShardN int `json:"shard_n,omitempty"`
	// Schedules ran to a verdict; Passed + Failed + Inconclusive + Errors == Schedules.
	Schedules    int     `json:"schedules"`
	Passed       int     `json:"passed"`
	Failed       int     `json:"failed"`
	Inconclusive int     `json:"inconclusive"`
	Errors       int     `json:"errors"`
	Rate         float64 `json:"rate"` // schedules per second of wall time, checker included
	// FirstFailure is the 1-based index of the first failing schedule, 0 when none failed.
	FirstFailure int `json:"first_failure,omitempty"`
	// Stopped says why the exploration ended: "budget", "time", "interrupted", "first
	// failure".
	Stopped string `json:"stopped"`
	// Resumed counts the times an exploration stopping at its first failure went on because
	// that failure's shrunk scenario did not replay its violation on every replay.
	Resumed  int      `json:"resumed,omitempty"`
	Coverage Coverage `json:"coverage"`
	// Reach is what the schedules reached, by feature (see explore.Features).
	Reach    *Reach            `json:"reach,omitempty"`
	Failures []ExploredFailure `json:"failures,omitempty"`
	// ErrorSamples are a few harness errors, each with the seed that hit it.
	ErrorSamples []string `json:"error_samples,omitempty"`
	// InconclusiveWhy counts the inconclusive schedules by the checker's first reason, its
	// numbers blanked ("only # ops acknowledged").
	InconclusiveWhy map[string]int `json:"inconclusive_why,omitempty"`
}

// Reach is how far an exploration's schedules got, by the features explore.Features names: how
// many distinct features they reached, how many of each class ("rule", "pair", "seq", "depth",
// ...), the 1-based index of the first schedule that reached a feature of each class, and the
// count of distinct features after each tenth of the schedules (Curve). Kept is how many
// schedules were first to reach some feature. Guided is set when the exploration was
// coverage-guided; Mutated is then how many schedules were mutations of kept ones rather
// than fresh draws.
type Reach struct {
	Guided   bool           `json:"guided"`
	Features int            `json:"features"`
	ByClass  map[string]int `json:"by_class,omitempty"`
	FirstOf  map[string]int `json:"first_of,omitempty"`
	Kept     int            `json:"kept"`
	Mutated  int            `json:"mutated"`
	Curve    []int          `json:"curve,omitempty"`
}

// Coverage counts which fault kinds met which protocol phases across an exploration: a fault
// "meets" a phase when it fires (a request rule) or is open (a network or protocol fault)
// while a writer of the schedule is in that phase.
type Coverage struct {
	// Faults are the rows (fault kinds: partition, blackhole, drop-response, status-409, ...),
	// Phases the columns (claim, seal, sync, cas, transfer, handoff, revert, gc, hydrate,
	// recover), both in display order and listing every kind and phase the generator can
	// reach, hit or not.
	Faults []string `json:"faults"`
	Phases []string `json:"phases"`
	// Hits[fault][phase] is how many times that fault met that phase.
	Hits map[string]map[string]int `json:"hits"`
	// PhaseSeen[phase] is how many schedules reached the phase at all, faulted or not.
	PhaseSeen map[string]int `json:"phase_seen"`
}

// Add counts n more meetings of fault and phase.
func (c *Coverage) Add(fault, phase string, n int) {
	if c.Hits == nil {
		c.Hits = map[string]map[string]int{}
	}
	if c.Hits[fault] == nil {
		c.Hits[fault] = map[string]int{}
	}
	c.Hits[fault][phase] += n
}

// Merge adds every count of o.
func (c *Coverage) Merge(o Coverage) {
	for f, row := range o.Hits {
		for p, n := range row {
			c.Add(f, p, n)
		}
	}
	for p, n := range o.PhaseSeen {
		if c.PhaseSeen == nil {
			c.PhaseSeen = map[string]int{}
		}
		c.PhaseSeen[p] += n
	}
}

// Unreached lists the phases no schedule reached, and the phases no fault met, in Phases
// order.
func (c *Coverage) Unreached() (neverReached, neverFaulted []string) {
	for _, p := range c.Phases {
		if c.PhaseSeen[p] == 0 {
			neverReached = append(neverReached, p)
		}
		hit := false
		for _, row := range c.Hits {
			if row[p] > 0 {
				hit = true
				break
			}
		}
		if !hit {
			neverFaulted = append(neverFaulted, p)
		}
	}
	return neverReached, neverFaulted
}

// ExploredFailure is one failing schedule, shrunk and replayed.
type ExploredFailure struct {
	// Invariants are the invariants the original schedule violated, sorted; failures are
	// grouped by them. Target is the one the shrinker preserved.
	Invariants []history.Invariant `json:"invariants"`
	Target     history.Invariant   `json:"target"`
	Seed       uint64              `json:"seed"`  // the schedule's seed (generation and run)
	Index      int                 `json:"index"` // 1-based schedule number
	// Steps before and after shrinking; Writers and Rate after shrinking.
	Steps       int     `json:"steps"`
	ShrunkSteps int     `json:"shrunk_steps"`
	Writers     int     `json:"writers"`
	Rate        float64 `json:"rate"`
	ShrinkRuns  int     `json:"shrink_runs"` // candidate runs the shrinker spent
	// Pinned says the shrink started from the schedule with its timed steps tied to the
	// protocol events they followed in the failing run (explore.Pin), which reproduced it.
	Pinned bool `json:"pinned,omitempty"`
	// Scenario is the shrunk scenario's file, relative to the exploration folder, and YAML
	// its text; Original the unshrunk schedule's file.
	Scenario string `json:"scenario"`
	YAML     string `json:"yaml"`
	Original string `json:"original,omitempty"`
	// Cell is the shrunk scenario's cell folder (relative), whose report.html shows the
	// violation; Narrative the checker's account of it.
	Cell      string `json:"cell,omitempty"`
	Narrative string `json:"narrative,omitempty"`
	// FoundCell is the failing schedule's own run as it happened (cell folder, relative),
	// kept whether or not the shrunk scenario replays it.
	FoundCell string `json:"found_cell,omitempty"`
	// Replays of the shrunk scenario on the exploring stack, and how many violated Target.
	Replays    int `json:"replays"`
	ReplayHits int `json:"replay_hits"`
	// Confirmed is "reproduced", "not reproduced", "not tried" or "error: <why>"; on the
	// Confirm stack. ConfirmCell is that run's cell folder (relative), when there is one.
	Confirmed   string `json:"confirmed"`
	ConfirmCell string `json:"confirm_cell,omitempty"`
	// Rerun is the command that replays the shrunk scenario.
	Rerun string `json:"rerun"`
}
