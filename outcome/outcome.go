package outcome

import (
	"errors"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/store"
)

// Exit codes of the fencebench command, for `run`, `report` and `certify` alike.
const (
	ExitPass         = 0
	ExitFail         = 1
	ExitInconclusive = 2
	ExitBadInput     = 254
	ExitHarness      = 255
)

// ErrBadInput marks a command refused for its input (a run id, prefix or stack option that
// is not valid, a run folder that is not one), as opposed to a harness problem.
var ErrBadInput = errors.New("bad input")

// Summary is the outcome of a run.
type Summary struct {
	RunID    string        `json:"run_id"`
	Dir      string        `json:"dir"`
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	Store    store.Info    `json:"store"`
	Prefix   string        `json:"prefix"`
	Command  string        `json:"command,omitempty"`
	Version  string        `json:"version,omitempty"`
	Cells    []*CellResult `json:"cells"`
	// Preflight is what the pre-flight's probes found on the store before the first cell; nil for
	// a run stored before the pre-flight existed.
	Preflight *Preflight `json:"preflight,omitempty"`
	// NotApplicable names the cells left out because the run's stack cannot do what their
	// scenario needs (a scenario acting on the store's drives or process, on a store the bench
	// does not run), each with the reason.
	NotApplicable []string `json:"not_applicable,omitempty"`
	// Shard, when set, says the run did one part of a plan split across invocations
	// (`run --shard K/N`); nil for a whole run, a merged one included.
	Shard *Shard `json:"shard,omitempty"`
	// MergedFrom names the shard runs a merged run was assembled from, in shard order; empty
	// for a run that ran its cells itself.
	MergedFrom []string `json:"merged_from,omitempty"`
}

// Shard is the part of a plan one sharded run did: cell i of the whole plan (in plan order)
// belongs to shard i mod N, so N runs with K = 0..N-1 together run every cell exactly once.
type Shard struct {
	K int `json:"k"`
	N int `json:"n"`
	// Cells lists every cell id of the whole plan, in plan order, so the shards of one plan
	// can be recognised and checked complete when they are merged.
	Cells []string `json:"cells"`
}

// Preflight is the check of the store a run does once, before its first cell: racing
// probes of its conditional writes, straight to the store (no fault path).
type Preflight struct {
	// Probes are the probes run (sequential ones, then racing ones), in order; a failed
	// probe is the last.
	Probes []PreflightProbe `json:"probes"`
	// Error says why the pre-flight could not judge the store; "" when it did.
	Error string `json:"error,omitempty"`
}

// PreflightProbe is what one probe of the pre-flight found.
type PreflightProbe struct {
	// ID is the probe's number in the object-store design notes ("B9"), Name what races.
	ID   string `json:"id"`
	Name string `json:"name"`
	// Racers are the racer counts raced, Races the number of races judged; a sequential
	// probe has no racers and Races counts its keys.
	Racers []int `json:"racers"`
	Races  int   `json:"races"`
	// Wins, Refused and NoAnswer count the racers' answers: 2xx, 412 or 409, no response.
	Wins     int           `json:"wins"`
	Refused  int           `json:"refused"`
	NoAnswer int           `json:"no_answer"`
	Duration time.Duration `json:"duration"`
	// Witness describes the first race the store got wrong; "" when the store passed.
	Witness string `json:"witness,omitempty"`
	// Cut names the racer counts the pre-flight's time budget let race fewer keys than
	// planned ("N=32: 3 of 16 keys"), a slow store; "" when every key was raced.
	Cut string `json:"cut,omitempty"`
}

// StoreUnsafe names the pre-flight probe the store failed and its witness.
type StoreUnsafe struct {
	Probe   string `json:"probe"`
	Witness string `json:"witness"`
}

// Unsafe returns the probe the store failed, nil when it failed none.
func (p *Preflight) Unsafe() *StoreUnsafe {
	if p == nil {
		return nil
	}
	for _, x := range p.Probes {
		if x.Witness != "" {
			return &StoreUnsafe{Probe: x.ID + " " + x.Name, Witness: x.Witness}
		}
	}
	return nil
}

// StoreUnsafeReason starts the reason of a cell refused because the store failed the
// pre-flight: its verdict is fail, and the cause is the store, not the protocol.
const StoreUnsafeReason = "store unsafe"

