package checker

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// failureJudge judges that every failed protocol step had a cause: NoSpuriousFailure.
type failureJudge struct{ *index }

// stepKinds are the protocol steps NoSpuriousFailure judges: each is a writer's walk through
// store calls that a correct protocol fails only when the store or another writer made it.
var stepKinds = map[history.Kind]bool{
	history.Promote: true, history.Claim: true, history.CAS: true, history.Sync: true, history.Adopt: true, history.Revert: true,
	history.Transfer: true, history.RestoreRead: true, history.Hydrate: true, history.Publish: true,
	history.Collect: true,
}

// writes are the store calls that change what the store holds.
var writes = map[history.Kind]bool{
	history.StorePut: true, history.StorePutIfAbsent: true, history.StorePutIfMatch: true,
	history.StoreDelete: true, history.StoreDeleteMany: true,
}

// noSpuriousFailure judges every protocol step of a writer whose store calls the history
// records (a claim, sync, CAS, adoption, revert, transfer, restore read, hydration,
// publication or collection) that failed or ended with an unknown outcome, fenced aside
// (NoSpuriousFencing judges those). Such a step is explained only by something that happened
// while it ran: a store call of the same writer that failed or had an unknown outcome, a
// write to the store by another writer, a fault open on the writer (or an incarnation it
// replaced) or on the store, or the writer crashing, pausing, resuming or restarting; or by
// another writer's claim at a higher term invoked before it ended, which a gate may have read. A step that fails with none of these
// failed on a store that answered every call as asked and held still: the protocol made the
// failure up, and a system built on it retries, stalls or gives up a failover for nothing.
func (x *failureJudge) noSpuriousFailure() InvariantResult {
	r := newResult(NoSpuriousFailure)
	recorded := map[string]bool{}
	for i := range x.ev {
		if e := &x.ev[i]; e.Kind.StoreCall() {
			recorded[e.Writer] = true
		}
	}
	windows := x.faultWindowsByWriter()
	judged := 0
	first := int32(-1)
	for _, p := range x.order {
		e := &x.ev[p]
		if !stepKinds[e.Kind] || !recorded[e.Writer] {
			continue
		}
		if e.Outcome != history.Fail && e.Outcome != history.Ambiguous {
			continue
		}
		judged++
		names := x.incarnations(e.Writer)
		open := windows[""] // faults on the store as a whole
		for _, n := range names {
			open = append(slices.Clip(open), windows[n]...)
		}
		explained := x.failureExplained
		if e.Kind == history.Promote {
			explained = x.promotionEnded
		}
		if explained(p, names, open) {
			continue
		}
		r.Violations++
		if first < 0 {
			first = p
		}
	}
	if gp, n := x.groundlessGiveUp(); n > 0 && r.Violations == 0 {
		// A relocation target gave the handoff up with nothing failing.
		g := &x.ev[gp]
		r.Status, r.Violations = Fail, n
		r.Explanation = fmt.Sprintf("%s gave a relocation up with no failed store call of its own "+
			"(a target gives up only when its hydration fails)", plural(n, "relocation target", "relocation targets"))
		r.Narrative = fmt.Sprintf("%s %s stood down as the relocation target at term %d (%s), yet every store call "+
			"it had made since it last served, stood down or started was answered as asked",
			secs(g.Complete), g.Writer, g.Term, g.Err)
		r.Counterexample = x.idsOf(gp)
		return r
	}
	if mp, n, answer := x.misreadAnswer(); n > 0 && r.Violations == 0 {
		// No step failed without a cause, but one ended in a way its own write's definite
		// answer rules out.
		f := &x.ev[mp]
		r.Status, r.Violations = Fail, n
		r.Explanation = fmt.Sprintf("%s ended as %s although its own request got %s "+
			"(403 AccessDenied fails the step, 404 to If-Match fences it, an unknown outcome is retried, never failed)",
			plural(n, "fence step", "fence steps"), f.Outcome, answer)
		r.Narrative = fmt.Sprintf("%s %s's %s at term %d ended %s (%s) at %s, yet its last request on %s got %s: "+
			"the protocol takes a configuration error for a failure, a key gone for fencing and an unknown outcome for "+
			"one to retry",
			secs(f.Invoke), f.Writer, f.Kind, f.Term, f.Outcome, f.Err, secs(f.Complete), f.Key, answer)
		r.Counterexample = x.idsOf(mp)
		return r
	}
	if kp, n := x.keptStaleGrant(); n > 0 && r.Violations == 0 {
		// A claim superseded mid-claim left the key it created for the newer owner to meet.
		k := &x.ev[kp]
		r.Status, r.Violations = Fail, n
		r.Explanation = fmt.Sprintf("%s superseded mid-claim kept the key it had created "+
			"(a stale grant withdraws itself, or the newer owner's claims meet it)", plural(n, "claim", "claims"))
		r.Narrative = fmt.Sprintf("%s %s's claim at term %d created %s, read its own version back, listed the fence "+
			"keys and came back fenced at %s (%s), yet it never deleted the key it created",
			secs(k.Invoke), k.Writer, k.Term, k.Key, secs(k.Complete), k.Err)
		r.Counterexample = x.idsOf(kp)
		return r
	}
	if judged == 0 {
		r.Explanation = "no protocol step failed"
		return r
	}
	if r.Violations == 0 {
		r.Explanation = plural(judged, "failed protocol step", "failed protocol steps") +
			", each with a failed store call, another writer's write, a fault or a stop while it ran"
		return r
	}
	f := &x.ev[first]
	r.Status = Fail
	if f.Kind == history.Promote {
		r.Explanation = fmt.Sprintf("%s gave up on a failure it should have retried: the writer was not stopped, "+
			"its context did not end and its bounded retries had not run out", plural(r.Violations, "failed protocol step",
			"failed protocol steps"))
		r.Narrative = fmt.Sprintf("%s %s's promotion at term %d ended with an unknown outcome (%s) at %s, while the writer "+
			"still lived: a promotion retries a failure whose outcome is unknown until it succeeds, is fenced or is stopped",
			secs(f.Invoke), f.Writer, f.Term, f.Err, secs(f.Complete))
		r.Counterexample = x.idsOf(first)
		return r
	}
	r.Explanation = fmt.Sprintf("%s with no cause: no store call of the writer failed, no other writer wrote, "+
		"no fault was open and the writer was not stopped while it ran", plural(r.Violations, "failed protocol step",
		"failed protocol steps"))
	r.Narrative = fmt.Sprintf("%s %s's %s at term %d failed (%s) between %s and %s, yet every store call it made "+
		"was answered as asked, no other writer wrote to the store, no fault was open on it and it was not stopped",
		secs(f.Invoke), f.Writer, f.Kind, f.Term, f.Err, secs(f.Invoke), secs(f.Complete))
	r.Counterexample = x.idsOf(first)
	return r
}

