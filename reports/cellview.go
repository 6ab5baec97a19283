package reports

import (
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"strings"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

// Limits that keep a cell page readable and small however long the run was.
const (
	maxCounterexampleRows = 60 // events listed per failing invariant
	maxRuleRows           = 25 // ledger entries listed per fault rule
	maxLostRows           = 200
	maxResolutionRows     = 50
)

// cellView is the data behind a cell's report.html.
type cellView struct {
	RunID       string   `json:"run_id"`
	ID          string   `json:"id"`
	Scenario    string   `json:"scenario"`
	Description string   `json:"description,omitempty"`
	Variant     string   `json:"variant"`
	Kill        bool     `json:"kill,omitempty"`
	Violates    []string `json:"violates,omitempty"`
	Client      string   `json:"client,omitempty"`
	Seed        string   `json:"seed"`
	Verdict     badge    `json:"verdict"`
	Raw         string   `json:"raw,omitempty"`
	Expectation string   `json:"expectation"`
	Banner      banner   `json:"banner"`
	Reasons     []string `json:"reasons,omitempty"`
	Error       string   `json:"error,omitempty"`
	Narrative   string   `json:"narrative,omitempty"`
	Acked       int      `json:"acked"`
	Events      int      `json:"events"`
	LedgerSize  int      `json:"ledger_size"`
	Duration    string   `json:"duration"`
	// FirstViolation describes the event the "first-violation" anchor marks ("" when none).
	FirstViolation string `json:"first_violation,omitempty"`

	Timeline    timelineView     `json:"timeline"`
	Invariants  []invariantRow   `json:"invariants"`
	Lost        []lostRow        `json:"lost,omitempty"`
	LostMore    int              `json:"lost_more,omitempty"`
	Liveness    livenessView     `json:"liveness"`
	Traffic     *outcome.Traffic `json:"traffic,omitempty"`
	Faults      faultView        `json:"faults"`
	Requests    opTable          `json:"requests"`
	StoreSide   opTable          `json:"store_side"`
	Ambiguity   ambiguityView    `json:"ambiguity"`
	Latency     latencyView      `json:"latency"`
	Rerun       string           `json:"rerun,omitempty"`
	Files       []fileLink       `json:"files,omitempty"`
	Warnings    []string         `json:"warnings,omitempty"`
	EventByKind []kindCountView  `json:"event_by_kind,omitempty"`
}

// buildCellView computes the data of a cell page. runID names the run for the page header.
func buildCellView(runID string, c *outcome.CellResult) cellView {
	res := c.Result
	v := cellView{
		RunID:       runID,
		ID:          c.ID,
		Scenario:    c.Scenario,
		Description: c.Description,
		Variant:     c.Variant,
		Kill:        c.Kill,
		Violates:    c.Violates,
		Client:      c.Client,
		Seed:        fmtSeed(c.Seed),
		Verdict:     cellBadge(c),
		Raw:         string(res.Raw),
		Reasons:     res.Reasons,
		Error:       joinErr(c.Error, res.Error),
		Narrative:   res.Narrative,
		Acked:       res.Acked,
		Events:      len(c.Events),
		LedgerSize:  len(c.Ledger),
		Duration:    fmtDur(c.Duration),
		Rerun:       c.Rerun,
		Traffic:     c.Traffic,
	}
	v.Verdict.Title = ""
	v.Expectation = expectation(c)
	v.Banner = cellBanner(c, v.Verdict)

	ix := indexEvents(c.Events)
	lx := indexLedger(c.Ledger)
	first := firstViolation(res, ix)
	if first != nil {
		v.FirstViolation = fmt.Sprintf("event #%d, %s by %s at %s", first.ID, first.Kind, orDash(first.Writer), fmtAt(first.Invoke))
	}
	v.Timeline = buildTimeline(c.Events, c.Ledger, res, first)
	v.Invariants = invariantRows(c, ix, lx, first)
	for i, l := range res.Lost {
		if i == maxLostRows {
			v.LostMore = len(res.Lost) - i
			break
		}
		v.Lost = append(v.Lost, lostRow{Op: l.Op, Writer: l.Writer, Term: l.Term, AckedAt: fmtAt(l.AckedAt),
			AckEvent: l.AckEvent, AfterAdopt: l.AfterAdopt})
	}
	v.Liveness = livenessRows(res.Liveness)
	v.Faults = faultRows(res.Attestation, c.Events, c.Ledger)
	v.Requests = eventOpTable(c.Events)
	v.StoreSide = ledgerOpTable(c.Ledger)
	v.Ambiguity = ambiguityRows(res.Resolved, ix)
	v.Latency = ackLatency(c.Events, v.Timeline.End)
	v.Files = fileLinks(c.Files)
	v.EventByKind = kindCounts(c.Events)
	if res.Events != 0 && res.Events != len(c.Events) {
		v.Warnings = append(v.Warnings, fmt.Sprintf("the checker judged %d events; this page shows %d", res.Events, len(c.Events)))
	}
	return v
}

func joinErr(a, b string) string {
	switch {
	case a == "" || a == b:
		return b
	case b == "":
		return a
	default:
		return a + "\n" + b
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func expectation(c *outcome.CellResult) string {
	switch {
	case c.Kill && len(c.Violates) > 0:
		return fmt.Sprintf("broken variant %s must be killed: %s must fail (other failures are reported, not required)", c.Variant, strings.Join(c.Violates, ", "))
	case c.Kill:
		return fmt.Sprintf("broken variant %s must be killed: some invariant must fail", c.Variant)
	case c.Variant != "" && c.Variant != history.CorrectVariant:
		return fmt.Sprintf("variant %s run as the cell's protocol: judged against the scenario's own expectation", c.Variant)
	default:
		return "correct protocol: every invariant must hold"
	}
}

func cellBanner(c *outcome.CellResult, b badge) banner {
	v := verdictOf(c.Verdict)
	text := map[checker.Verdict]string{
		checker.Pass:         "PASSED",
		checker.Fail:         "FAILED",
		checker.Inconclusive: "INCONCLUSIVE",
		checker.Error:        "HARNESS ERROR",
	}[v]
	if c.Kill {
		switch v {
		case checker.Pass:
			text = "KILLED: the checker caught the broken variant " + c.Variant
		case checker.Fail:
			text = "SURVIVED: the broken variant " + c.Variant + " was not caught as expected"
			if b.Label == labelWrongKill {
				text = "WRONG KILL: the broken variant " + c.Variant + " broke an invariant it was not expected to"
			}
		}
	}
	if text == "" {
		text = strings.ToUpper(string(v))
	}
	return banner{Class: string(v), Text: text}
}

func indexEvents(ev []history.Event) map[int64]*history.Event {
	m := make(map[int64]*history.Event, len(ev))
	for i := range ev {
		m[ev[i].ID] = &ev[i]
	}
	return m
}

func indexLedger(l []history.LedgerEntry) map[int64]*history.LedgerEntry {
	m := make(map[int64]*history.LedgerEntry, len(l))
	for i := range l {
		m[l[i].ID] = &l[i]
	}
	return m
}

// firstViolation is the event the "first-violation" anchor marks: the earliest counterexample
// event of the first failing invariant in report order.
func firstViolation(res checker.Result, ix map[int64]*history.Event) *history.Event {
	for _, ir := range res.Invariants {
		if ir.Status != checker.Fail {
			continue
		}
		var best *history.Event
		for _, id := range ir.Counterexample {
			e := ix[id]
			if e == nil {
				continue
			}
			if best == nil || e.Invoke < best.Invoke || (e.Invoke == best.Invoke && e.ID < best.ID) {
				best = e
			}
		}
		if best != nil {
			return best
		}
	}
	return nil
}
