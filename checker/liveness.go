package checker

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/fencebench/fencebench/history"
)

// livenessJudge measures when things happened rather than whether they may: time to fence,
// zombies and stuck writers.
type livenessJudge struct {
	*index
	// first is, per writer, when it first acted (its first event other than a client op).
	first map[string]time.Duration
	// writes are, per writer whose store calls the history does not record (a system's node),
	// its write requests in the ledger, in arrival order: they stand for its syncs and CAS
	// steps, which such a history does not have either.
	writes map[string][]history.LedgerEntry
}

// ledgerWrites collects the write requests of the ledger by the Expect's LedgerActors: a
// system's nodes, whose store calls only their fault paths see.
func (x *livenessJudge) ledgerWrites() map[string][]history.LedgerEntry {
	out := map[string][]history.LedgerEntry{}
	for _, l := range x.in.Ledger {
		if !slices.Contains(x.in.Expect.LedgerActors, l.Writer) || (l.Method != "PUT" && l.Method != "POST" && l.Method != "DELETE") {
			continue
		}
		out[l.Writer] = append(out[l.Writer], l)
	}
	for _, ls := range out {
		slices.SortStableFunc(ls, func(a, b history.LedgerEntry) int { return cmp.Compare(a.Time, b.Time) })
	}
	return out
}

// stuckSyncs is how many trailing ambiguous syncs without an ack make a writer "stuck".
const stuckSyncs = 3

// slowAttempts is how many syncs and CAS steps a superseded writer must start, from its first
// action after the supersession, before a time-to-fence over the bound counts: a correct copy
// learns its fate at its first refused write, so only a writer that keeps trying is slow
// because of the protocol rather than because the machine starved it.
const slowAttempts = 3

// supersession finds when w (at term) was first superseded by another writer, no later than
// limit: a claim at a higher term that did not fail outright (at its completion when ok, its
// invocation otherwise — a sweep runs mid-claim), or an equal-term acquisition completed after
// w's own first acquisition of that term. It returns the other writer and the time.
func (x *livenessJudge) supersession(w string, term int64, limit time.Duration) (string, time.Duration, bool) {
	var ownFirst time.Duration = -1
	for _, a := range x.acqs {
		if a.writer == w && a.term == term {
			ownFirst = a.complete
			break
		}
	}
	by, at, found := "", time.Duration(0), false
	consider := func(who string, t time.Duration) {
		if t <= limit && (!found || t < at) {
			by, at, found = who, t, true
		}
	}
	for _, p := range x.claims {
		e := &x.ev[p]
		if e.Writer == w || e.Term <= term || e.Outcome == history.Fail {
			continue
		}
		if e.Outcome == history.OK {
			consider(e.Writer, e.Complete)
		} else {
			consider(e.Writer, e.Invoke)
		}
	}
	for _, a := range x.acqs {
		if a.writer != w && a.term == term && a.complete > ownFirst {
			consider(a.writer, a.complete)
		}
	}
	return by, at, found
}

func (x *livenessJudge) firstSeen() map[string]time.Duration {
	out := map[string]time.Duration{}
	for _, p := range x.order {
		e := &x.ev[p]
		if e.Writer == "" || e.Kind == history.Op {
			continue
		}
		if _, ok := out[e.Writer]; !ok {
			out[e.Writer] = e.Invoke
		}
	}
	return out
}

func (x *livenessJudge) liveness() Liveness {
	var lv Liveness
	x.first = x.firstSeen()
	x.writes = x.ledgerWrites()
	fencedWriters := x.fenceDelays(&lv)
	lv.Zombies = x.zombies(fencedWriters)
	lv.Stuck = x.stuck()
	return lv
}

// fenceDelays adds the time from supersession to Fenced of every fenced writer, and returns
// the writers that got fenced.
func (x *livenessJudge) fenceDelays(lv *Liveness) map[string]bool {
	fencedWriters := map[string]bool{}
	for _, p := range x.firstFenced() {
		f := &x.ev[p]
		fencedWriters[f.Writer] = true
		term := f.Term
		if term == 0 {
			term = x.termBefore(f.Writer, f.Complete)
		}
		by, at, ok := x.supersession(f.Writer, term, f.Complete)
		if !ok {
			continue
		}
		at = max(at, x.first[f.Writer])
		// A superseded writer learns its fate when it next acts: the bound runs from then.
		from := at
		if act, ok := x.firstActionAfter(f.Writer, at); ok && act < f.Complete {
			from = act
		}
		d := max(f.Complete-from, 0)
		lv.Fenced = append(lv.Fenced, FenceDelay{Writer: f.Writer, Term: term, SupersededBy: by, SupersededAt: at,
			ActedAt: from, FencedAt: f.Complete, Delay: d, Attempts: x.attempts(f.Writer, from, f.Complete)})
		lv.MaxTimeToFence = max(lv.MaxTimeToFence, d)
	}
	return fencedWriters
}

// firstActionAfter is the invoke time of w's first sync, CAS or claim invoked at or after t
// (for a system's node: its first write request that arrived at or after t, or claim).
func (x *livenessJudge) firstActionAfter(w string, t time.Duration) (time.Duration, bool) {
	best, found := time.Duration(0), false
	for _, l := range x.writes[w] {
		if l.Time >= t {
			best, found = l.Time, true
			break
		}
	}
	for _, list := range [][]int32{x.syncs, x.cas, x.claims} {
		for _, p := range list {
			if e := &x.ev[p]; e.Writer == w && e.Invoke >= t && (!found || e.Invoke < best) {
				best, found = e.Invoke, true
			}
		}
	}
	return best, found
}

