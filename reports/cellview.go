package reports

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

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

	Timeline    timelineView    `json:"timeline"`
	Invariants  []invariantRow  `json:"invariants"`
	Lost        []lostRow       `json:"lost,omitempty"`
	LostMore    int             `json:"lost_more,omitempty"`
	Liveness    livenessView    `json:"liveness"`
	Faults      faultView       `json:"faults"`
	Requests    opTable         `json:"requests"`
	StoreSide   opTable         `json:"store_side"`
	Ambiguity   ambiguityView   `json:"ambiguity"`
	Latency     latencyView     `json:"latency"`
	Rerun       string          `json:"rerun,omitempty"`
	Files       []fileLink      `json:"files,omitempty"`
	Warnings    []string        `json:"warnings,omitempty"`
	EventByKind []kindCountView `json:"event_by_kind,omitempty"`
}

type invariantRow struct {
	Name        string      `json:"name"`
	Status      badge       `json:"status"`
	Guarantee   string      `json:"guarantee,omitempty"`
	Explanation string      `json:"explanation,omitempty"`
	Narrative   string      `json:"narrative,omitempty"`
	Violations  int         `json:"violations,omitempty"`
	Expected    bool        `json:"expected,omitempty"`
	Events      []eventRow  `json:"events,omitempty"`
	EventsMore  int         `json:"events_more,omitempty"`
	Ledger      []ledgerRow `json:"ledger,omitempty"`
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

type livenessView struct {
	MaxTimeToFence string      `json:"max_time_to_fence,omitempty"`
	Fenced         []fencedRow `json:"fenced,omitempty"`
	Zombies        []zombieRow `json:"zombies,omitempty"`
	Stuck          []stuckRow  `json:"stuck,omitempty"`
}

type fencedRow struct {
	Writer       string `json:"writer"`
	Term         int64  `json:"term"`
	SupersededBy string `json:"superseded_by"`
	SupersededAt string `json:"superseded_at"`
	FencedAt     string `json:"fenced_at"`
	Delay        string `json:"delay"`
}

type zombieRow struct {
	Writer       string `json:"writer"`
	Term         int64  `json:"term"`
	SupersededBy string `json:"superseded_by"`
	SupersededAt string `json:"superseded_at"`
	LastActive   string `json:"last_active"`
}

type stuckRow struct {
	Writer string `json:"writer"`
	Syncs  int    `json:"syncs"`
	Since  string `json:"since"`
	Tail   string `json:"tail"`
}

// faultView is the fault attestation: what was declared, what fired at L7 (from the ledger)
// and which fault windows the history records.
type faultView struct {
	Declared []declaredRow `json:"declared,omitempty"`
	Rules    []ruleRow     `json:"rules,omitempty"`
	Windows  []windowRow   `json:"windows,omitempty"`
}

type declaredRow struct {
	Name  string `json:"name"`
	Layer string `json:"layer"`
	Fired badge  `json:"fired"`
	Count int    `json:"count"`
	First string `json:"first,omitempty"`
}

type ruleRow struct {
	Rule    string        `json:"rule"`
	Actions string        `json:"actions"`
	Count   int           `json:"count"`
	Writers string        `json:"writers"`
	Ops     string        `json:"ops"`
	First   string        `json:"first"`
	Last    string        `json:"last"`
	Effects []effectCount `json:"effects"`
	Entries []ledgerRow   `json:"entries"`
	More    int           `json:"more,omitempty"`
}

type effectCount struct {
	Effect string `json:"effect"`
	Count  int    `json:"count"`
}

type windowRow struct {
	Name   string `json:"name"`
	Writer string `json:"writer"`
	Start  string `json:"start"`
	End    string `json:"end"`
	Length string `json:"length"`
	Open   bool   `json:"open,omitempty"`
}

// opTable counts requests per S3 operation and outcome.
type opTable struct {
	Columns []string `json:"columns"`
	Rows    []opRow  `json:"rows,omitempty"`
	Total   opRow    `json:"total"`
}

type opRow struct {
	Op     string `json:"op"`
	Counts []int  `json:"counts"`
	Sum    int    `json:"sum"`
}

type ambiguityView struct {
	Applied     int             `json:"applied"`
	NotApplied  int             `json:"not_applied"`
	Unknown     int             `json:"unknown"`
	Resolutions []resolutionRow `json:"resolutions,omitempty"`
	More        int             `json:"more,omitempty"`
}

type resolutionRow struct {
	Event   eventRow `json:"event"`
	Outcome string   `json:"outcome"`
	Ledger  string   `json:"ledger,omitempty"`
}

type latencyView struct {
	Count     int          `json:"count"`
	P50       string       `json:"p50,omitempty"`
	P90       string       `json:"p90,omitempty"`
	P99       string       `json:"p99,omitempty"`
	Max       string       `json:"max,omitempty"`
	PerWriter []latencyRow `json:"per_writer,omitempty"`
	Unmatched int          `json:"unmatched,omitempty"`
	Plot      plotView     `json:"plot"`
}

type latencyRow struct {
	Writer string `json:"writer"`
	Count  int    `json:"count"`
	P50    string `json:"p50"`
	P90    string `json:"p90"`
	P99    string `json:"p99"`
	Max    string `json:"max"`
}

type fileLink struct {
	Name string `json:"name"`
	Href string `json:"href"`
}

type kindCountView struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

// buildCellView computes the data of a cell page. runID names the run for the page header.
func buildCellView(runID string, c Cell) cellView {
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
		Verdict:     cellBadge(&c),
		Raw:         string(res.Raw),
		Reasons:     res.Reasons,
		Error:       joinErr(c.Error, res.Error),
		Narrative:   res.Narrative,
		Acked:       res.Acked,
		Events:      len(c.Events),
		LedgerSize:  len(c.Ledger),
		Duration:    fmtDur(c.Duration),
		Rerun:       c.Rerun,
	}
	v.Verdict.Title = ""
	v.Expectation = expectation(&c)
	v.Banner = cellBanner(&c, v.Verdict)

	ix := indexEvents(c.Events)
	lx := indexLedger(c.Ledger)
	first := firstViolation(res, ix)
	if first != nil {
		v.FirstViolation = fmt.Sprintf("event #%d, %s by %s at %s", first.ID, first.Kind, orDash(first.Writer), fmtAt(first.Invoke))
	}
	v.Timeline = buildTimeline(c.Events, c.Ledger, res, first)
	v.Invariants = invariantRows(&c, ix, lx, first)
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

func expectation(c *Cell) string {
	switch {
	case c.Kill && len(c.Violates) > 0:
		return fmt.Sprintf("broken variant %s must be killed: %s must fail (other failures are reported, not required)", c.Variant, strings.Join(c.Violates, ", "))
	case c.Kill:
		return fmt.Sprintf("broken variant %s must be killed: some invariant must fail", c.Variant)
	case c.Variant != "" && c.Variant != "correct":
		return fmt.Sprintf("variant %s run as the cell's protocol: judged against the scenario's own expectation", c.Variant)
	default:
		return "correct protocol: every invariant must hold"
	}
}

func cellBanner(c *Cell, b badge) banner {
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

func invariantRows(c *Cell, ix map[int64]*history.Event, lx map[int64]*history.LedgerEntry, first *history.Event) []invariantRow {
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

func livenessRows(l checker.Liveness) livenessView {
	var v livenessView
	if l.MaxTimeToFence > 0 {
		v.MaxTimeToFence = fmtDur(l.MaxTimeToFence)
	}
	for _, f := range l.Fenced {
		v.Fenced = append(v.Fenced, fencedRow{Writer: f.Writer, Term: f.Term, SupersededBy: f.SupersededBy,
			SupersededAt: fmtAt(f.SupersededAt), FencedAt: fmtAt(f.FencedAt), Delay: fmtDur(f.Delay)})
	}
	for _, z := range l.Zombies {
		v.Zombies = append(v.Zombies, zombieRow{Writer: z.Writer, Term: z.Term, SupersededBy: z.SupersededBy,
			SupersededAt: fmtAt(z.SupersededAt), LastActive: fmtAt(z.LastActive)})
	}
	for _, s := range l.Stuck {
		v.Stuck = append(v.Stuck, stuckRow{Writer: s.Writer, Syncs: s.Syncs, Since: fmtAt(s.Since), Tail: fmtDur(s.Tail)})
	}
	return v
}

func faultRows(att []checker.FaultAttestation, ev []history.Event, ledger []history.LedgerEntry) faultView {
	var v faultView
	for _, a := range att {
		b := badge{Label: "fired", Class: "pass"}
		if !a.Fired {
			b = badge{Label: "never fired", Class: "inconclusive"}
		}
		r := declaredRow{Name: a.Name, Layer: a.Layer, Fired: b, Count: a.Count}
		if a.Fired {
			r.First = fmtAt(a.First)
		}
		v.Declared = append(v.Declared, r)
	}

	type agg struct {
		row     ruleRow
		actions []string
		writers []string
		ops     map[string]int
		effects map[string]int
		first   time.Duration
		last    time.Duration
	}
	byRule := map[string]*agg{}
	var order []string
	for i := range ledger {
		l := &ledger[i]
		if l.Rule == "" {
			continue
		}
		a := byRule[l.Rule]
		if a == nil {
			a = &agg{row: ruleRow{Rule: l.Rule}, ops: map[string]int{}, effects: map[string]int{}, first: l.Time}
			byRule[l.Rule] = a
			order = append(order, l.Rule)
		}
		a.row.Count++
		if l.Action != "" && !slices.Contains(a.actions, l.Action) {
			a.actions = append(a.actions, l.Action)
		}
		if !slices.Contains(a.writers, l.Writer) {
			a.writers = append(a.writers, l.Writer)
		}
		a.ops[ledgerOp(l)]++
		a.effects[ledgerEffect(l)]++
		a.first = min(a.first, l.Time)
		a.last = max(a.last, l.Time)
		if len(a.row.Entries) < maxRuleRows {
			a.row.Entries = append(a.row.Entries, toLedgerRow(l))
		} else {
			a.row.More++
		}
	}
	for _, name := range order {
		a := byRule[name]
		a.row.Actions = strings.Join(a.actions, ", ")
		slices.Sort(a.writers)
		a.row.Writers = strings.Join(a.writers, ", ")
		a.row.Ops = countList(a.ops)
		a.row.First, a.row.Last = fmtAt(a.first), fmtAt(a.last)
		for _, e := range sortedCounts(a.effects) {
			a.row.Effects = append(a.row.Effects, effectCount{Effect: e.key, Count: e.n})
		}
		v.Rules = append(v.Rules, a.row)
	}

	end := time.Duration(0)
	for i := range ev {
		end = max(end, ev[i].Complete)
	}
	for _, w := range faultWindows(ev, end) {
		r := windowRow{Name: w.name, Writer: w.writer, Start: fmtAt(w.start), End: fmtAt(w.end),
			Length: fmtDur(w.end - w.start), Open: w.open}
		if w.writer == "" {
			r.Writer = "all"
		}
		v.Windows = append(v.Windows, r)
	}
	return v
}

type keyCount struct {
	key string
	n   int
}

func sortedCounts(m map[string]int) []keyCount {
	out := make([]keyCount, 0, len(m))
	for k, n := range m {
		out = append(out, keyCount{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].key < out[j].key
	})
	return out
}

func countList(m map[string]int) string {
	var parts []string
	for _, kc := range sortedCounts(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", kc.key, kc.n))
	}
	return strings.Join(parts, ", ")
}

// window is one fault window of one writer ("" for every writer).
type window struct {
	name, writer string
	start, end   time.Duration
	open         bool
}

// faultWindows pairs FaultStart with the next FaultEnd of the same writer and fault name; a
// window never closed lasts to end. Windows are ordered by start.
func faultWindows(ev []history.Event, end time.Duration) []window {
	type key struct{ writer, name string }
	open := map[key][]int{}
	var out []window
	for i := range ev {
		e := &ev[i]
		switch e.Kind {
		case history.FaultStart:
			k := key{e.Writer, e.Detail}
			open[k] = append(open[k], len(out))
			out = append(out, window{name: e.Detail, writer: e.Writer, start: e.Invoke, end: end, open: true})
		case history.FaultEnd:
			k := key{e.Writer, e.Detail}
			if s := open[k]; len(s) > 0 {
				w := &out[s[0]]
				w.end, w.open = max(e.Invoke, w.start), false
				open[k] = s[1:]
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// Outcome columns of the request tables.
const (
	col2xx       = "2xx"
	col412       = "412"
	col404       = "404"
	col409       = "409"
	col5xx       = "5xx"
	colAmbiguous = "ambiguous"
	colInjected  = "injected"
	colOther     = "other"
)

var (
	baseColumns = []string{col2xx, col412, col404, col409, col5xx, colAmbiguous}
	opOrder     = []string{"get", "put", "put-if-absent", "put-if-match", "delete", "delete-many", "list", "head"}
)

func statusColumn(status int) string {
	switch {
	case status >= 200 && status < 300:
		return col2xx
	case status == 412:
		return col412
	case status == 404:
		return col404
	case status == 409:
		return col409
	case status >= 500:
		return col5xx
	}
	return colOther
}

// eventOpTable counts store calls as the client saw them, from store.* events: by HTTP status
// when one arrived, else ambiguous (no answer) or other.
func eventOpTable(ev []history.Event) opTable {
	t := newOpCounter()
	for i := range ev {
		e := &ev[i]
		op, ok := strings.CutPrefix(string(e.Kind), "store.")
		if !ok {
			continue
		}
		col := colOther
		switch {
		case e.Status != 0:
			col = statusColumn(e.Status)
		case e.Outcome == history.OK:
			col = col2xx
		case e.Outcome == history.Ambiguous:
			col = colAmbiguous
		}
		t.add(op, col)
	}
	return t.table()
}

// ledgerOpTable counts requests as the fault proxy saw them: by the store's status, ambiguous
// when the client never received the answer, injected when the store never saw the request.
func ledgerOpTable(ledger []history.LedgerEntry) opTable {
	t := newOpCounter()
	for i := range ledger {
		l := &ledger[i]
		col := statusColumn(l.Status)
		switch {
		case !l.Forwarded:
			col = colInjected
		case !l.Delivered:
			col = colAmbiguous
		}
		t.add(ledgerOp(l), col)
	}
	return t.table()
}

type opCounter struct {
	counts map[string]map[string]int
	cols   map[string]bool
}

func newOpCounter() *opCounter {
	return &opCounter{counts: map[string]map[string]int{}, cols: map[string]bool{}}
}

func (c *opCounter) add(op, col string) {
	m := c.counts[op]
	if m == nil {
		m = map[string]int{}
		c.counts[op] = m
	}
	m[col]++
	c.cols[col] = true
}

func (c *opCounter) table() opTable {
	t := opTable{Columns: slices.Clone(baseColumns)}
	for _, extra := range []string{colInjected, colOther} {
		if c.cols[extra] {
			t.Columns = append(t.Columns, extra)
		}
	}
	if len(c.counts) == 0 {
		return opTable{}
	}
	ops := slices.Clone(opOrder)
	var extra []string
	for op := range c.counts {
		if !slices.Contains(ops, op) {
			extra = append(extra, op)
		}
	}
	slices.Sort(extra)
	t.Total = opRow{Op: "total", Counts: make([]int, len(t.Columns))}
	for _, op := range append(ops, extra...) {
		m := c.counts[op]
		if m == nil {
			continue
		}
		r := opRow{Op: op, Counts: make([]int, len(t.Columns))}
		for i, col := range t.Columns {
			r.Counts[i] = m[col]
			r.Sum += m[col]
			t.Total.Counts[i] += m[col]
		}
		t.Total.Sum += r.Sum
		t.Rows = append(t.Rows, r)
	}
	return t
}

func ambiguityRows(s checker.AmbiguityStats, ix map[int64]*history.Event) ambiguityView {
	v := ambiguityView{Applied: s.Applied, NotApplied: s.NotApplied, Unknown: s.Unknown}
	for i, r := range s.Events {
		if i == maxResolutionRows {
			v.More = len(s.Events) - i
			break
		}
		row := resolutionRow{Outcome: r.Outcome, Ledger: fmtOps(r.Ledger)}
		if e := ix[r.Event]; e != nil {
			row.Event = toEventRow(e)
		} else {
			row.Event = eventRow{ID: r.Event, Kind: "?", Missing: true}
		}
		v.Resolutions = append(v.Resolutions, row)
	}
	return v
}

func fileLinks(files []string) []fileLink {
	order := []string{"scenario.yaml", "history.jsonl", "ledger.jsonl", "result.json", "store.log"}
	rank := func(f string) int {
		if i := slices.Index(order, f); i >= 0 {
			return i
		}
		return len(order)
	}
	fs := slices.Clone(files)
	sort.SliceStable(fs, func(i, j int) bool { return rank(fs[i]) < rank(fs[j]) })
	var out []fileLink
	for _, f := range fs {
		if f == "" || f == "report.html" {
			continue
		}
		segs := strings.Split(f, "/")
		for i := range segs {
			segs[i] = url.PathEscape(segs[i])
		}
		out = append(out, fileLink{Name: f, Href: strings.Join(segs, "/")})
	}
	return out
}

func kindCounts(ev []history.Event) []kindCountView {
	m := map[string]int{}
	for i := range ev {
		m[string(ev[i].Kind)]++
	}
	var out []kindCountView
	for _, kc := range sortedCounts(m) {
		out = append(out, kindCountView{Kind: kc.key, Count: kc.n})
	}
	return out
}

// shortKey drops the run and shard part of an object key (everything before translog/ or
// segments/), which is the same for every key of a cell; the full key stays in a tooltip.
func shortKey(k string) string {
	for _, marker := range []string{"/translog/", "/segments/"} {
		if i := strings.Index(k, marker); i >= 0 {
			return "…" + k[i:]
		}
	}
	return k
}
