package checker

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/history"
)

// NoSpuriousFencing: the first Fenced event of each incarnation of writer W at term T must be
// preceded (by invoke time, at or before the Fenced event completes) by one of:
//   - a Claim by another writer at a term above T that did not fail outright (its sweep may
//     have run even if the claim itself then failed retryably);
//   - an ok Claim by another writer at T that is a seal (equal-term arbitration);
//   - a Revert by another writer at T that possibly applied;
//   - an ok readopt Claim or a possibly applied Adopt by another writer X at T, provided X
//     owned the term legitimately: X had sealed T itself, or a Transfer to X that possibly
//     applied was not followed by an ok Revert of its transferrer before X's adoption.
//
// Likewise every publication the segment publish gate refused must be preceded by a Claim by
// another writer at a higher term (any outcome): the gate refuses only a superseded writer.
func (x *index) noSpuriousFencing() InvariantResult {
	r := newResult(NoSpuriousFencing)
	fenced := x.firstFenced()
	var first int32 = -1
	var firstIllegit int32 = -1
	for _, p := range fenced {
		f := &x.ev[p]
		term := f.Term
		if term == 0 {
			term = x.termBefore(f.Writer, f.Complete)
		}
		ok, illegit := x.fenceJustified(f.Writer, term, f.Complete)
		if ok {
			continue
		}
		r.Violations++
		if first < 0 {
			first, firstIllegit = p, illegit
		}
	}
	silenced, refusals := x.silencedPublishes()
	if r.Violations == 0 && len(silenced) == 0 {
		what := plural(len(fenced), "fence", "fences")
		if refusals > 0 {
			what += " and " + plural(refusals, "refused publication", "refused publications")
		}
		r.Explanation = what + ", each after a legitimate supersession"
		return r
	}
	r.Status = Fail
	if first < 0 {
		return silencedResult(r, x, silenced)
	}
	r.Violations += len(silenced)
	r.Explanation = fmt.Sprintf("%s without a legitimate supersession", plural(r.Violations, "fence", "fences"))
	f := &x.ev[first]
	term := f.Term
	if term == 0 {
		term = x.termBefore(f.Writer, f.Complete)
	}
	r.Narrative = fmt.Sprintf("%s (term %d) was fenced at %s (%q), but before then no other writer had claimed a "+
		"higher term, nor legitimately claimed, adopted or reverted term %d", f.Writer, term, secs(f.Complete), f.Err, term)
	if firstIllegit >= 0 {
		e := &x.ev[firstIllegit]
		verb := "adopted"
		if e.Kind == history.Claim {
			verb = "re-adopted"
		}
		r.Narrative += fmt.Sprintf("; %s %s term %d at %s without owning it (no seal of its own and no standing "+
			"transfer to it)", e.Writer, verb, term, secs(e.Complete))
	}
	r.Counterexample = idsOf(x, first, firstIllegit)
	return r
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

// fenceJustified reports whether w, at term, had been legitimately superseded by time t; when
// not, it returns an illegitimate same-term acquisition that may explain the fence (or -1).
func (x *index) fenceJustified(w string, term int64, t time.Duration) (bool, int32) {
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer == w || e.Outcome == history.Fail {
			continue
		}
		if e.Term > term {
			return true, -1
		}
		// A same-term seal supersedes when it succeeded, or when its outcome stayed unknown to
		// its writer but the ledger shows the store applied its arbitration: the key moved.
		sealed := e.Outcome == history.OK || e.Outcome == history.Ambiguous && x.resolved[p].Outcome == ResolvedApplied
		if e.Term == term && sealed && e.Detail != "readopt" {
			return true, -1
		}
	}
	var illegit int32 = -1
	check := func(ps []int32) bool {
		for _, p := range ps {
			e := &x.ev[p]
			if e.Invoke > t {
				break
			}
			if e.Writer == w || e.Term != term || !x.possiblyApplied(p) {
				continue
			}
			if e.Kind == history.Revert || x.ownsTermLegitimately(e.Writer, term, e.Invoke) {
				return true
			}
			if illegit < 0 {
				illegit = p
			}
		}
		return false
	}
	if check(x.reverts) || check(x.adopts) {
		return true, -1
	}
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer != w && e.Term == term && e.Outcome == history.OK && e.Detail == "readopt" {
			if x.ownsTermLegitimately(e.Writer, term, e.Invoke) {
				return true, -1
			}
			if illegit < 0 {
				illegit = p
			}
		}
	}
	return false, illegit
}

// ownsTermLegitimately reports whether writer xw could legitimately take term's chain at time
// t: it sealed the term itself, or a transfer to it stands (not reverted before t).
func (x *index) ownsTermLegitimately(xw string, term int64, t time.Duration) bool {
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Invoke > t {
			break
		}
		if e.Writer == xw && e.Term == term && e.Outcome == history.OK && e.Detail != "readopt" && e.Complete <= t {
			return true
		}
	}
	for _, p := range x.transfers {
		tr := &x.ev[p]
		if tr.Invoke > t {
			break
		}
		if tr.Detail != xw || (tr.Term != 0 && tr.Term != term) || !x.possiblyApplied(p) {
			continue
		}
		reverted := false
		for _, q := range x.reverts {
			rv := &x.ev[q]
			if rv.Writer == tr.Writer && rv.Outcome == history.OK && rv.Invoke > tr.Invoke && rv.Complete < t {
				reverted = true
				break
			}
		}
		if !reverted {
			return true
		}
	}
	return false
}

// silencedPublishes returns the publications the segment publish gate refused (Publish with
// outcome fail and no key) although no other writer had yet invoked a claim at a higher term,
// and how many refusals there were. The gate refuses only when it lists a strictly higher
// term, and such a key exists only once a claim at that term was invoked (whatever its
// outcome); a refusal without one silenced a healthy shard, for instance because the fence
// could not be read.
func (x *index) silencedPublishes() ([]int32, int) {
	var out []int32
	refusals := 0
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Kind != history.Publish || e.Outcome != history.Fail || e.Key != "" {
			continue
		}
		refusals++
		justified := false
		for _, c := range x.claims {
			o := &x.ev[c]
			if o.Invoke > e.Complete {
				break
			}
			if o.Writer != e.Writer && o.Term > e.Term {
				justified = true
				break
			}
		}
		if !justified {
			out = append(out, p)
		}
	}
	return out, refusals
}

// silencedResult reports refused publications when no fence was spurious.
func silencedResult(r InvariantResult, x *index, silenced []int32) InvariantResult {
	r.Violations = len(silenced)
	r.Explanation = fmt.Sprintf("%s refused without a higher term", plural(r.Violations, "publication", "publications"))
	e := &x.ev[silenced[0]]
	r.Narrative = fmt.Sprintf("%s (term %d) had a segment publication refused at %s (%q), but before then no other "+
		"writer had claimed a higher term: the publish gate silenced a healthy shard", e.Writer, e.Term, secs(e.Complete), e.Err)
	r.Counterexample = idsOf(x, silenced[0])
	return r
}
