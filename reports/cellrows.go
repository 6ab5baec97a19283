package reports

import (
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

type invariantRow struct {
	Name        string       `json:"name"`
	Status      badge        `json:"status"`
	Guarantee   string       `json:"guarantee,omitempty"`
	Explanation string       `json:"explanation,omitempty"`
	Narrative   string       `json:"narrative,omitempty"`
	Violations  int          `json:"violations,omitempty"`
	Expected    bool         `json:"expected,omitempty"`
	Events      []eventRow   `json:"events,omitempty"`
	EventsMore  int          `json:"events_more,omitempty"`
	Ledger      []ledgerRow  `json:"ledger,omitempty"`
	Witness     *witnessView `json:"witness,omitempty"`
}

// eventRow is one history event in a table.
type eventRow struct {
	ID      int64  `json:"id"`
	Anchor  string `json:"anchor,omitempty"`
	At      string `json:"at"`
	Took    string `json:"took,omitempty"`
	Writer  string `json:"writer,omitempty"`
	Kind    string `json:"kind"`
	Key     string `json:"key,omitempty"`
	FullKey string `json:"full_key,omitempty"`
	Term    int64  `json:"term,omitempty"`
	Seq     int64  `json:"seq,omitempty"`
	Token   string `json:"token,omitempty"`
	Ops     string `json:"ops,omitempty"`
	Outcome string `json:"outcome,omitempty"`
	Status  string `json:"status,omitempty"`
	Err     string `json:"err,omitempty"`
	Detail  string `json:"detail,omitempty"`
	Missing bool   `json:"missing,omitempty"`
}

// ledgerRow is one ledger entry in a table.
type ledgerRow struct {
	ID        int64  `json:"id"`
	At        string `json:"at"`
	Writer    string `json:"writer,omitempty"`
	Op        string `json:"op"`
	Key       string `json:"key,omitempty"`
	FullKey   string `json:"full_key,omitempty"`
	Cond      string `json:"cond,omitempty"`
	Rule      string `json:"rule,omitempty"`
	Action    string `json:"action,omitempty"`
	Status    string `json:"status"`
	Delivered bool   `json:"delivered"`
	Effect    string `json:"effect"`
	Err       string `json:"err,omitempty"`
	Missing   bool   `json:"missing,omitempty"`
}

type lostRow struct {
	Op         int64  `json:"op"`
	Writer     string `json:"writer"`
	Term       int64  `json:"term"`
	AckedAt    string `json:"acked_at"`
	AckEvent   int64  `json:"ack_event"`
	AfterAdopt bool   `json:"after_adopt,omitempty"`
}

func invariantRows(c *outcome.CellResult, ix map[int64]*history.Event, lx map[int64]*history.LedgerEntry, first *history.Event) []invariantRow {
	var out []invariantRow
	for _, ir := range c.Result.Invariants {
		st := verdictOf(ir.Status)
		row := invariantRow{
			Name:        ir.Name,
			Status:      badge{Label: string(st), Class: string(st)},
			Guarantee:   ir.Guarantee,
			Explanation: ir.Explanation,
			Narrative:   ir.Narrative,
			Violations:  ir.Violations,
			Expected:    c.Kill && slices.Contains(c.Violates, ir.Name),
			Witness:     toWitnessView(ir.Witness),
		}
		ids := slices.Clone(ir.Counterexample)
		sort.SliceStable(ids, func(i, j int) bool {
			a, b := ix[ids[i]], ix[ids[j]]
			switch {
			case a == nil || b == nil:
				return a != nil
			case a.Invoke != b.Invoke:
				return a.Invoke < b.Invoke
			default:
				return a.ID < b.ID
			}
		})
		for i, id := range ids {
			if i == maxCounterexampleRows {
				row.EventsMore = len(ids) - i
				break
			}
			e := ix[id]
			if e == nil {
				row.Events = append(row.Events, eventRow{ID: id, Kind: "?", Missing: true})
				continue
			}
			r := toEventRow(e)
			if first != nil && e.ID == first.ID && st == checker.Fail {
				r.Anchor = "ev-first"
			}
			row.Events = append(row.Events, r)
		}
		for _, id := range ir.LedgerEntries {
			if l := lx[id]; l != nil {
				row.Ledger = append(row.Ledger, toLedgerRow(l))
			} else {
				row.Ledger = append(row.Ledger, ledgerRow{ID: id, Missing: true})
			}
		}
		out = append(out, row)
	}
	return out
}

func toEventRow(e *history.Event) eventRow {
	r := eventRow{
		ID:      e.ID,
		At:      fmtAt(e.Invoke),
		Writer:  e.Writer,
		Kind:    string(e.Kind),
		Key:     shortKey(e.Key),
		FullKey: e.Key,
		Term:    e.Term,
		Seq:     e.Seq,
		Token:   e.Token,
		Ops:     fmtOps(e.Ops),
		Outcome: string(e.Outcome),
		Err:     e.Err,
		Detail:  e.Detail,
	}
	if e.Complete > e.Invoke {
		r.Took = fmtDur(e.Complete - e.Invoke)
	}
	if e.Status != 0 {
		r.Status = strconv.Itoa(e.Status)
		if e.Code != "" {
			r.Status += " " + e.Code
		}
	} else if e.Code != "" {
		r.Status = e.Code
	}
	return r
}

func fmtOps(ops []int64) string {
	const show = 8
	var b strings.Builder
	for i, o := range ops {
		if i == show {
			fmt.Fprintf(&b, " … (%d ops)", len(ops))
			break
		}
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(o, 10))
	}
	return b.String()
}

