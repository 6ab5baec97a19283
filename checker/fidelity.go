package checker

import (
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/fencebench/fencebench/history"
)

// recordingError holds the writers' record of their store calls against what their fault
// paths saw (the ledger), and says where they disagree, or "". The history is written at the
// client boundary and the ledger on the wire; a call can end in the client for reasons the
// wire never sees (a deadline, a cut connection), so only definite answers are held to it:
//
//   - a call recorded ok was answered on the wire: a request of the same method on the same
//     key, by the same path, arrived within the call's span and its answer reached the
//     writer; a write's or a read's ETag is the one the store gave that request, a
//     conditional write's header is the one the call recorded;
//   - a call recorded refused (HTTP 412) was refused on the wire: a request of it got 412;
//   - a conditional write recorded as failed was not applied by any request of it: the SDKs
//     do not retry a conditional write, so a request of the call the store applied is an
//     answer the writer saw, or an unknown outcome, never a failure.
//
// An answer a fault rule gave in the store's place (a synthetic status) matches any record.
// A writer whose path kept no ledger (a store reached without the bench's fault path) is not
// held to one. The judges read store calls as the store's answers, and ambiguous writes are
// resolved from the ledger: a record that contradicts the ledger makes every verdict about a
// run that did not happen, so it is a harness bug, not a finding.
func (x *index) recordingError() string {
	if len(x.in.Ledger) == 0 {
		return ""
	}
	byPath := map[string][]int{}
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		byPath[l.Writer] = append(byPath[l.Writer], i)
	}
	for _, ls := range byPath {
		sort.SliceStable(ls, func(a, b int) bool { return x.in.Ledger[ls[a]].Time < x.in.Ledger[ls[b]].Time })
	}
	calls := map[string][]*history.Event{}
	for i := range x.ev {
		e := &x.ev[i]
		if !e.Kind.StoreCall() {
			continue
		}
		path := x.pathOf(e.Writer)
		ls, kept := byPath[path]
		if !kept {
			continue
		}
		calls[path] = append(calls[path], e)
		method := wireMethod(e.Kind)
		if method == "" {
			continue
		}
		if msg := x.recordAgainstWire(e, method, ls); msg != "" {
			return fmt.Sprintf("harness bug: event #%d (%s by %q on %q) %s", e.ID, e.Kind, e.Writer, e.Key, msg)
		}
	}
	for path, cs := range calls {
		if msg := x.wireAgainstRecord(path, byPath[path], cs); msg != "" {
			return "harness bug: " + msg
		}
	}
	return ""
}

// wireAgainstRecord checks that every request on a path's wire (its ledger entries ls) was
// made by a store call recorded for the path (cs, in history order), or "": a request of the
// same method on the same key (a listing's prefix, any key of a batch delete) that arrived
// after the call was invoked and before it completed, or at any time after an ambiguous call
// (its bytes may still have been on their way when the writer gave up). Requests under
// Expect.Preflight are the bench's own (the conditional-write probe); a record that names no
// Preflight (written before it was kept) has the requests before the path's first recorded
// call taken as the pre-flight. Bucket-level calls (no key, not a listing) are the client's
// housekeeping.
func (x *index) wireAgainstRecord(path string, ls []int, cs []*history.Event) string {
	pre := x.in.Expect.Preflight
	first := cs[0].Invoke
	for _, e := range cs {
		first = min(first, e.Invoke)
	}
	for _, li := range ls {
		l := &x.in.Ledger[li]
		kind, key, ok := wireCall(l)
		if !ok || (pre != "" && strings.HasPrefix(key, pre)) || (pre == "" && l.Time < first) {
			continue
		}
		made := false
		for _, e := range cs {
			if e.Invoke-ledgerSlack > l.Time {
				continue
			}
			if !slices.Contains(kind, e.Kind) || (key != "" && e.Key != key) {
				continue
			}
			if l.Time <= e.Complete+ledgerSlack || e.Outcome == history.Ambiguous {
				made = true
				break
			}
		}
		if !made {
			return fmt.Sprintf("ledger entry %d (%s %q, arrived at %s) is a request on writer path %q that no store call recorded for it made",
				l.ID, l.Method, l.Key, secs(l.Time), path)
		}
	}
	return ""
}

