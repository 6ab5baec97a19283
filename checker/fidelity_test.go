package checker

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// The writers' record of a store call is held to what its path saw on the wire: a record
// that contradicts the ledger is a harness bug; a record the ledger bears out, or one the
// ledger cannot speak to, is judged as usual.
func TestARecordThatContradictsTheWireIsAHarnessError(t *testing.T) {
	type call struct {
		kind    history.Kind
		outcome history.Outcome
		token   string
		detail  string
		status  int
	}
	cas := func(o history.Outcome, token string, status int) call {
		return call{history.StorePutIfMatch, o, token, "if-match e1", status}
	}
	for _, tc := range []struct {
		name string
		call call
		wire func(h *hb)
		want bool
	}{
		{"a swap recorded as the store answered it", cas(history.OK, "e2", 0),
			func(h *hb) { h.put("c", k5, 10, 11, "e1", "", 200, "e2") }, false},
		{"a swap recorded with another ETag than the store gave", cas(history.OK, "e1", 0),
			func(h *hb) { h.put("c", k5, 10, 11, "e1", "", 200, "e2") }, true},
		{"a swap recorded ok that no request carried", cas(history.OK, "e2", 0),
			func(h *hb) { h.put("c", k5, 30, 31, "e1", "", 200, "e2") }, true},
		{"a swap recorded ok whose request presented another token", cas(history.OK, "e2", 0),
			func(h *hb) { h.put("c", k5, 10, 11, "e0", "", 200, "e2") }, true},
		{"a swap recorded ok whose answer was lost", cas(history.OK, "e2", 0), func(h *hb) {
			l := h.put("c", k5, 10, 11, "e1", "", 200, "e2")
			h.editLedger(l, func(l *history.LedgerEntry) { l.Delivered = false })
		}, true},
		{"a swap recorded ok that the store refused", cas(history.OK, "e2", 0),
			func(h *hb) { h.put("c", k5, 10, 11, "e1", "", 412, "") }, true},
		{"a refusal recorded as the store answered it", cas(history.Fail, "e1", 412),
			func(h *hb) { h.put("c", k5, 10, 11, "e1", "", 412, "") }, false},
		{"a refusal recorded that the store applied", cas(history.Fail, "e1", 412),
			func(h *hb) { h.put("c", k5, 10, 11, "e1", "", 200, "e2") }, true},
		{"a failure recorded of a swap the store applied", cas(history.Fail, "e1", 0),
			func(h *hb) { h.put("c", k5, 10, 11, "e1", "", 200, "e2") }, true},
		{"an unknown outcome of a swap the store applied", cas(history.Ambiguous, "e1", 0),
			func(h *hb) { h.put("c", k5, 10, 11, "e1", "", 200, "e2") }, false},
		{"a refusal a fault rule answered in the store's place", cas(history.Fail, "e1", 412), func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "c", Method: "PUT", Key: k5, Time: ms(10), IfMatch: "e1",
				Rule: "r", Action: "status", Delivered: true})
		}, false},
		{"a writer whose path kept no ledger", cas(history.OK, "e2", 0),
			func(h *hb) { h.put("other", k5, 10, 11, "e1", "", 200, "e2") }, false},
		{"a create recorded as the store answered it", call{history.StorePutIfAbsent, history.OK, "e1", "", 0},
			func(h *hb) { h.put("c", k5, 10, 11, "", "*", 200, "e1") }, false},
		{"a create recorded ok that went out unconditional", call{history.StorePutIfAbsent, history.OK, "e1", "", 0},
			func(h *hb) { h.put("c", k5, 10, 11, "", "", 200, "e1") }, true},
		{"a read recorded with another ETag than the store gave", call{history.StoreGet, history.OK, "e1", "", 0},
			func(h *hb) {
				h.ledger(history.LedgerEntry{Writer: "c", Method: "GET", Key: k5, Time: ms(10), Forwarded: true,
					Status: 200, ETag: "e2", Delivered: true})
			}, true},
		{"a delete recorded ok the store answered 204", call{history.StoreDelete, history.OK, "", "", 0},
			func(h *hb) {
				h.ledger(history.LedgerEntry{Writer: "c", Method: "DELETE", Key: k5, Time: ms(10), Forwarded: true,
					Status: 204, Delivered: true})
			}, false},
		{"a delete recorded ok that never left", call{history.StoreDelete, history.OK, "", "", 0},
			func(h *hb) {
				h.ledger(history.LedgerEntry{Writer: "c", Method: "DELETE", Key: k5, Time: ms(10), Err: "request dropped",
					Rule: "r", Action: "drop-request"})
			}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			id := h.simple(tc.call.kind, "c", 0, k5, 10, 12, tc.call.outcome, tc.call.detail)
			h.edit(id, func(e *history.Event) {
				e.Token, e.Status = tc.call.token, tc.call.status
				if e.Status == 412 {
					e.Code, e.Err = "PreconditionFailed", "precondition failed"
				}
				if e.Outcome != history.OK && e.Err == "" {
					e.Err = "failed"
				}
			})
			tc.wire(h)
			res := Check(h.input())
			if got := res.Verdict == Error && strings.Contains(res.Error, "harness bug"); got != tc.want {
				t.Fatalf("harness error %v, want %v: %s %s", got, tc.want, res.Verdict, res.Error)
			}
		})
	}
}