// Traffic counts the client traffic of a cell. Every op sent is one Op event in the history
// (accepted: ok; refused: fail), which the runner checks before the history is judged.
type Traffic struct {
	// Sent ops reached a writer that believed it was primary; Accepted were buffered,
	// Refused were turned away (the writer was no longer serving).
	Sent     int64 `json:"sent"`
	Accepted int64 `json:"accepted"`
	Refused  int64 `json:"refused"`
	// Unrouted slots found no writer believing it was primary; Skipped were dropped because
	// a client fell behind its schedule.
	Unrouted int64 `json:"unrouted"`
	Skipped  int64 `json:"skipped"`
}

// CellResult is everything a cell produced: one scenario run with one protocol variant, the
// unit of a verdict, a folder and a JUnit testcase.
type CellResult struct {
	// ID is the cell's folder name: the scenario name, or scenario--variant.
	ID          string `json:"id"`
	Scenario    string `json:"scenario"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source,omitempty"`
	// Variant is "correct" or the name of the broken protocol variant; Kill marks a cell the
	// bench must catch, Violates the invariants it must break (empty: any).
	Variant  string              `json:"variant"`
	Kill     bool                `json:"kill,omitempty"`
	Violates []history.Invariant `json:"violates,omitempty"`
	Seed     uint64              `json:"seed"`
	// Client is the S3 client library: "minio-go" or "aws-sdk".
	Client string `json:"client"`
	// Verdict is the final verdict, adjusted by the cell's expectation; for a kill cell pass
	// means the variant was killed.
	Verdict checker.Verdict `json:"verdict"`
	Result  checker.Result  `json:"result"`
	// Error is the harness error text, if any.
	Error string `json:"error,omitempty"`
	Probe string `json:"probe,omitempty"`
	// StoreUnsafe, when set, says the cell did not run because the store failed a racing
	// probe of the run's pre-flight: the verdict is fail and the store is the cause.
	StoreUnsafe *StoreUnsafe  `json:"store_unsafe,omitempty"`
	Started     time.Time     `json:"started"`
	Duration    time.Duration `json:"duration"`
	Dir         string        `json:"dir"`
	// Rerun is the exact command that reruns this cell with its seed.
	Rerun    string   `json:"rerun"`
	Schedule []string `json:"schedule,omitempty"`
	// Traffic is what the scenario's clients did (nil: the scenario ran no traffic).
	Traffic *Traffic `json:"traffic,omitempty"`
	// Files lists the files persisted in the cell folder, by name.
	Files []string `json:"files,omitempty"`

	// Input is what the checker judged, less the events and the ledger (persisted beside
	// them), so a stored run can be judged again by a newer checker.
	Input *StoredInput `json:"input,omitempty"`

	Events []history.Event       `json:"-"`
	Ledger []history.LedgerEntry `json:"-"`
	// Trace is when the cell's protocol events and steps happened (in memory only; kept for an
	// exploration's runs, which are judged and not persisted).
	Trace *Trace `json:"-"`
}

// StoredInput is the part of a checker.Input that is not the history or the ledger.
type StoredInput struct {
	Final  checker.Final  `json:"final"`
	Expect checker.Expect `json:"expect"`
}

// ExitCode maps the run to the process exit code: a harness error anywhere wins, then a
// failed cell (an invariant failed, or a variant survived), then an inconclusive one.
func (s *Summary) ExitCode() int {
	worst := ExitPass
	for _, c := range s.Cells {
		switch c.Verdict {
		case checker.Error:
			return ExitHarness
		case checker.Fail:
			worst = ExitFail
		case checker.Inconclusive:
			if worst == ExitPass {
				worst = ExitInconclusive
			}
		}
	}
	return worst
}

// Counts tallies the cells by verdict.
func (s *Summary) Counts() map[checker.Verdict]int {
	m := map[checker.Verdict]int{}
	for _, c := range s.Cells {
		m[c.Verdict]++
	}
	return m
}

// BadInput marks err as bad input: errors.Is(BadInput(err), ErrBadInput) holds, and the
// message is err's own.
func BadInput(err error) error { return badInput{err} }

type badInput struct{ err error }

func (b badInput) Error() string   { return b.err.Error() }
func (b badInput) Unwrap() []error { return []error{b.err, ErrBadInput} }

// Trace is when a cell's protocol events and steps happened, in scenario time: what a
// schedule found by exploration is pinned to before it is shrunk (a timed step becomes a step
// after the event that preceded it). It lives in memory only.
type Trace struct {
	// Signals are the writers' protocol events in the order they were seen.
	Signals []TracedSignal
	// Steps maps a step's index to when it first ran; a step that never ran is absent.
	Steps map[int]time.Duration
}

// TracedSignal is one protocol event: the N-th Event of Writer, at At.
type TracedSignal struct {
	At     time.Duration
	Writer string
	Event  history.SignalKind
	N      int
}
