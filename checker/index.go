package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// index is the history reorganised once, in linear time, for the invariants to share: events
// per kind, ownership acquisitions, ambiguous writes resolved from the ledger, restarted
// writers' aliases and the recovered set, with the lookups every invariant needs (grants by
// writer and term, incarnations, first fences, the CAS behind an ack). It judges nothing. The
// judges do, one per family of invariants (durabilityJudge, exclusionJudge, attributionJudge,
// fencingJudge, readsJudge, linJudge, seqJudge, servingJudge, livenessJudge, and
// attestationJudge for what the run attests): each takes the index as its input and owns the
// state it derives from it.
type index struct {
	in    Input
	ev    []history.Event // as given; positions below index into it
	order []int32         // positions of ev in history order: invoke time, then ID

	// Per kind, positions into ev in history order.
	acks, cas, claims, fenced, restores, hydrates, collects, syncs, transfers, reverts, adopts,
	crashes, standDowns, faultStarts, ops, audits []int32

	// acqs are the ownership acquisitions (Claim ok, Adopt ok, Revert ok), sorted by
	// completion time.
	acqs []acq

	// ambiguous write events resolved from the ledger: position -> outcome.
	resolved map[int32]Resolution
	// alias maps a restarted writer to the incarnation it replaced (history.Restart).
	alias map[string]string

	recovered    *idMap // op -> 1, the auditor's recovered set; nil when unknown
	recoveredSrc string // where recovered came from, for narratives
	auditTerm    int64
}

// acq is one ownership acquisition.
type acq struct {
	pos      int32
	writer   string
	term     int64
	kind     history.Kind
	detail   string
	invoke   time.Duration
	complete time.Duration
	id       int64
	key      string // the fence key the acquisition wrote, and the seq it left there
	seq      int64
	token    string
}

// harnessError checks what a correct harness guarantees; a violation is a harness bug, not a
// finding about the protocol.
func harnessError(in Input) string {
	var lo, hi int64
	for i, e := range in.Events {
		if e.Complete < e.Invoke {
			return fmt.Sprintf("harness bug: event #%d (%s by %q) completes at %s before it is invoked at %s",
				e.ID, e.Kind, e.Writer, secs(e.Complete), secs(e.Invoke))
		}
		if msg := storeCallRecordedWrong(e); msg != "" {
			return storeCallBug(&e, msg)
		}
		if i == 0 || e.ID < lo {
			lo = e.ID
		}
		if i == 0 || e.ID > hi {
			hi = e.ID
		}
	}
	seen := newIDMap(lo, hi, len(in.Events))
	for _, e := range in.Events {
		if _, dup := seen.get(e.ID); dup {
			return fmt.Sprintf("harness bug: duplicate event ID %d", e.ID)
		}
		seen.set(e.ID, 1)
	}
	ids := make(map[int64]bool, len(in.Ledger))
	for _, l := range in.Ledger {
		if ids[l.ID] {
			return fmt.Sprintf("harness bug: duplicate ledger entry ID %d", l.ID)
		}
		ids[l.ID] = true
		if l.Done != 0 && l.Done < l.Time {
			return fmt.Sprintf("harness bug: ledger entry %d is done at %s before it arrived at %s",
				l.ID, secs(l.Done), secs(l.Time))
		}
	}
	return ""
}

// storeCallRecordedWrong says how a store call's record contradicts itself, or "": a call
// recorded ok carries no error and no error status, and a definite refusal (412
// PreconditionFailed, NoSuchKey) is a failure, never an unknown outcome. The judges read
// these outcomes as the store's answers: a recording that confuses them would make every
// verdict about the wrong run.
func storeCallRecordedWrong(e history.Event) string {
	if !e.Kind.StoreCall() {
		return ""
	}
	switch {
	case e.Outcome == history.OK && (e.Err != "" || e.Status != 0):
		return fmt.Sprintf("is ok but carries an error (HTTP %d %s: %s)", e.Status, e.Code, e.Err)
	case e.Outcome != history.Fail && (e.Status == 412 || e.Code == "PreconditionFailed" || e.Code == "NoSuchKey"):
		return fmt.Sprintf("was refused (HTTP %d %s) but is recorded %s", e.Status, e.Code, e.Outcome)
	}
	return ""
}

// storeCallBug is the harness error of store call e whose record msg says is wrong.
func storeCallBug(e *history.Event, msg string) string {
	return fmt.Sprintf("harness bug: event #%d (%s by %q on %q) %s", e.ID, e.Kind, e.Writer, e.Key, msg)
}

