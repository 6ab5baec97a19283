package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// readsJudge judges what copies read from the store: HydrationIntegrity and
// OwnerNeverReadUnsealed.
type readsJudge struct{ *index }

// HydrationIntegrity: no Hydrate failed with 404 (a listed file vanished) — scoped, as in the
// segment-flow model, to owners: a hydrating writer superseded by a higher-term claim before
// the fetch completed may lose files, which is the correct outcome for it. Where the set the
// copy read and the file's collection are known, judgeMissing judges by the retention bound
// first: no collection may take a file from under its collector's newest set, nor one of the
// Expect.Retain latest.
func (x *readsJudge) hydrationIntegrity() InvariantResult {
	r := newResult(HydrationIntegrity)
	var first int32 = -1
	skipped, pastBound := 0, 0
	for _, p := range x.hydrates {
		h := &x.ev[p]
		if h.Outcome != history.Fail || h.Status != 404 {
			continue
		}
		switch x.judgeMissing(h) {
		case missingExcused:
			skipped++
			continue
		case missingPastBound:
			pastBound++
			continue
		}
		r.Violations++
		if first < 0 {
			first = p
		}
	}
	if p, q, why := x.staleHydration(); p >= 0 && r.Violations == 0 {
		e := &x.ev[p]
		r.Status, r.Violations = Fail, 1
		what := map[history.Kind]string{history.Promote: "promotion", history.Handoff: "handoff"}[e.Kind]
		if what == "" {
			what = "recovery"
		}
		r.Explanation = fmt.Sprintf("a %s reported success without hydrating what it had to", what)
		r.Narrative = fmt.Sprintf("%s's %s at term %d ended ok at %s, but %s", e.Writer, what, e.Term, secs(e.Complete), why)
		r.Counterexample = x.idsOf(p, q)
		return r
	}
	note := ""
	if skipped > 0 {
		note = fmt.Sprintf(" (%s by superseded writers ignored)", plural(skipped, "missing file", "missing files"))
	}
	if pastBound > 0 {
		note += fmt.Sprintf(" (%s past the retention bound of %d sets ignored)", plural(pastBound, "missing file", "missing files"), x.in.Expect.Retain)
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s, none found a listed file missing%s",
			plural(len(x.hydrates), "hydration fetch", "hydration fetches"), note)
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s found a listed segment file missing%s",
		plural(r.Violations, "hydration fetch", "hydration fetches"), note)
	h := &x.ev[first]
	r.Narrative = fmt.Sprintf("%s (term %d), hydrating at %s, found segment file %s missing (404) although its "+
		"reference set lists it", h.Writer, h.Term, secs(h.Invoke), h.Key)
	var col int32 = -1
	for _, p := range x.collects {
		c := &x.ev[p]
		if c.Key == h.Key && c.Outcome == history.OK && c.Invoke <= h.Complete {
			col = p
		}
	}
	if col >= 0 {
		c := &x.ev[col]
		r.Narrative += fmt.Sprintf("; %s (term %d) collected it at %s", c.Writer, c.Term, secs(c.Complete))
	} else {
		r.Narrative += "; no recorded collection deleted it"
	}
	r.Counterexample = x.idsOf(first, col)
	return r
}

