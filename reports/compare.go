package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/outcome"
)

// Comparison is the data of a comparison page: several stores put through the same
// certification probes (Kind "certify") or the same scenarios (Kind "run"), one row per probe
// and client or per cell, one column per store. It is written as compare.html and
// compare.json; the stores' own reports stay in their subfolders and are linked.
type Comparison struct {
	Kind    string `json:"kind"`
	Command string `json:"command,omitempty"`
	// ExitCode is the worst exit code of the stores.
	ExitCode int             `json:"exit_code"`
	Stores   []ComparedStore `json:"stores"`
	Rows     []ComparedRow   `json:"rows"`
	// Differing counts the rows whose stores disagree.
	Differing int `json:"differing"`
}

// ComparedStore is one column: a store and its overall outcome.
type ComparedStore struct {
	Name     string          `json:"name"`
	Server   string          `json:"server,omitempty"`
	Endpoint string          `json:"endpoint,omitempty"`
	Bucket   string          `json:"bucket,omitempty"`
	Prefix   string          `json:"prefix,omitempty"`
	Verdict  checker.Verdict `json:"verdict"`
	Summary  string          `json:"summary"`
	ExitCode int             `json:"exit_code"`
	// Report is the store's own report, relative to the comparison's folder ("" when none).
	Report string `json:"report,omitempty"`
	// Duration is how long the store's certification or run took.
	Duration time.Duration `json:"duration,omitempty"`
	// Enforces lists what the store was seen to enforce: each HARD probe it passed in every
	// round with every client, by name.
	Enforces []string `json:"enforces,omitempty"`
	// Wrong lists what the store got wrong or could not be judged on, each with its witness.
	Wrong []StoreFinding `json:"wrong,omitempty"`
	// Checks are the store's findings checked once more by a minimal request sequence of
	// their own, outside the probes, each said plainly: a property of the store, a
	// limitation of the bench, or not judged.
	Checks []HandCheck `json:"checks,omitempty"`
}

// StoreFinding is one probe's result that is not a pass: the row, its verdict, what was
// seen, and the witness (or the cause of an error).
type StoreFinding struct {
	Row     string          `json:"row"`
	Verdict checker.Verdict `json:"verdict"`
	Seen    string          `json:"seen"`
	Witness string          `json:"witness,omitempty"`
}

// The judgements of a hand check.
const (
	// StoreProperty: the minimal sequence shows the same thing: the store does it.
	StoreProperty = "property of the store"
	// BenchLimitation: the minimal sequence does not show it: the finding came from the
	// bench's load, clients or timing, not from the store's semantics.
	BenchLimitation = "limitation of the bench"
	// NotJudged: the minimal sequence got no usable answer; the finding stays open and the
	// store is not given a green verdict on it.
	NotJudged = "not judged"
)

// HandCheck is one finding checked by a minimal request sequence: the steps sent, one per
// line, as plain HTTP requests and their answers, and the judgement.
type HandCheck struct {
	Finding   string   `json:"finding"`
	Steps     []string `json:"steps"`
	Judgement string   `json:"judgement"`
	Why       string   `json:"why"`
}

// ComparedRow is one probe and client, or one cell, across the stores.
type ComparedRow struct {
	ID    string `json:"id"`
	Title string `json:"title,omitempty"`
	// Cells holds one cell per store, in the order of Comparison.Stores.
	Cells []ComparedCell `json:"cells"`
	// Differs is set when the stores' cells do not all read the same.
	Differs bool `json:"differs"`
}

// ComparedCell is one store's outcome of one row. Label is what the cell reads ("pass",
// "fail 2/3", "store unsafe", "not run"); Verdict its colour; Detail what the store was seen
// to do, shown under the label and compared like it (for a probe that only records, its
// facts); Note a sentence shown on hover; Link the page that explains it, relative to the
// comparison's folder.
type ComparedCell struct {
	Verdict checker.Verdict `json:"verdict,omitempty"`
	Label   string          `json:"label"`
	Detail  string          `json:"detail,omitempty"`
	Note    string          `json:"note,omitempty"`
	Link    string          `json:"link,omitempty"`
}

// notRun is the label of a row a store has no result for.
const notRun = "not run"

// Set records store i's cell of row id, adding the row (in order of first appearance) when
// it is new.
func (c *Comparison) Set(id, title string, i int, cell ComparedCell) {
	for r := range c.Rows {
		if c.Rows[r].ID == id {
			c.Rows[r].Cells[i] = cell
			return
		}
	}
	row := ComparedRow{ID: id, Title: title, Cells: make([]ComparedCell, len(c.Stores))}
	row.Cells[i] = cell
	c.Rows = append(c.Rows, row)
}

// AddRun records the cells of store i's run, each linked to its cell page under dir (the
// run's folder relative to the comparison's).
func (c *Comparison) AddRun(i int, dir string, sum *outcome.Summary) {
	for _, cell := range sum.Cells {
		b := cellBadge(cell)
		note := b.Title
		if note == "" && len(cell.Result.Reasons) > 0 {
			note = cell.Result.Reasons[0]
		}
		if cell.Error != "" {
			note = cell.Error
		}
		c.Set(cell.ID, cell.Description, i, ComparedCell{Verdict: checker.Verdict(b.Class), Label: b.Label, Note: note,
			Link: path.Join(filepath.ToSlash(dir), cell.ID, "report.html")})
	}
}

// Finish marks the rows whose stores differ, labels the cells no store result filled, and
// counts the differing rows.
func (c *Comparison) Finish() {
	c.Differing = 0
	for r := range c.Rows {
		row := &c.Rows[r]
		row.Differs = false
		for i := range row.Cells {
			if row.Cells[i].Label == "" {
				row.Cells[i] = ComparedCell{Label: notRun}
			}
			a, b := row.Cells[i], row.Cells[0]
			if a.Label != b.Label || a.Verdict != b.Verdict || a.Detail != b.Detail {
				row.Differs = true
			}
		}
		if row.Differs {
			c.Differing++
		}
	}
}

// WriteComparison finishes c and writes dir/compare.html and dir/compare.json.
func WriteComparison(dir string, c Comparison) error {
	c.Finish()
	return writePageAndJSON(dir, "compare", c, c)
}

// writePageAndJSON renders view with <name>.html.tmpl into dir/<name>.html and writes data as
// dir/<name>.json.
func writePageAndJSON(dir, name string, view, data any) error {
	var page bytes.Buffer
	if err := pages.ExecuteTemplate(&page, name+".html.tmpl", view); err != nil {
		return fmt.Errorf("reports: %s.html: %w", name, err)
	}
	js, err := json.MarshalIndent(data, "", "  ")
	if err != nil {
		return fmt.Errorf("reports: %s.json: %w", name, err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("reports: %w", err)
	}
	if err := writeFile(filepath.Join(dir, name+".html"), page.Bytes()); err != nil {
		return err
	}
	return writeFile(filepath.Join(dir, name+".json"), append(js, '\n'))
}