// expectError checks the expectation itself.
func expectError(ex Expect) string {
	switch ex.Verdict {
	case "", Pass, Fail:
	default:
		return fmt.Sprintf("bad expectation: verdict %q (want pass or fail)", ex.Verdict)
	}
	for _, name := range ex.Violated {
		if name == TimeToFence {
			if ex.MaxTimeToFence <= 0 {
				return "bad expectation: TimeToFence is expected to fail but no max_time_to_fence is set"
			}
			continue
		}
		if name == TimeToAck {
			if ex.MaxTimeToAck <= 0 {
				return "bad expectation: TimeToAck is expected to fail but no max_time_to_ack is set"
			}
			continue
		}
		if name == ServesAfterHeal {
			if !ex.ServesAfterHeal {
				return "bad expectation: ServesAfterHeal is expected to fail but serves_after_heal is not set"
			}
			continue
		}
		if !slices.Contains(Invariants, name) {
			return fmt.Sprintf("bad expectation: unknown invariant %q", name)
		}
	}
	return ""
}

func buildIndex(in Input) *index {
	x := &index{in: in, ev: in.Events, order: historyOrder(in.Events)}
	var lastAudit int32 = -1
	for _, p := range x.order {
		e := &x.ev[p]
		switch e.Kind {
		case history.Ack:
			x.acks = append(x.acks, p)
		case history.CAS:
			x.cas = append(x.cas, p)
		case history.Claim:
			x.claims = append(x.claims, p)
			if e.Outcome == history.OK {
				x.addAcq(p)
			}
		case history.Fenced:
			x.fenced = append(x.fenced, p)
		case history.RestoreRead:
			x.restores = append(x.restores, p)
		case history.Hydrate:
			x.hydrates = append(x.hydrates, p)
		case history.Collect:
			x.collects = append(x.collects, p)
		case history.Sync:
			x.syncs = append(x.syncs, p)
		case history.Transfer:
			x.transfers = append(x.transfers, p)
		case history.Revert:
			x.reverts = append(x.reverts, p)
			if e.Outcome == history.OK {
				x.addAcq(p)
			}
		case history.Adopt:
			x.adopts = append(x.adopts, p)
			if e.Outcome == history.OK {
				x.addAcq(p)
			}
		case history.Crash:
			x.crashes = append(x.crashes, p)
		case history.StandDown:
			x.standDowns = append(x.standDowns, p)
		case history.FaultStart:
			x.faultStarts = append(x.faultStarts, p)
		case history.Op:
			x.ops = append(x.ops, p)
		case history.Audit:
			x.audits = append(x.audits, p)
			lastAudit = p
		}
	}
	slices.SortStableFunc(x.acqs, func(a, b acq) int {
		return cmp.Or(cmp.Compare(a.complete, b.complete), cmp.Compare(a.id, b.id))
	})

	x.auditTerm = in.Final.AuditTerm
	switch {
	case in.Final.Recovered != nil:
		x.recovered = setOf(in.Final.Recovered)
		x.recoveredSrc = "the auditor's recovery"
	case lastAudit >= 0:
		a := x.ev[lastAudit]
		x.recovered = setOf(a.Ops)
		x.recoveredSrc = "the auditor's recovery"
		if x.auditTerm == 0 {
			x.auditTerm = a.Term
		}
	}
	if x.recoveredSrc != "" && x.auditTerm != 0 {
		x.recoveredSrc += fmt.Sprintf(" (term %d)", x.auditTerm)
	}
	x.alias = map[string]string{}
	for i := range x.ev {
		if e := &x.ev[i]; e.Kind == history.Restart && e.Detail != "" && e.Detail != e.Writer {
			x.alias[e.Writer] = e.Detail
		}
	}
	x.resolved = resolveAmbiguous(x)
	return x
}

// pathOf is the name the ledger records w's requests under: its first incarnation's, since a
// restarted writer reaches the store by its predecessor's path.
func (x *index) pathOf(w string) string {
	for range len(x.alias) {
		p, ok := x.alias[w]
		if !ok {
			break
		}
		w = p
	}
	return w
}

// historyOrder returns the positions of ev ordered by invoke time, then ID. It sorts small
// keys rather than whole events, and leaves ev untouched.
func historyOrder(ev []history.Event) []int32 {
	order := make([]int32, len(ev))
	for i := range order {
		order[i] = int32(i)
	}
	if slices.IsSortedFunc(ev, eventOrder) {
		return order
	}
	type key struct {
		invoke time.Duration
		id     int64
		i      int32
	}
	keys := make([]key, len(ev))
	for i := range ev {
		keys[i] = key{ev[i].Invoke, ev[i].ID, int32(i)}
	}
	slices.SortFunc(keys, func(a, b key) int {
		return cmp.Or(cmp.Compare(a.invoke, b.invoke), cmp.Compare(a.id, b.id))
	})
	for j, k := range keys {
		order[j] = k.i
	}
	return order
}

func eventOrder(a, b history.Event) int {
	return cmp.Or(cmp.Compare(a.Invoke, b.Invoke), cmp.Compare(a.ID, b.ID))
}

func (x *index) addAcq(p int32) {
	e := &x.ev[p]
	x.acqs = append(x.acqs, acq{pos: p, writer: e.Writer, term: e.Term, kind: e.Kind, detail: e.Detail,
		invoke: e.Invoke, complete: e.Complete, id: e.ID, key: e.Key, seq: e.Seq, token: e.Token})
}