// targetGiveUp is the Detail of the StandDown a relocation target records when it gives the
// handoff up (writers' giveUp).
const targetGiveUp = "relocation-target"

// groundlessGiveUp returns the first relocation target's stand-down (-1 if none), and how
// many there are, that no failure of its own explains: a target gives a handoff up only when
// its hydration failed, so some store call of its incarnation, made since it last ended a
// step (a stand-down, fence or crash of the writer) or started, did not end ok. A copy that
// gives up with every request answered as asked refused a relocation for nothing.
func (x *index) groundlessGiveUp() (first int32, n int) {
	first = -1
	for _, p := range x.standDowns {
		g := &x.ev[p]
		if g.Detail != targetGiveUp {
			continue
		}
		since := time.Duration(-1)
		for _, ps := range [][]int32{x.standDowns, x.fenced, x.crashes} {
			for _, q := range ps {
				if e := &x.ev[q]; q != p && e.Writer == g.Writer && e.Complete <= g.Invoke && e.Complete > since {
					since = e.Complete
				}
			}
		}
		failed := false
		for q := range x.ev {
			e := &x.ev[q]
			if e.Writer == g.Writer && (e.Kind.StoreCall() || e.Kind == history.Hydrate) && e.Outcome != history.OK &&
				e.Invoke > since && e.Invoke <= g.Invoke {
				failed = true
				break
			}
		}
		if failed {
			continue
		}
		if first < 0 {
			first = p
		}
		n++
	}
	return first, n
}