// Every request on a writer's wire was made by a store call the history records for it: a
// request no recorded call made means the history left a call out.
func TestARequestNoRecordedCallMadeIsAHarnessError(t *testing.T) {
	get := func(key string, at int) history.LedgerEntry {
		return history.LedgerEntry{Writer: "c", Method: "GET", Key: key, Time: ms(at), Forwarded: true, Status: 200,
			ETag: "e1", Delivered: true}
	}
	for _, tc := range []struct {
		name      string
		outcome   history.Outcome
		wire      history.LedgerEntry
		preflight string
		want      bool
	}{
		{"the call's own request", history.OK, get(k5, 10), "", false},
		{"a request on another key", history.OK, get(k6, 10), "", true},
		{"a request after the call ended", history.OK, get(k5, 30), "", true},
		{"a request before the call began", history.OK, get(k5, 5), "", true},
		{"an older record's request before its first call (no pre-flight prefix kept)", history.OK, get(k6, 5), "-", false},
		{"a request arriving after an unknown outcome", history.Ambiguous, get(k5, 30), "", false},
		{"the bench's own pre-flight", history.OK, get("p/probe/fence-probe__1", 1), "p/probe/", false},
		{"a listing no call made", history.OK, history.LedgerEntry{Writer: "c", Method: "GET", Time: ms(11),
			Query: "list-type=2&prefix=p%2F", Forwarded: true, Status: 200, Delivered: true}, "", true},
		{"a bucket-level call", history.OK, history.LedgerEntry{Writer: "c", Method: "GET", Time: ms(11),
			Query: "location=", Forwarded: true, Status: 200, Delivered: true}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			id := h.simple(history.StoreGet, "c", 0, k5, 10, 12, tc.outcome, "")
			h.edit(id, func(e *history.Event) {
				e.Token = "e1"
				if e.Outcome != history.OK {
					e.Token, e.Err = "", "ambiguous outcome"
				}
			})
			if tc.outcome == history.Ambiguous || tc.wire.Key != k5 || tc.wire.Time != ms(10) {
				h.ledger(get(k5, 10)) // the call's own request, answered
			}
			h.ledger(tc.wire)
			switch tc.preflight {
			case "":
				h.expect.Preflight = "p/probe/"
			case "-":
				h.expect.Preflight = ""
			default:
				h.expect.Preflight = tc.preflight
			}
			res := Check(h.input())
			if got := res.Verdict == Error && strings.Contains(res.Error, "harness bug"); got != tc.want {
				t.Fatalf("harness error %v, want %v: %s %s", got, tc.want, res.Verdict, res.Error)
			}
		})
	}
}