// staleHydration finds a promotion, or a recovery attempt, recorded ok whose hydration did
// not take what the store held: a reference set was published (ok) before the promotion's
// seal completed (before the recovery attempt began), and within the step the writer read no
// reference set at least as new (its path's ledger: a GET answered 200 and delivered); or a
// file fetch of its last hydration attempt (a Hydrate event after the last reference set it
// read) did not succeed. Reference sets are never deleted and a hydration lists them after
// the seal (a recovery after it began), newest first, so a copy that hydrated an older set,
// or none, took a failed read for an empty one or gave up a fetch. It returns the step, the
// event that shows it (the publication or the failed fetch) and why. A system's node
// (Expect.LedgerActors) and a writer whose path has no ledger are not judged.
func (x *readsJudge) staleHydration() (int32, int32, string) {
	if len(x.in.Ledger) == 0 {
		return -1, -1, ""
	}
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Outcome != history.OK || slices.Contains(x.in.Expect.LedgerActors, e.Writer) {
			continue
		}
		var (
			from        time.Duration = -1       // sets published before it are judged; -1: none are
			lo                        = e.Invoke // where the step's own reads begin
			who                       = e.Writer // the hydrating copy
			what, since string
			files       string // the Detail of the step's Hydrate events
		)
		switch {
		case e.Kind == history.Handoff && e.Detail != "":
			// The target hydrated (before the handoff, when it prehydrated): only its last
			// attempt's fetches are judged; retention, not the seal, protects what it listed.
			who, lo, files = e.Detail, 0, "relocation-target"
			if slices.Contains(x.in.Expect.LedgerActors, who) {
				continue
			}
		case e.Kind == history.Promote:
			seal := x.firstWithin(x.claims, e)
			if seal < 0 {
				continue // OwnerNeverReadUnsealed says so
			}
			from, what, since = x.ev[seal].Complete, "promotion", "before its seal completed"
		case e.Kind == history.RestoreRead && e.Term == 0 && strings.HasPrefix(e.Detail, "recovery"):
			from, what, since, files = e.Invoke, "recovery", "before the recovery attempt began", "recovery"
		default:
			continue // not a hydrating step
		}
		var newest int32 = -1
		for i := range x.ev {
			u := &x.ev[i]
			if u.Kind == history.Publish && u.Outcome == history.OK && u.Key != "" && u.Complete < from &&
				(newest < 0 || segmentSetKey(u.Key) < segmentSetKey(x.ev[newest].Key)) {
				newest = int32(i)
			}
		}
		read, last, seen := "", time.Duration(-1), false
		for i := range x.in.Ledger {
			l := &x.in.Ledger[i]
			if l.Writer != who {
				continue
			}
			seen = true
			// A listing's key is the bare prefix, which names no set.
			if l.Method == "GET" && l.Status == 200 && l.Delivered && l.Time >= lo && l.Time <= e.Complete &&
				strings.Contains(l.Key, "/segments/metadata/metadata__") && !strings.HasSuffix(l.Key, "metadata__") {
				if read == "" || segmentSetKey(l.Key) < read {
					read = segmentSetKey(l.Key)
				}
				last = max(last, l.Time)
			}
		}
		if !seen {
			continue
		}
		if newest >= 0 && (read == "" || read > segmentSetKey(x.ev[newest].Key)) {
			u := &x.ev[newest]
			got := "none"
			if read != "" {
				got = "only the older " + read
			}
			return p, newest, fmt.Sprintf("%s had published reference set %s at %s, %s at %s, and the %s read %s",
				u.Writer, segmentSetKey(u.Key), secs(u.Complete), since, secs(from), what, got)
		}
		if last < 0 {
			continue
		}
		for _, q := range x.hydrates {
			h := &x.ev[q]
			if h.Writer == who && h.Term == e.Term && h.Detail == files && h.Invoke > last && h.Complete <= e.Complete &&
				h.Outcome != history.OK {
				return p, q, fmt.Sprintf("%s's fetch of %s, after the last reference set it read, failed (%s)", who, h.Key, h.Err)
			}
		}
	}
	return -1, -1, ""
}

// How a fetch that found its file missing is judged.
const (
	missingViolation = iota
	missingExcused   // a superseded reader's (the segment-flow model's scope)
	missingPastBound // collected after its collector published Expect.Retain newer sets
)

// judgeMissing judges the 404 fetch h. The reference set the copy read is the segment metadata
// object it last read (its path's ledger) before the fetch; the file's collection is the ok
// Collect of it invoked before the fetch ended; newer counts the reference sets newer than the
// one read that the collector had published before the collection. A collection after no
// newer set took the file from under its collector's newest set (or the one it hydrated),
// which every collection keeps: a violation whoever reads it, at any term, a recovery
// included. One after Expect.Retain newer sets, by a collector no higher term had superseded,
// is past the retention bound, where the design lets a file go (S23). Between the two, a
// recovery (term 0) is judged by the bound, and a copy with a term is excused once a higher
// term superseded it. Without the set read or the collection, or without a known bound, only
// that excuse applies.
func (x *readsJudge) judgeMissing(h *history.Event) int {
	superseded := x.supersededBy(h.Writer, h.Term, h.Complete) >= 0
	set := ""
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		if l.Writer == h.Writer && l.Method == "GET" && l.Status == 200 && l.Time <= h.Invoke &&
			strings.Contains(l.Key, "/segments/metadata/metadata__") {
			set = l.Key
		}
	}
	var col *history.Event
	for _, p := range x.collects {
		if c := &x.ev[p]; c.Key == h.Key && c.Outcome == history.OK && c.Invoke <= h.Complete {
			col = c
		}
	}
	if set == "" || col == nil {
		if superseded {
			return missingExcused
		}
		return missingViolation
	}
	newer := 0
	for i := range x.ev {
		e := &x.ev[i]
		// Reference-set keys list newest first: a newer set's key sorts before set's.
		if e.Kind == history.Publish && e.Writer == col.Writer && e.Outcome == history.OK && e.Complete <= col.Invoke &&
			e.Key != "" && segmentSetKey(e.Key) < segmentSetKey(set) {
			newer++
		}
	}
	switch {
	case newer == 0:
		return missingViolation
	case x.in.Expect.Retain > 0 && newer >= x.in.Expect.Retain && x.supersededBy(col.Writer, col.Term, col.Invoke) < 0:
		return missingPastBound // an owner's publications: a superseded one's are what the gates stop
	case x.in.Expect.Retain > 0 && h.Term == 0:
		return missingViolation // a recovery within the bound
	case superseded:
		return missingExcused
	}
	return missingViolation
}