// attempts counts w's syncs and CAS steps invoked in [from, to].
func (x *livenessJudge) attempts(w string, from, to time.Duration) int {
	n := 0
	for _, l := range x.writes[w] {
		if l.Time >= from && l.Time <= to {
			n++
		}
	}
	for _, list := range [][]int32{x.syncs, x.cas} {
		for _, p := range list {
			if e := &x.ev[p]; e.Writer == w && e.Invoke >= from && e.Invoke <= to {
				n++
			}
		}
	}
	return n
}

// zombies are writers superseded, never fenced, crashed or stood down, yet still syncing
// afterwards.
func (x *livenessJudge) zombies(fencedWriters map[string]bool) []Zombie {
	var out []Zombie
	gone := map[string]bool{}
	for _, p := range x.crashes {
		gone[x.ev[p].Writer] = true
	}
	for _, p := range x.standDowns {
		gone[x.ev[p].Writer] = true
	}
	lastActive := map[string]time.Duration{}
	termOf := map[string]int64{}
	var order []string
	for li, list := range [][]int32{x.syncs, x.cas, x.acks, x.claims} {
		for _, p := range list {
			e := &x.ev[p]
			if li == 3 && (x.writes[e.Writer] == nil || e.Outcome != history.OK) {
				continue // a claim counts only for a system's node, whose term it declares
			}
			if _, ok := lastActive[e.Writer]; !ok {
				order = append(order, e.Writer)
			}
			lastActive[e.Writer] = max(lastActive[e.Writer], e.Complete)
			if e.Term > termOf[e.Writer] {
				termOf[e.Writer] = e.Term
			}
		}
	}
	// A system's node is active while its write requests arrive.
	for w, ls := range x.writes {
		if _, ok := lastActive[w]; ok {
			lastActive[w] = max(lastActive[w], ls[len(ls)-1].Time)
		}
	}
	for _, w := range order {
		if fencedWriters[w] || gone[w] {
			continue
		}
		term := termOf[w]
		if term == 0 {
			continue
		}
		by, at, ok := x.supersession(w, term, lastActive[w])
		if !ok {
			continue
		}
		at = max(at, x.first[w])
		if lastActive[w] > at {
			from, _ := x.firstActionAfter(w, at)
			out = append(out, Zombie{Writer: w, Term: term, SupersededBy: by, SupersededAt: at, ActedAt: from,
				LastActive: lastActive[w], Attempts: x.attempts(w, from, lastActive[w])})
		}
	}
	return out
}

// stuck are writers whose history ends in a run of ambiguous syncs with no ack after its start.
func (x *livenessJudge) stuck() []Stuck {
	var out []Stuck
	type run struct {
		n     int
		since time.Duration
		last  time.Duration
	}
	runs := map[string]*run{}
	var worder []string
	for _, p := range x.syncs {
		e := &x.ev[p]
		r := runs[e.Writer]
		if r == nil {
			r = &run{}
			runs[e.Writer] = r
			worder = append(worder, e.Writer)
		}
		if e.Outcome == history.Ambiguous {
			if r.n == 0 {
				r.since = e.Invoke
			}
			r.n++
			r.last = e.Complete
		} else {
			r.n = 0
		}
	}
	for _, p := range x.acks {
		e := &x.ev[p]
		if r := runs[e.Writer]; r != nil && r.n > 0 && e.Complete >= r.since {
			r.n = 0
		}
	}
	for _, w := range worder {
		if r := runs[w]; r.n >= stuckSyncs {
			out = append(out, Stuck{Writer: w, Syncs: r.n, Since: r.since, Tail: r.last - r.since})
		}
	}
	return out
}

// timeToFence judges the liveness figures against the scenario's bound.
func timeToFence(lv Liveness, bound time.Duration) InvariantResult {
	r := newResult(TimeToFence)
	var first string
	for _, f := range lv.Fenced {
		if f.Delay > bound && f.Attempts >= slowAttempts {
			r.Violations++
			if first == "" {
				first = fmt.Sprintf("%s (term %d), superseded by %s at %s, acted again at %s and was fenced only at %s: "+
					"%s, above the bound of %s", f.Writer, f.Term, f.SupersededBy, secs(f.SupersededAt), secs(f.ActedAt),
					secs(f.FencedAt), secs(f.Delay), secs(bound))
			}
		}
	}
	for _, z := range lv.Zombies {
		if z.LastActive-max(z.SupersededAt, z.ActedAt) > bound && z.Attempts >= slowAttempts {
			r.Violations++
			if first == "" {
				first = fmt.Sprintf("%s (term %d), superseded by %s at %s, acted again at %s, was still acting at %s "+
					"and never fenced (bound %s)", z.Writer, z.Term, z.SupersededBy, secs(z.SupersededAt), secs(z.ActedAt),
					secs(z.LastActive), secs(bound))
			}
		}
	}
	if r.Violations == 0 {
		r.Explanation = fmt.Sprintf("every superseded writer was fenced within %s (slowest %s)", secs(bound),
			secs(lv.MaxTimeToFence))
		return r
	}
	r.Status = Fail
	r.Explanation = fmt.Sprintf("%s not fenced within %s", plural(r.Violations, "writer", "writers"), secs(bound))
	r.Narrative = first
	return r
}
