package reports

import (
	"encoding/json"
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"os"
	"time"

	"github.com/fencebench/fencebench/checker"
)

// SummaryFormat is the layout version of summary.json that this package writes.
const SummaryFormat = 1

// Summary is the content of a run's summary.json: the run's identity and one line per cell.
// It is what [WriteTrend] reads, so it is kept small and stable.
type Summary struct {
	// Format is the layout version ([SummaryFormat]).
	Format int `json:"format"`
	// ID is the run id.
	ID string `json:"id"`
	// Started is the wall-clock start of the run.
	Started time.Time `json:"started"`
	// Duration is the wall-clock length of the run.
	Duration time.Duration `json:"duration_ns"`
	// BenchVersion is the version of the bench that produced the run.
	BenchVersion string `json:"bench_version,omitempty"`
	// Command is the command line that produced the run.
	Command string `json:"command,omitempty"`
	// Store identifies the object store, with user information redacted.
	Store store.Info `json:"store"`
	// Verdict is the worst cell verdict (pass < inconclusive < fail < error).
	Verdict checker.Verdict `json:"verdict"`
	// Totals counts cells by verdict.
	Totals SummaryTotals `json:"totals"`
	// Cells has one entry per cell, in run order.
	Cells []SummaryCell `json:"cells"`
	// Shard is the part of a split plan this run did; nil for a whole run.
	Shard *outcome.Shard `json:"shard,omitempty"`
	// MergedFrom names the shard runs a merged run was assembled from.
	MergedFrom []string `json:"merged_from,omitempty"`
	// Preflight is what the racing probes found on the store before the first cell.
	Preflight *outcome.Preflight `json:"preflight,omitempty"`
	// StoreUnsafe names the racing probe the store failed and its witness; nil when it
	// passed.
	StoreUnsafe *outcome.StoreUnsafe `json:"store_unsafe,omitempty"`
}

// SummaryTotals counts a run's cells by verdict, and its kill-matrix cells by outcome.
type SummaryTotals struct {
	Cells        int `json:"cells"`
	Pass         int `json:"pass"`
	Fail         int `json:"fail"`
	Inconclusive int `json:"inconclusive"`
	Error        int `json:"error"`
	// Kills counts kill-matrix cells; Killed those whose variant was caught, Survived those
	// whose variant was not.
	Kills    int `json:"kills"`
	Killed   int `json:"killed"`
	Survived int `json:"survived"`
}

// SummaryCell is one cell of a run in summary.json.
type SummaryCell struct {
	// ID is the cell's folder name.
	ID string `json:"id"`
	// Scenario is the scenario name.
	Scenario string `json:"scenario"`
	// Variant is "correct" or the broken variant.
	Variant string `json:"variant"`
	// Kill marks a kill-matrix cell.
	Kill bool `json:"kill,omitempty"`
	// Violates lists the invariants a kill cell's variant must break.
	Violates []string `json:"violates,omitempty"`
	// Seed is the cell's seed, written as a decimal string so that tools reading JSON
	// numbers as doubles do not round it.
	Seed uint64 `json:"seed,string"`
	// Client is the S3 client library.
	Client string `json:"client,omitempty"`
	// Verdict is the final, expectation-adjusted verdict.
	Verdict checker.Verdict `json:"verdict"`
	// Raw is the worst raw invariant status.
	Raw checker.Verdict `json:"raw,omitempty"`
	// Failed names the invariants whose raw status is fail.
	Failed []string `json:"failed,omitempty"`
	// Reasons says, one line each, why Verdict is what it is.
	Reasons []string `json:"reasons,omitempty"`
	// Error is the harness error text, if any.
	Error string `json:"error,omitempty"`
	// Acked is the number of distinct acknowledged ops.
	Acked int `json:"acked"`
	// Events is the number of events in the cell's history.
	Events int `json:"events"`
	// Duration is the wall-clock length of the cell.
	Duration time.Duration `json:"duration_ns"`
	// MaxTimeToFence is the largest supersession-to-fenced delay, when any writer was fenced.
	MaxTimeToFence time.Duration `json:"max_time_to_fence_ns,omitempty"`
	// Rerun is the command that reruns the cell with its seed.
	Rerun string `json:"rerun,omitempty"`
	// StoreUnsafe, when set, says the cell was refused because the store failed the
	// pre-flight.
	StoreUnsafe *outcome.StoreUnsafe `json:"store_unsafe,omitempty"`
	// Flaky marks a cell whose verdict kept changing over this run and the runs beside it
	// that started before it (see WriteTrend).
	Flaky bool `json:"flaky,omitempty"`
}

