package reports

import (
	"path"
	"path/filepath"
	"slices"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/outcome"
)

// Stability is the data of a stability page: one plan (a catalogue with its kill matrix) run
// several rounds per store client, and per cell how often its verdict differed from the one
// expected of it (pass for a correct cell, killed for a kill cell). It is written as
// stability.html and stability.json beside the rounds' run folders.
type Stability struct {
	Command string   `json:"command,omitempty"`
	Rounds  int      `json:"rounds"`
	Clients []string `json:"clients"`
	// Hog is how many CPU-burning processes ran beside the bench (0: none).
	Hog      int            `json:"hog"`
	Duration time.Duration  `json:"duration"`
	Runs     []StabilityRun `json:"runs"`
	// Cells holds one row per cell and client, in plan order; flipping cells first on the page.
	Cells []StabilityCell `json:"cells"`
	// Unexpected counts the verdicts, over every round, that differed from the expected one;
	// Flipping the rows with at least one.
	Unexpected int `json:"unexpected"`
	Flipping   int `json:"flipping"`
}

// StabilityRun is one round with one client: a whole run, in its own folder.
type StabilityRun struct {
	Round    int                     `json:"round"`
	Client   string                  `json:"client"`
	Seed     uint64                  `json:"seed"`
	Dir      string                  `json:"dir"`
	ExitCode int                     `json:"exit_code"`
	Counts   map[checker.Verdict]int `json:"counts"`
	Error    string                  `json:"error,omitempty"`
}

// StabilityCell is one cell with one client across the rounds.
type StabilityCell struct {
	ID       string `json:"id"`
	Client   string `json:"client"`
	Scenario string `json:"scenario"`
	Variant  string `json:"variant"`
	Kill     bool   `json:"kill,omitempty"`
	// Runs is how many rounds ran the cell, Unexpected how many of them gave another verdict
	// than the expected one; Rate is Unexpected / Runs.
	Runs       int             `json:"runs"`
	Unexpected int             `json:"unexpected"`
	Rate       float64         `json:"rate"`
	Verdicts   []StabilityMark `json:"verdicts"`
	Expected   string          `json:"expected"`
	Seen       map[string]int  `json:"seen"`
}

// StabilityMark is one round's verdict of a cell, linked to its cell report.
type StabilityMark struct {
	Round int             `json:"round"`
	Label string          `json:"label"`
	Class checker.Verdict `json:"class"`
	Link  string          `json:"link,omitempty"`
	Note  string          `json:"note,omitempty"`
	Seed  uint64          `json:"seed"`
}

// AddRun records round's run with client, whose folder is dir relative to the stability page
// (sum nil when the run could not be made: err says why).
func (s *Stability) AddRun(round int, client, dir string, seed uint64, sum *outcome.Summary, err error) {
	run := StabilityRun{Round: round, Client: client, Seed: seed, Dir: filepath.ToSlash(dir)}
	if err != nil {
		run.Error, run.ExitCode = err.Error(), outcome.ExitHarness
		s.Runs = append(s.Runs, run)
		return
	}
	run.ExitCode, run.Counts = sum.ExitCode(), sum.Counts()
	s.Runs = append(s.Runs, run)
	for _, c := range sum.Cells {
		row := s.row(c, client)
		b := cellBadge(c)
		note := b.Title
		if c.Error != "" {
			note = c.Error
		}
		row.Runs++
		row.Seen[b.Label]++
		if c.Verdict != checker.Pass {
			row.Unexpected++
			s.Unexpected++
		}
		row.Rate = float64(row.Unexpected) / float64(row.Runs)
		row.Verdicts = append(row.Verdicts, StabilityMark{Round: round, Label: b.Label, Class: checker.Verdict(b.Class),
			Note: note, Seed: c.Seed, Link: path.Join(filepath.ToSlash(dir), c.ID, "report.html")})
	}
}

func (s *Stability) row(c *outcome.CellResult, client string) *StabilityCell {
	for i := range s.Cells {
		if s.Cells[i].ID == c.ID && s.Cells[i].Client == client {
			return &s.Cells[i]
		}
	}
	expected := "pass"
	if c.Kill {
		expected = labelKilled
	}
	s.Cells = append(s.Cells, StabilityCell{ID: c.ID, Client: client, Scenario: c.Scenario, Variant: c.Variant,
		Kill: c.Kill, Expected: expected, Seen: map[string]int{}})
	return &s.Cells[len(s.Cells)-1]
}

// ExitCode is 0 when every verdict of every round was the expected one, else the worst exit
// code of the rounds (1 fail, 2 inconclusive, 255 a harness error).
func (s *Stability) ExitCode() int {
	worst := outcome.ExitPass
	for _, r := range s.Runs {
		worst = max(worst, r.ExitCode)
	}
	if s.Unexpected == 0 && worst != outcome.ExitHarness {
		return outcome.ExitPass
	}
	return worst
}

// WriteStability writes dir/stability.html and dir/stability.json.
func WriteStability(dir string, s Stability) error {
	s.Flipping = 0
	for _, c := range s.Cells {
		if c.Unexpected > 0 {
			s.Flipping++
		}
	}
	view := s
	view.Cells = slices.Clone(s.Cells)
	slices.SortStableFunc(view.Cells, func(a, b StabilityCell) int {
		switch {
		case a.Rate > b.Rate:
			return -1
		case a.Rate < b.Rate:
			return 1
		}
		return 0
	})
	return writePageAndJSON(dir, "stability", view, s)
}