// hydrationAttempts is how many times a promotion's hydration lists and fetches before it
// gives up (writers' hydrate): the one retry loop of a promotion that is bounded.
const hydrationAttempts = 5

// promotionEnded reports whether the failed promotion at p, of the writer whose incarnations
// are names, ended for a reason that ends a promotion; open are the fault windows on those or
// on the store. A promotion retries every failure whose
// outcome is unknown (its seal, its restore read, the seal's verification) until it succeeds
// or is fenced, and its hydration a bounded number of times; so a promotion that failed
// outright (a refusal that is not fencing) is judged like any other step, and one that ended
// with an unknown outcome is explained only by its writer's end: a crash or restart while it
// ran, its context ending (the run winding down, a crash), or the hydration's attempts
// running out, which takes at least that many failed store calls of its own (a fetch is one).
func (x *failureJudge) promotionEnded(p int32, names []string, open []window) bool {
	f := &x.ev[p]
	if f.Outcome == history.Fail {
		return x.failureExplained(p, names, open)
	}
	if strings.Contains(f.Err, context.Canceled.Error()) || strings.Contains(f.Err, context.DeadlineExceeded.Error()) {
		return true
	}
	failed := 0
	for _, q := range x.order {
		e := &x.ev[q]
		if e.Invoke > f.Complete {
			break
		}
		if e.Complete < f.Invoke || !slices.Contains(names, e.Writer) {
			continue
		}
		switch {
		case e.Kind == history.Crash || e.Kind == history.Restart:
			return true
		case e.Kind.StoreCall() && (e.Outcome == history.Fail || e.Outcome == history.Ambiguous):
			failed++
		}
	}
	return failed >= hydrationAttempts
}

// failureExplained reports whether the failed step at p, of the writer whose incarnations are
// names, had a cause while it ran; open are the fault windows on those or on the store.
func (x *failureJudge) failureExplained(p int32, names []string, open []window) bool {
	f := &x.ev[p]
	from, to := f.Invoke, f.Complete
	if overlaps(open, from, to) {
		return true
	}
	for _, q := range x.order {
		e := &x.ev[q]
		if e.Invoke > to {
			break
		}
		if e.Kind == history.Claim && !slices.Contains(names, e.Writer) && e.Term > f.Term {
			return true // a higher term, which the step may have found (a gate refusing)
		}
		if e.Complete < from || q == p {
			continue
		}
		own := e.Writer == f.Writer
		switch {
		case own && (e.Kind.StoreCall() || e.Kind == history.Hydrate) &&
			(e.Outcome == history.Fail || e.Outcome == history.Ambiguous):
			return true
		case !own && writes[e.Kind]:
			return true
		case own && (e.Kind == history.Crash || e.Kind == history.Pause || e.Kind == history.Restart ||
			e.Kind == history.Resume):
			return true
		}
	}
	return false
}

// faultWindowsByWriter returns the windows of every fault the history records (FaultStart to
// its FaultEnd, or to the end of the history when it never ended) by the writer it was
// recorded for; a fault on the store as a whole is under "".
func (x *index) faultWindowsByWriter() map[string][]window {
	var end time.Duration
	for i := range x.ev {
		end = max(end, x.ev[i].Complete)
	}
	type key struct{ w, d string }
	open := map[key]time.Duration{}
	out := map[string][]window{}
	for _, p := range x.order {
		e := &x.ev[p]
		k := key{e.Writer, e.Detail}
		switch e.Kind {
		case history.FaultStart:
			open[k] = e.Invoke
		case history.FaultEnd:
			if from, ok := open[k]; ok {
				out[e.Writer] = append(out[e.Writer], window{from, e.Invoke})
				delete(open, k)
			}
		}
	}
	for k, from := range open {
		out[k.w] = append(out[k.w], window{from, end})
	}
	return out
}

// incarnations returns w and the incarnations it replaced (history.Restart), newest first: a
// fault the schedule opened on a writer is recorded under the name it was first given.
func (x *index) incarnations(w string) []string {
	out := []string{w}
	for n, ok := x.alias[w]; ok && len(out) <= len(x.alias); n, ok = x.alias[n] {
		out = append(out, n)
	}
	return out
}