// wireCall says which kinds of store call make request l and on which key ("" for any), or
// false for a request no store call makes (a bucket-level call).
func wireCall(l *history.LedgerEntry) ([]history.Kind, string, bool) {
	switch l.Method {
	case "GET":
		if l.Key != "" {
			return []history.Kind{history.StoreGet}, l.Key, true
		}
		q, err := url.ParseQuery(l.Query)
		if err != nil || !q.Has("list-type") {
			return nil, "", false
		}
		return []history.Kind{history.StoreList}, q.Get("prefix"), true
	case "PUT":
		return []history.Kind{history.StorePut, history.StorePutIfAbsent, history.StorePutIfMatch}, l.Key, true
	case "DELETE":
		return []history.Kind{history.StoreDelete}, l.Key, true
	case "POST":
		return []history.Kind{history.StoreDeleteMany}, "", true
	}
	return nil, "", false
}

// wireMethod is the HTTP method of the requests a store call of kind k makes, or "" for a
// call not held to the ledger (a listing, whose key is a query, and a batch delete, whose
// answer is per key).
func wireMethod(k history.Kind) string {
	switch k {
	case history.StoreGet:
		return "GET"
	case history.StorePut, history.StorePutIfAbsent, history.StorePutIfMatch:
		return "PUT"
	case history.StoreDelete:
		return "DELETE"
	}
	return ""
}

// recordAgainstWire checks one call against its path's ledger entries ls (in arrival order).
func (x *index) recordAgainstWire(e *history.Event, method string, ls []int) string {
	var reqs []*history.LedgerEntry
	from := sort.Search(len(ls), func(i int) bool { return x.in.Ledger[ls[i]].Time >= e.Invoke-ledgerSlack })
	for _, li := range ls[from:] {
		l := &x.in.Ledger[li]
		if l.Time > e.Complete+ledgerSlack {
			break
		}
		if l.Method == method && l.Key == e.Key && sameCondition(e, l) {
			reqs = append(reqs, l)
		}
	}
	for _, l := range reqs {
		if l.Action == "status" {
			return ""
		}
	}
	conditional := e.Kind == history.StorePutIfAbsent || e.Kind == history.StorePutIfMatch
	switch {
	case e.Outcome == history.OK:
		for _, l := range reqs {
			if l.Applied() && l.Delivered && (method == "DELETE" || normToken(l.ETag) == normToken(e.Token)) {
				return ""
			}
		}
		if method == "DELETE" {
			return fmt.Sprintf("is recorded ok, but no request of it in its span (%s to %s) was answered 2xx on the wire%s",
				secs(e.Invoke), secs(e.Complete), wireSeen(reqs))
		}
		return fmt.Sprintf("is recorded ok with ETag %q, but no request of it in its span (%s to %s) was answered 2xx with that ETag on the wire%s",
			normToken(e.Token), secs(e.Invoke), secs(e.Complete), wireSeen(reqs))
	case e.Outcome == history.Fail && e.Status == 412:
		for _, l := range reqs {
			if l.Status == 412 {
				return ""
			}
		}
		return fmt.Sprintf("is recorded refused (HTTP 412), but no request of it in its span (%s to %s) was answered 412 on the wire%s",
			secs(e.Invoke), secs(e.Complete), wireSeen(reqs))
	case e.Outcome == history.Fail && conditional:
		for _, l := range reqs {
			if l.Applied() {
				return fmt.Sprintf("is recorded failed, but the store applied ledger entry %d (HTTP %d, ETag %q): the writer saw that answer or none",
					l.ID, l.Status, l.ETag)
			}
		}
	}
	return ""
}

// sameCondition reports whether ledger entry l carries the precondition call e recorded: a
// create If-None-Match: *, a compare-and-swap If-Match of the token it presented (the Detail
// "if-match <etag>"; Token when it failed), any other call neither.
func sameCondition(e *history.Event, l *history.LedgerEntry) bool {
	switch e.Kind {
	case history.StorePutIfAbsent:
		return l.IfNoneMatch == "*" && l.IfMatch == ""
	case history.StorePutIfMatch:
		presented := e.Token
		if e.Outcome == history.OK {
			presented = ""
			if _, err := fmt.Sscanf(e.Detail, "if-match %s", &presented); err != nil {
				return true
			}
		}
		return l.IfNoneMatch == "" && normToken(l.IfMatch) == normToken(presented)
	case history.StorePut:
		return l.IfMatch == "" && l.IfNoneMatch == ""
	}
	return true
}

// wireSeen lists what the wire answered the call's requests, for a harness-bug message.
func wireSeen(reqs []*history.LedgerEntry) string {
	if len(reqs) == 0 {
		return "; the ledger holds no request of it"
	}
	s := "; the ledger holds"
	for i, l := range reqs {
		if i > 0 {
			s += ","
		}
		s += fmt.Sprintf(" entry %d (HTTP %d, ETag %q, delivered %t)", l.ID, l.Status, l.ETag, l.Delivered)
	}
	return s
}
