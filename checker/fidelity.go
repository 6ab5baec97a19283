package checker

import (
	"fmt"
	"maps"
	"net/url"
	"slices"
	"sort"
	"strings"
	"time"

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
	calls := map[string]map[wire]*madeBy{} // path -> the requests' method and key -> its calls
	first := map[string]time.Duration{}    // path -> its first recorded call's invoke
	for _, p := range x.order {
		e := &x.ev[p]
		w, ok := callWire(e)
		if !ok {
			continue
		}
		path := x.pathOf(e.Writer)
		ls, kept := byPath[path]
		if !kept {
			continue
		}
		if calls[path] == nil {
			calls[path], first[path] = map[wire]*madeBy{}, e.Invoke
		}
		if calls[path][w] == nil {
			calls[path][w] = &madeBy{}
		}
		calls[path][w].add(e)
		if w.method == "LIST" || w.method == "POST" {
			continue // a listing's key is a query, a batch delete's answer is per key
		}
		if msg := x.recordAgainstWire(e, w.method, ls); msg != "" {
			return storeCallBug(e, msg)
		}
	}
	for _, path := range slices.Sorted(maps.Keys(calls)) {
		if msg := x.wireAgainstRecord(path, byPath[path], calls[path], first[path]); msg != "" {
			return "harness bug: " + msg
		}
	}
	return ""
}

// wireAgainstRecord checks that every request on a path's wire (its ledger entries ls) was
// made by a store call recorded for the path (calls, by the method and key of their requests;
// first is the earliest one's invoke), or "": a request of the same method on the same key (a
// listing's prefix, any key of a batch delete) that arrived after the call was invoked and
// before it completed, or at any time after an ambiguous call (its bytes may still have been
// on their way when the writer gave up). Requests under Expect.Preflight are the bench's own
// (the conditional-write probe); a record that names no Preflight (written before it was
// kept) has the requests before the path's first recorded call taken as the pre-flight.
// Bucket-level calls (no key, not a listing) are the client's housekeeping.
func (x *index) wireAgainstRecord(path string, ls []int, calls map[wire]*madeBy, first time.Duration) string {
	pre := x.in.Expect.Preflight
	for _, li := range ls {
		l := &x.in.Ledger[li]
		w, ok := requestWire(l)
		if !ok || (pre != "" && strings.HasPrefix(w.key, pre)) || (pre == "" && l.Time < first) {
			continue
		}
		if !calls[w].made(l.Time) {
			return fmt.Sprintf("ledger entry %d (%s %q, arrived at %s) is a request on writer path %q that no store call recorded for it made",
				l.ID, l.Method, l.Key, secs(l.Time), path)
		}
	}
	return ""
}

// madeBy answers, for the calls of one path with one wire (in invoke order), whether one of
// them could have made a request that arrived at a given time: one invoked by then that had
// not yet completed, or that ended ambiguous. It keeps running maxima, so each question is a
// binary search however many calls there are (a writer's swaps of one fence key are many).
type madeBy struct {
	invoke      []time.Duration // each call's invoke, ascending
	maxComplete []time.Duration // the latest completion among the calls up to each
	ambiguous   []bool          // whether any call up to each ended ambiguous
}

func (m *madeBy) add(e *history.Event) {
	c, a := e.Complete, e.Outcome == history.Ambiguous
	if n := len(m.invoke); n > 0 {
		c, a = max(c, m.maxComplete[n-1]), a || m.ambiguous[n-1]
	}
	m.invoke, m.maxComplete, m.ambiguous = append(m.invoke, e.Invoke), append(m.maxComplete, c), append(m.ambiguous, a)
}

func (m *madeBy) made(at time.Duration) bool {
	if m == nil {
		return false
	}
	j := sort.Search(len(m.invoke), func(i int) bool { return m.invoke[i]-ledgerSlack > at }) - 1
	return j >= 0 && (m.ambiguous[j] || at <= m.maxComplete[j]+ledgerSlack)
}

// wire is what the requests of a store call look like on the wire: their method ("LIST" for
// a listing) and key (a listing's prefix; "" for a batch delete, whose keys are many).
type wire struct{ method, key string }

// callWire is the wire of store call e; false for an event that is not a store call.
func callWire(e *history.Event) (wire, bool) {
	switch e.Kind {
	case history.StoreGet:
		return wire{"GET", e.Key}, true
	case history.StorePut, history.StorePutIfAbsent, history.StorePutIfMatch:
		return wire{"PUT", e.Key}, true
	case history.StoreDelete:
		return wire{"DELETE", e.Key}, true
	case history.StoreDeleteMany:
		return wire{"POST", ""}, true
	case history.StoreList:
		return wire{"LIST", e.Key}, true
	}
	return wire{}, false
}

// requestWire is the wire of request l; false for a request no store call makes (a
// bucket-level call).
func requestWire(l *history.LedgerEntry) (wire, bool) {
	switch l.Method {
	case "GET":
		if l.Key != "" {
			return wire{"GET", l.Key}, true
		}
		q, err := url.ParseQuery(l.Query)
		if err != nil || !q.Has("list-type") {
			return wire{}, false
		}
		return wire{"LIST", q.Get("prefix")}, true
	case "PUT", "DELETE":
		return wire{l.Method, l.Key}, true
	case "POST":
		return wire{"POST", ""}, true
	}
	return wire{}, false
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