// segmentSetKey is a reference set's key from its metadata__ name on, so keys seen through
// different prefixes (the ledger's bucket-relative key, the event's) compare.
func segmentSetKey(k string) string {
	if i := strings.LastIndex(k, "metadata__"); i >= 0 {
		return k[i:]
	}
	return k
}

// supersededBy returns a claim by another writer at a term above term, not failed outright,
// invoked by t; -1 when none.
func (x *readsJudge) supersededBy(w string, term int64, t time.Duration) int32 {
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer != w && e.Term > term && e.Outcome != history.Fail {
			return p
		}
	}
	return -1
}

// promotedWithout finds a promotion recorded ok whose span holds no ok claim of its term by
// its writer, or no ok restore read at its term by it, and says which is missing; -1 when
// every promotion holds both. A promotion is a seal and a restore read: one that reports
// success without either serves a term it does not hold, or from a state it never read. A
// system's node (Expect.LedgerActors) is left out: its reads are not in the history.
func (x *readsJudge) promotedWithout() (int32, string) {
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Kind != history.Promote || e.Outcome != history.OK || slices.Contains(x.in.Expect.LedgerActors, e.Writer) {
			continue
		}
		switch {
		case x.firstWithin(x.claims, e) < 0:
			return p, "claim (its seal)"
		case x.firstWithin(x.restores, e) < 0:
			return p, "restore read"
		}
	}
	return -1, ""
}

// firstWithin returns, of the events at ps, the ok one by e's writer at e's term within e's
// span that completed first (a promotion's seal, its restore read); -1 when there is none.
func (x *readsJudge) firstWithin(ps []int32, e *history.Event) int32 {
	var first int32 = -1
	for _, q := range ps {
		c := &x.ev[q]
		if c.Writer == e.Writer && c.Term == e.Term && c.Outcome == history.OK && c.Invoke >= e.Invoke &&
			c.Complete <= e.Complete && (first < 0 || c.Complete < x.ev[first].Complete) {
			first = q
		}
	}
	return first
}

// OwnerNeverReadUnsealed: every RestoreRead, and every Hydrate not marked
// "relocation-target", by W at T is invoked after an ok Claim by W at T completed. Reads at
// term 0 are exempt: they are a recovering copy that holds no term and serves nothing as an
// owner (Hydrate Detail "recovery").
func (x *readsJudge) ownerNeverReadUnsealed() InvariantResult {
	r := newResult(OwnerNeverReadUnsealed)
	type wt struct {
		w    string
		term int64
	}
	sealed := map[wt]time.Duration{}
	sealEv := map[wt]int32{}
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Outcome != history.OK {
			continue
		}
		k := wt{e.Writer, e.Term}
		if t, ok := sealed[k]; !ok || e.Complete < t {
			sealed[k], sealEv[k] = e.Complete, p
		}
	}
	var first int32 = -1
	reads := 0
	check := func(p int32) {
		e := &x.ev[p]
		if e.Kind == history.Hydrate && e.Detail == "relocation-target" || e.Term == 0 {
			return
		}
		reads++
		if t, ok := sealed[wt{e.Writer, e.Term}]; ok && t <= e.Invoke {
			return
		}
		r.Violations++
		if first < 0 || e.Invoke < x.ev[first].Invoke {
			first = p
		}
	}
	for _, p := range x.restores {
		check(p)
	}
	for _, p := range x.hydrates {
		check(p)
	}
	if p, missing := x.promotedWithout(); p >= 0 && r.Violations == 0 {
		e := &x.ev[p]
		r.Status, r.Violations = Fail, 1
		r.Explanation = "a promotion reported success without " + missing
		r.Narrative = fmt.Sprintf("%s's promotion at term %d ended ok at %s, but within it %s recorded no %s at term %d",
			e.Writer, e.Term, secs(e.Complete), e.Writer, missing, e.Term)
		r.Counterexample = x.idsOf(p)
		return r
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("%s, each after the reader's own claim", plural(reads, "read", "reads"))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s of remote state before the reader sealed its term", plural(r.Violations, "read", "reads"))
	e := &x.ev[first]
	what := "read its restore point"
	if e.Kind == history.Hydrate {
		what = "hydrated segment file " + e.Key
	}
	k := wt{e.Writer, e.Term}
	claim, ok := sealEv[k]
	if ok {
		r.Narrative = fmt.Sprintf("%s %s at term %d at %s before sealing: its claim of term %d completed only at %s",
			e.Writer, what, e.Term, secs(e.Invoke), e.Term, secs(x.ev[claim].Complete))
		r.Counterexample = x.idsOf(first, claim)
	} else {
		r.Narrative = fmt.Sprintf("%s %s at term %d at %s without ever claiming term %d",
			e.Writer, what, e.Term, secs(e.Invoke), e.Term)
		r.Counterexample = x.idsOf(first)
	}
	return r
}