// incarnationStart is the invoke time of the last Crash of w at or before t (0 when none): a
// crashed copy restarts as a new incarnation, so per-incarnation facts (fenced is terminal)
// reset there.
func (x *index) incarnationStart(w string, t time.Duration) time.Duration {
	var start time.Duration
	for _, p := range x.crashes {
		c := &x.ev[p]
		if c.Writer == w && c.Invoke <= t && c.Invoke > start {
			start = c.Invoke
		}
	}
	return start
}

// firstFenced returns, per writer, the first Fenced event of each incarnation (positions in
// history order). Later Fenced events of the same incarnation are consequences, not news.
func (x *index) firstFenced() []int32 {
	var out []int32
	seen := map[string]time.Duration{} // writer -> incarnation start of its recorded fence
	for _, p := range x.fenced {
		e := &x.ev[p]
		start := x.incarnationStart(e.Writer, e.Invoke)
		if s, ok := seen[e.Writer]; ok && s == start {
			continue
		}
		seen[e.Writer] = start
		out = append(out, p)
	}
	return out
}

// recoveredHas reports whether op is in the recovered set.
func (x *index) recoveredHas(op int64) bool {
	_, ok := x.recovered.get(op)
	return ok
}

// normToken normalises an ETag for comparison: quotes and a weak prefix stripped.
func normToken(t string) string {
	t = strings.TrimPrefix(t, "W/")
	return strings.Trim(t, `"`)
}

func isFenceKey(k string) bool { return strings.Contains(k, "fence__") }

func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// opList renders up to four op ids.
func opList(ops []int64) string {
	if len(ops) == 1 {
		return fmt.Sprintf("op %d", ops[0])
	}
	var b strings.Builder
	b.WriteString("ops ")
	for i, o := range ops {
		if i == 4 {
			fmt.Fprintf(&b, " and %d more", len(ops)-4)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%d", o)
	}
	return b.String()
}

func plural(n int, one, many string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, one)
	}
	return fmt.Sprintf("%d %s", n, many)
}

// idMap maps int64 ids to int32 values. Ids in a run are dense, so it uses a slice when the
// id range is small relative to the count and a map otherwise: linear time either way.
type idMap struct {
	lo     int64
	dense  []int32 // value+1; 0 = absent
	sparse map[int64]int32
}

func newIDMap(lo, hi int64, n int) *idMap {
	if hi >= lo && hi-lo < int64(4*n+1024) {
		return &idMap{lo: lo, dense: make([]int32, hi-lo+1)}
	}
	return &idMap{sparse: make(map[int64]int32, n)}
}

func (m *idMap) get(k int64) (int32, bool) {
	if m == nil {
		return 0, false
	}
	if m.dense != nil && k >= m.lo && k-m.lo < int64(len(m.dense)) {
		v := m.dense[k-m.lo]
		return v - 1, v != 0
	}
	if m.sparse == nil {
		return 0, false
	}
	v, ok := m.sparse[k]
	return v, ok
}

func (m *idMap) set(k int64, v int32) {
	if m.dense != nil && k >= m.lo && k-m.lo < int64(len(m.dense)) {
		m.dense[k-m.lo] = v + 1
		return
	}
	if m.sparse == nil { // out of a dense map's planned range: overflow into a map
		m.sparse = map[int64]int32{}
	}
	m.sparse[k] = v
}

func setOf(ids []int64) *idMap {
	var lo, hi int64
	for i, id := range ids {
		if i == 0 || id < lo {
			lo = id
		}
		if i == 0 || id > hi {
			hi = id
		}
	}
	m := newIDMap(lo, hi, len(ids))
	for _, id := range ids {
		m.set(id, 0)
	}
	return m
}

// casOf finds the accepted CAS behind the ack at p: same writer, key and seq, invoked when
// the ack says.
func (x *index) casOf(p int32) int32 {
	a := &x.ev[p]
	var found int32 = -1
	for _, c := range x.cas {
		e := &x.ev[c]
		if e.Invoke > a.Complete {
			break
		}
		if e.Writer == a.Writer && e.Outcome == history.OK &&
			(e.Invoke == a.Invoke || (e.Key == a.Key && e.Seq == a.Seq)) {
			found = c
		}
	}
	return found
}

// termBefore is the term of w's latest claim or acquisition invoked by t.
func (x *index) termBefore(w string, t time.Duration) int64 {
	var term int64
	for _, p := range x.claims {
		if e := &x.ev[p]; e.Writer == w && e.Invoke <= t {
			term = e.Term
		}
	}
	for _, a := range x.acqs {
		if a.writer == w && a.invoke <= t && a.term > term {
			term = a.term
		}
	}
	return term
}

// everFenced reports whether w was ever fenced.
func (x *index) everFenced(w string) bool {
	for _, p := range x.fenced {
		if x.ev[p].Writer == w {
			return true
		}
	}
	return false
}
