package checker

import (
	"math"
	"slices"
	"sort"
	"time"

	"github.com/fencebench/fencebench/history"
)

// attestationJudge reports what the run attests beside the invariants: how the ambiguous
// writes resolved, and which declared faults fired.
type attestationJudge struct{ *index }

// ledgerSlack tolerates a request reaching the proxy a hair before the client stamped its
// invoke time (both read the same run clock, but at different moments).
const ledgerSlack = time.Millisecond

// writesKey reports whether events of kind k write a fence object (a conditional PUT).
func writesKey(k history.Kind) bool {
	switch k {
	case history.CAS, history.Claim, history.Transfer, history.Revert, history.Adopt:
		return true
	}
	return false
}

// notApplied reports whether the ledger proves the request was not applied: the store
// answered a 4xx, or a fault rule answered in the store's place without forwarding. A
// request the store received twice is proven only by a 2xx (the recorded answer may be the
// other copy's).
func notApplied(l *history.LedgerEntry) bool {
	if l.Copies > 1 {
		return false
	}
	if l.Forwarded {
		return l.Status >= 400 && l.Status < 500
	}
	return l.Rule != ""
}

type wkey struct{ writer, key string }

// resolveAmbiguous settles ambiguous fence writes from the ledger. The ledger entries
// considered for an event are the writer's PUTs on the event's key that arrived from its
// invoke time until the writer's next fence write on that key was invoked — a request held up
// in the network can reach the store after its client gave up, and a writer's fence writes
// are serialised, so nothing else of that writer can be in between. A CAS, Transfer or Revert
// further matches on the If-Match token it presented.
//
//   - some candidate applied (2xx)          -> applied
//   - every candidate proven not applied    -> not applied
//   - no candidate, or any other answer     -> unknown (treated as possibly applied)
func resolveAmbiguous(x *index) map[int32]Resolution {
	out := map[int32]Resolution{}
	var any bool
	for i := range x.ev {
		if x.ev[i].Outcome == history.Ambiguous && writesKey(x.ev[i].Kind) {
			any = true
			break
		}
	}
	if !any {
		return out
	}
	puts := x.putsByWriterKey()
	writes := map[wkey][]int32{}
	for _, p := range x.order {
		e := &x.ev[p]
		if writesKey(e.Kind) && e.Key != "" {
			k := wkey{x.pathOf(e.Writer), e.Key}
			writes[k] = append(writes[k], p)
		}
	}
	for k, ps := range writes {
		for j, p := range ps {
			e := &x.ev[p]
			if e.Outcome != history.Ambiguous {
				continue
			}
			until := time.Duration(math.MaxInt64)
			if j+1 < len(ps) {
				until = x.ev[ps[j+1]].Invoke
			}
			r, cands := x.resolve(e, puts[k], until)
			out[p] = Resolution{Event: e.ID, Outcome: r, Ledger: cands}
		}
	}
	return out
}

// putsByWriterKey lists the ledger's PUTs per writer and key, in arrival order.
func (x *index) putsByWriterKey() map[wkey][]int {
	puts := map[wkey][]int{}
	for i := range x.in.Ledger {
		l := &x.in.Ledger[i]
		if l.Method == "PUT" {
			k := wkey{l.Writer, l.Key}
			puts[k] = append(puts[k], i)
		}
	}
	for k, ls := range puts {
		slices.SortFunc(ls, func(a, b int) int {
			la, lb := &x.in.Ledger[a], &x.in.Ledger[b]
			if la.Time != lb.Time {
				if la.Time < lb.Time {
					return -1
				}
				return 1
			}
			return int(la.ID - lb.ID)
		})
		puts[k] = ls
	}
	return puts
}

// resolve settles ambiguous write e from the writer's PUTs on its key (ledger indexes ls, in
// arrival order) that arrived before until; it returns the outcome and the candidates.
func (x *index) resolve(e *history.Event, ls []int, until time.Duration) (string, []int64) {
	var cands []int64
	applied, allNot := false, true
	from := sort.Search(len(ls), func(i int) bool { return x.in.Ledger[ls[i]].Time >= e.Invoke-ledgerSlack })
	for _, li := range ls[from:] {
		l := &x.in.Ledger[li]
		if l.Time >= until {
			break
		}
		if e.Kind == history.Claim {
			if l.IfMatch == "" && l.IfNoneMatch == "" {
				continue
			}
		} else if e.Token != "" && normToken(l.IfMatch) != normToken(e.Token) {
			continue
		}
		cands = append(cands, l.ID)
		if l.Applied() {
			applied = true
		} else if !notApplied(l) {
			allNot = false
		}
	}
	r := ResolvedUnknown
	switch {
	case applied:
		r = ResolvedApplied
	case len(cands) > 0 && allNot:
		r = ResolvedNotApplied
	}
	return r, cands
}

// ambiguityStats reports resolutions in history order.
func (x *attestationJudge) ambiguityStats() AmbiguityStats {
	var s AmbiguityStats
	ps := make([]int32, 0, len(x.resolved))
	for p := range x.resolved {
		ps = append(ps, p)
	}
	slices.SortFunc(ps, func(a, b int32) int { return eventOrder(x.ev[a], x.ev[b]) })
	for _, p := range ps {
		r := x.resolved[p]
		switch r.Outcome {
		case ResolvedApplied:
			s.Applied++
		case ResolvedNotApplied:
			s.NotApplied++
		default:
			s.Unknown++
		}
		s.Events = append(s.Events, r)
	}
	return s
}

// possiblyApplied reports whether the fence write at p may have landed: ok, or ambiguous and
// not proven otherwise.
func (x *index) possiblyApplied(p int32) bool {
	e := &x.ev[p]
	switch e.Outcome {
	case history.OK:
		return true
	case history.Ambiguous:
		return x.resolved[p].Outcome != ResolvedNotApplied
	}
	return false
}

// certainlyApplied reports whether the fence write at p landed: ok, or ambiguous and shown
// applied by the ledger.
func (x *index) certainlyApplied(p int32) bool {
	e := &x.ev[p]
	switch e.Outcome {
	case history.OK:
		return true
	case history.Ambiguous:
		return x.resolved[p].Outcome == ResolvedApplied
	}
	return false
}

// attest proves, per declared fault, that it fired: an L7 fault by a ledger entry naming its
// rule, an L4 or protocol fault by a FaultStart event naming it.
func (x *attestationJudge) attest() []FaultAttestation {
	var out []FaultAttestation
	for _, f := range x.in.Expect.Faults {
		a := FaultAttestation{Name: f.Name, Layer: f.Layer, Missed: f.Missed}
		first := time.Duration(-1)
		if f.Layer != "l4" && f.Layer != "protocol" {
			for i := range x.in.Ledger {
				l := &x.in.Ledger[i]
				if l.Rule == f.Name {
					a.Count++
					if first < 0 || l.Time < first {
						first = l.Time
					}
				}
			}
		}
		if f.Layer != "l7" {
			for _, p := range x.faultStarts {
				e := &x.ev[p]
				if e.Detail == f.Name {
					a.Count++
					if first < 0 || e.Invoke < first {
						first = e.Invoke
					}
				}
			}
		}
		a.Fired = a.Count > 0
		if a.Fired {
			a.First = first
		}
		out = append(out, a)
	}
	return out
}