// Label is the cell's verdict as the reports show it: pass, fail, inconclusive or error, and
// for a kill cell killed, SURVIVED or "wrong kill" instead of pass and fail.
func (c SummaryCell) Label() string {
	if c.StoreUnsafe != nil {
		return labelStoreUnsafe
	}
	return verdictBadge(c.Verdict, c.Kill, wrongKill(c.Violates, c.Failed), nil, "").Label
}

func verdictRank(v checker.Verdict) int {
	switch v {
	case checker.Pass:
		return 0
	case checker.Inconclusive:
		return 1
	case checker.Fail:
		return 2
	default:
		return 3
	}
}

// summarize builds the summary.json content of a run.
func summarize(run *outcome.Summary) Summary {
	s := Summary{
		Format:       SummaryFormat,
		ID:           run.RunID,
		Started:      run.Started,
		Duration:     run.Duration,
		BenchVersion: run.Version,
		Command:      run.Command,
		Store:        storeOf(run),
		Verdict:      checker.Pass,
		Cells:        []SummaryCell{},
		Preflight:    run.Preflight,
		StoreUnsafe:  run.Preflight.Unsafe(),
		Shard:        run.Shard,
		MergedFrom:   run.MergedFrom,
	}
	for i := range run.Cells {
		c := run.Cells[i]
		v := verdictOf(c.Verdict)
		if verdictRank(v) > verdictRank(s.Verdict) {
			s.Verdict = v
		}
		s.Totals.Cells++
		switch v {
		case checker.Pass:
			s.Totals.Pass++
		case checker.Fail:
			s.Totals.Fail++
		case checker.Inconclusive:
			s.Totals.Inconclusive++
		default:
			s.Totals.Error++
		}
		if c.Kill && c.StoreUnsafe == nil {
			s.Totals.Kills++
			switch v {
			case checker.Pass:
				s.Totals.Killed++
			case checker.Fail:
				s.Totals.Survived++
			}
		}
		s.Cells = append(s.Cells, SummaryCell{
			ID:             c.ID,
			Scenario:       c.Scenario,
			Variant:        c.Variant,
			Kill:           c.Kill,
			Violates:       c.Violates,
			Seed:           c.Seed,
			Client:         c.Client,
			Verdict:        v,
			Raw:            c.Result.Raw,
			Failed:         failedInvariants(c.Result),
			Reasons:        c.Result.Reasons,
			Error:          joinErr(c.Error, c.Result.Error),
			Acked:          c.Result.Acked,
			Events:         len(c.Events),
			Duration:       c.Duration,
			MaxTimeToFence: c.Result.Liveness.MaxTimeToFence,
			Rerun:          c.Rerun,
			StoreUnsafe:    c.StoreUnsafe,
		})
	}
	if len(run.Cells) == 0 {
		s.Verdict = checker.Inconclusive
	}
	return s
}

// ReadSummary reads a summary.json written by [Write]. Unknown fields are tolerated, so a
// newer bench's summaries stay readable; a newer Format is reported as an error.
func ReadSummary(path string) (Summary, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Summary{}, err
	}
	var s Summary
	if err := json.Unmarshal(b, &s); err != nil {
		return Summary{}, fmt.Errorf("reports: %s: %w", path, err)
	}
	if s.Format > SummaryFormat {
		return Summary{}, fmt.Errorf("reports: %s: summary format %d is newer than this bench reads (%d)", path, s.Format, SummaryFormat)
	}
	return s, nil
}