func toLedgerRow(l *history.LedgerEntry) ledgerRow {
	r := ledgerRow{
		ID:        l.ID,
		At:        fmtAt(l.Time),
		Writer:    l.Writer,
		Op:        ledgerOp(l),
		Key:       shortKey(l.Key),
		FullKey:   l.Key,
		Rule:      l.Rule,
		Action:    l.Action,
		Status:    "-",
		Delivered: l.Delivered,
		Effect:    ledgerEffect(l),
		Err:       l.Err,
	}
	switch {
	case l.IfNoneMatch != "":
		r.Cond = "If-None-Match: " + l.IfNoneMatch
	case l.IfMatch != "":
		r.Cond = "If-Match: " + l.IfMatch
	}
	if l.Status != 0 {
		r.Status = strconv.Itoa(l.Status)
		if l.Code != "" {
			r.Status += " " + l.Code
		}
	}
	return r
}

// ledgerOp names the S3 operation of a ledger entry, as the store.* event kinds do.
func ledgerOp(l *history.LedgerEntry) string {
	switch l.Method {
	case "GET":
		if l.Key == "" {
			return "list"
		}
		return "get"
	case "HEAD":
		return "head"
	case "PUT":
		switch {
		case l.IfNoneMatch != "":
			return "put-if-absent"
		case l.IfMatch != "":
			return "put-if-match"
		}
		return "put"
	case "DELETE":
		return "delete"
	case "POST":
		if strings.Contains(l.Query, "delete") {
			return "delete-many"
		}
	}
	return strings.ToLower(l.Method)
}

// ledgerEffect says in a few words what became of a request: whether the store got it,
// applied it, and whether the client heard the answer.
func ledgerEffect(l *history.LedgerEntry) string {
	var parts []string
	switch {
	case !l.Forwarded && l.Action == "status":
		parts = append(parts, "injected answer, store not reached")
	case !l.Forwarded:
		parts = append(parts, "never reached the store")
	case l.Applied() && !l.Delivered:
		parts = append(parts, "applied, answer lost")
	case l.Applied():
		parts = append(parts, "applied")
	case l.Status == 0:
		parts = append(parts, "store gave no answer")
	case !l.Delivered:
		parts = append(parts, fmt.Sprintf("refused (%d), answer lost", l.Status))
	default:
		parts = append(parts, fmt.Sprintf("refused (%d)", l.Status))
	}
	if l.Copies > 1 {
		parts = append(parts, fmt.Sprintf("store received it %d times", l.Copies))
	}
	switch l.Action {
	case "strip-conditions":
		parts = append(parts, "preconditions stripped")
	case "delay":
		parts = append(parts, "delayed")
	}
	return strings.Join(parts, "; ")
}
