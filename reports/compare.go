package reports

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
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
	// Catalogue is the catalogue's verdict on the store, from a run of the same stores file
	// (nil when the catalogue was not run).
	Catalogue *StoreCatalogue `json:"catalogue,omitempty"`
}

// StoreCatalogue is the catalogue's verdict on one store: its outcome, every cell that was not
// a pass (each with its page), and what a red cell means for this store, said plainly.
type StoreCatalogue struct {
	Verdict checker.Verdict `json:"verdict"`
	Summary string          `json:"summary"`
	// Cells is the number of cells the run had on this store.
	Cells int `json:"cells"`
	// Page is the run's comparison page, relative to this comparison's folder.
	Page string `json:"page,omitempty"`
	// Red lists the cells that were not a pass: Row the cell, Seen its label, Witness its
	// reason, Link its page.
	Red     []StoreFinding `json:"red,omitempty"`
	Meaning string         `json:"meaning"`
}

// StoreFinding is one probe's result that is not a pass: the row, its verdict, what was
// seen, and the witness (or the cause of an error).
type StoreFinding struct {
	Row     string          `json:"row"`
	Verdict checker.Verdict `json:"verdict"`
	Seen    string          `json:"seen"`
	Witness string          `json:"witness,omitempty"`
	// Link is the page that explains the finding, relative to the comparison's folder.
	Link string `json:"link,omitempty"`
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

// AddCatalogue gives each store of a certification comparison the catalogue's verdict on it,
// from run (the comparison a `run` of the same stores file wrote into runDir, relative to this
// comparison's folder), matching stores by name. A store the run did not include keeps none.
func (c *Comparison) AddCatalogue(run Comparison, runDir string) {
	runDir = filepath.ToSlash(runDir)
	for i := range c.Stores {
		j := slices.IndexFunc(run.Stores, func(s ComparedStore) bool { return s.Name == c.Stores[i].Name })
		if j < 0 {
			continue
		}
		rs := run.Stores[j]
		cat := &StoreCatalogue{Verdict: rs.Verdict, Summary: rs.Summary, Page: path.Join(runDir, "compare.html")}
		for _, row := range run.Rows {
			cell := row.Cells[j]
			if cell.Verdict != "" {
				cat.Cells++
			}
			if cell.Verdict == checker.Pass {
				continue
			}
			f := StoreFinding{Row: row.ID, Verdict: verdictOf(cell.Verdict), Seen: cell.Label, Witness: cell.Note}
			if cell.Link != "" {
				f.Link = path.Join(runDir, cell.Link)
			}
			cat.Red = append(cat.Red, f)
		}
		cat.Meaning = catalogueMeaning(c.Stores[i], cat)
		c.Stores[i].Catalogue = cat
	}
}

// catalogueMeaning says what the catalogue's verdict means for a store, given what its
// certification found.
func catalogueMeaning(st ComparedStore, cat *StoreCatalogue) string {
	var unsafe, lost, survived, other []string
	for _, f := range cat.Red {
		switch {
		case f.Seen == labelStoreUnsafe:
			unsafe = append(unsafe, f.Row)
		case f.Seen == labelSurvived || f.Seen == labelWrongKill:
			survived = append(survived, f.Row)
		case f.Verdict == checker.Fail:
			lost = append(lost, f.Row)
		default:
			other = append(other, f.Row)
		}
	}
	certified := st.Verdict == checker.Pass
	var parts []string
	switch {
	case cat.Verdict == checker.Error && len(cat.Red) == 0:
		return "the catalogue could not be run on this store (" + cat.Summary + "): a harness error, not a verdict about the store"
	case len(unsafe) > 0 && len(unsafe) == len(cat.Red):
		ran := ""
		if n := cat.Cells - len(unsafe); n > 0 {
			ran = fmt.Sprintf("; the %d that ran allow a store that does not enforce conditional writes and judge it by their own probe", n)
		}
		return fmt.Sprintf("the run's pre-flight refused the store: %d of its %d cells were refused without running, as a store that fails the pre-flight cannot carry fencing, whatever the protocol%s", len(unsafe), cat.Cells, ran)
	case len(cat.Red) == 0 && certified:
		return "every cell passed: the correct protocol kept every acknowledged write and every broken variant was killed, as on the pinned MinIO"
	case len(cat.Red) == 0:
		return "every cell passed, but the certification refused this store (" + st.Summary + "): the catalogue's faults did not meet that finding, so a green catalogue does not make this store safe to fence on"
	}
	if len(lost) > 0 {
		parts = append(parts, fmt.Sprintf("%d correct-protocol cell(s) failed (%s): on this store the protocol the bench ships broke the invariant the cell names, a finding about the store when the pinned MinIO passes the same cells", len(lost), strings.Join(lost, ", ")))
	}
	if len(survived) > 0 {
		parts = append(parts, fmt.Sprintf("%d kill cell(s) were not killed as declared (%s): a broken variant went unseen or failed for another reason, so on this store those bugs are not caught; the store hides them, it does not make them safe", len(survived), strings.Join(survived, ", ")))
	}
	if len(other) > 0 {
		parts = append(parts, fmt.Sprintf("%d cell(s) could not be judged (%s): inconclusive or a harness error, never a green verdict", len(other), strings.Join(other, ", ")))
	}
	if len(unsafe) > 0 {
		parts = append(parts, fmt.Sprintf("%d cell(s) refused by the pre-flight", len(unsafe)))
	}
	return strings.Join(parts, "; ")
}
