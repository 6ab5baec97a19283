package checker

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

const (
	k5 = "run/idx/0/translog/metadata/fence__9223372036854775802"
	k6 = "run/idx/0/translog/metadata/fence__9223372036854775801"
)

// hb builds synthetic histories: every helper appends one event and returns its ID.
type hb struct {
	ev     []history.Event
	led    []history.LedgerEntry
	id     int64
	lid    int64
	final  Final
	expect Expect
}

func (h *hb) add(e history.Event) int64 {
	h.id++
	e.ID = h.id
	if e.Complete < e.Invoke {
		e.Complete = e.Invoke
	}
	if e.Outcome == "" {
		e.Outcome = history.OK
	}
	h.ev = append(h.ev, e)
	return e.ID
}

func (h *hb) op(w string, at int, ops ...int64) int64 {
	return h.add(history.Event{Kind: history.Op, Writer: w, Invoke: ms(at), Ops: ops})
}

func (h *hb) claim(w string, term int64, key string, from, to int, seq int64, token string, o history.Outcome, detail string) int64 {
	return h.add(history.Event{Kind: history.Claim, Writer: w, Term: term, Key: key, Invoke: ms(from), Complete: ms(to),
		Seq: seq, Token: token, Outcome: o, Detail: detail})
}

func (h *hb) cas(w string, term int64, key string, from, to int, seq int64, token string, o history.Outcome) int64 {
	return h.add(history.Event{Kind: history.CAS, Writer: w, Term: term, Key: key, Invoke: ms(from), Complete: ms(to),
		Seq: seq, Token: token, Outcome: o})
}

func (h *hb) ack(w string, term int64, key string, casAt, at int, seq int64, ops ...int64) int64 {
	return h.add(history.Event{Kind: history.Ack, Writer: w, Term: term, Key: key, Invoke: ms(casAt), Complete: ms(at),
		Seq: seq, Ops: ops})
}

// sync records op submission, a CAS and its ack in one go; it returns the CAS and ack IDs.
func (h *hb) sync(w string, term int64, key string, from int, seq int64, token string, ops ...int64) (int64, int64) {
	c := h.cas(w, term, key, from, from+5, seq, token, history.OK)
	a := h.ack(w, term, key, from, from+6, seq, ops...)
	return c, a
}

func (h *hb) fenced(w string, term int64, at int, why string) int64 {
	return h.add(history.Event{Kind: history.Fenced, Writer: w, Term: term, Invoke: ms(at), Err: why})
}

func (h *hb) restore(w string, term int64, from, to int, ops ...int64) int64 {
	return h.add(history.Event{Kind: history.RestoreRead, Writer: w, Term: term, Invoke: ms(from), Complete: ms(to), Ops: ops})
}

func (h *hb) simple(kind history.Kind, w string, term int64, key string, from, to int, o history.Outcome, detail string) int64 {
	return h.add(history.Event{Kind: kind, Writer: w, Term: term, Key: key, Invoke: ms(from), Complete: ms(to),
		Outcome: o, Detail: detail})
}

func (h *hb) ledger(l history.LedgerEntry) int64 {
	h.lid++
	l.ID = h.lid
	if l.Done < l.Time {
		l.Done = l.Time
	}
	h.led = append(h.led, l)
	return l.ID
}

// put records a conditional PUT the store answered (and the client received).
func (h *hb) put(w, key string, from, to int, ifMatch, ifNoneMatch string, status int, etag string) int64 {
	return h.ledger(history.LedgerEntry{Writer: w, Method: "PUT", Key: key, Time: ms(from), Done: ms(to),
		IfMatch: ifMatch, IfNoneMatch: ifNoneMatch, Forwarded: true, Status: status, ETag: etag, Delivered: true})
}

// invariantOf checks h and returns the verdict on invariant name, which must be judged.
func invariantOf(t *testing.T, h *hb, name history.Invariant) InvariantResult {
	t.Helper()
	res := Check(h.input())
	for _, ir := range res.Invariants {
		if ir.Name == name {
			return ir
		}
	}
	t.Fatalf("%s not judged: %+v %s", name, res.Invariants, res.Error)
	return InvariantResult{}
}

func (h *hb) input() Input {
	return Input{Events: h.ev, Ledger: h.led, Final: h.final, Expect: h.expect}
}

// ids of the base takeover history, for assertions.
type baseIDs struct {
	aClaim, aCas1, aAck1, aCas2, aAck2, bClaim, bRestore, aCas3, aFenced, bCas1, bAck1 int64
	lCreateA, lCreateB                                                                 int64
}

// base is a correct takeover: a owns term 5 and acks ops 1-4; b claims term 6 (sweeping
// fence__5) and reads its restore point; a's next CAS finds its key gone and a is fenced; b
// acks op 6; the auditor recovers 1-4 and 6.
func base() (*hb, baseIDs) {
	h := &hb{}
	var id baseIDs
	h.add(history.Event{Kind: history.FaultStart, Writer: "a", Invoke: ms(90), Detail: "partition-a"})
	id.aClaim = h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
	id.lCreateA = h.put("a", k5, 2, 8, "", "*", 200, "a0")
	h.op("a", 15, 1)
	h.op("a", 16, 2)
	id.aCas1, id.aAck1 = h.sync("a", 5, k5, 20, 1, "a1", 1, 2)
	h.put("a", k5, 21, 24, "a0", "", 200, "a1")
	h.op("a", 30, 3)
	h.op("a", 31, 4)
	id.aCas2, id.aAck2 = h.sync("a", 5, k5, 40, 2, "a2", 3, 4)
	h.put("a", k5, 41, 44, "a1", "", 200, "a2")
	id.bClaim = h.claim("b", 6, k6, 100, 120, 0, "b0", history.OK, "seal")
	id.lCreateB = h.put("b", k6, 102, 104, "", "*", 200, "b0")
	h.ledger(history.LedgerEntry{Writer: "b", Method: "POST", Query: "delete=", Time: ms(106), Done: ms(108),
		Forwarded: true, Status: 200, Delivered: true})
	h.ledger(history.LedgerEntry{Writer: "b", Method: "GET", Key: k6, Time: ms(110), Done: ms(112),
		Forwarded: true, Status: 200, ETag: "b0", Delivered: true})
	id.bRestore = h.restore("b", 6, 125, 130, 1, 2, 3, 4)
	h.op("a", 132, 5)
	id.aCas3 = h.cas("a", 5, k5, 140, 145, 3, "a2", history.FencedOut)
	h.put("a", k5, 141, 144, "a2", "", 404, "")
	id.aFenced = h.fenced("a", 5, 146, "fence key gone: superseded")
	h.op("b", 148, 6)
	id.bCas1, id.bAck1 = h.sync("b", 6, k6, 150, 1, "b1", 6)
	h.put("b", k6, 151, 154, "b0", "", 200, "b1")
	h.add(history.Event{Kind: history.Audit, Writer: "auditor", Term: 7, Invoke: ms(300), Complete: ms(310),
		Ops: []int64{1, 2, 3, 4, 6}})
	h.final = Final{Recovered: []int64{1, 2, 3, 4, 6}, AuditTerm: 7, FenceKeys: []Object{{Key: k6, ETag: "b1"}}}
	h.expect = Expect{Fenced: []string{"a"}, MinAcked: 3, Faults: []Fault{{Name: "partition-a", Layer: "l4"}}}
	return h, id
}

// dropEvent removes the event with the given ID.
func (h *hb) dropEvent(id int64) {
	h.ev = slices.DeleteFunc(h.ev, func(e history.Event) bool { return e.ID == id })
}

// edit changes the event with the given ID.
func (h *hb) edit(id int64, f func(e *history.Event)) {
	for i := range h.ev {
		if h.ev[i].ID == id {
			f(&h.ev[i])
		}
	}
}

func (h *hb) editLedger(id int64, f func(l *history.LedgerEntry)) {
	for i := range h.led {
		if h.led[i].ID == id {
			f(&h.led[i])
		}
	}
}

func mustInvariant(t *testing.T, r Result, name string) InvariantResult {
	t.Helper()
	ir, ok := r.Invariant(name)
	if !ok {
		t.Fatalf("invariant %s not judged; result: %+v", name, r)
	}
	return ir
}

func wantStatus(t *testing.T, r Result, name string, want Verdict) InvariantResult {
	t.Helper()
	ir := mustInvariant(t, r, name)
	if ir.Status != want {
		t.Fatalf("%s: got %s, want %s (%s; %s)\nnarrative: %s", name, ir.Status, want, ir.Explanation, ir.Narrative, r.Narrative)
	}
	return ir
}

func wantMentions(t *testing.T, text string, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(text, p) {
			t.Errorf("got %q, want it to mention %q", text, p)
		}
	}
}

func sortedIDs(ids ...int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}
