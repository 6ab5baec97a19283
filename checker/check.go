package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// Check judges a run. It never panics on protocol or store misbehaviour — those are results —
// and reports a broken harness as the verdict error. It does not modify in.
func Check(in Input) Result {
	res := Result{Events: len(in.Events), Raw: Pass}
	if msg := harnessError(in); msg != "" {
		return errored(res, msg)
	}
	if msg := expectError(in.Expect); msg != "" {
		return errored(res, msg)
	}
	x := buildIndex(in)
	if msg := x.recordingError(); msg != "" {
		return errored(res, msg)
	}
	att := &attestationJudge{x}
	dur, exc, attr := &durabilityJudge{x}, &exclusionJudge{index: x}, &attributionJudge{x}
	fen, reads, lin := &fencingJudge{x}, &readsJudge{x}, &linJudge{x}
	res.Resolved = att.ambiguityStats()
	loss, lost := dur.noAckedWriteLoss()
	res.Lost = lost
	attribution, acked := attr.ackAttribution()
	res.Acked = acked
	res.Invariants = []InvariantResult{
		loss,
		exc.mutualExclusion(),
		attribution,
		exc.fencedTerminal(),
		(&seqJudge{x}).seqMonotonic(),
		fen.noSpuriousFencing(),
		dur.targetAcksAreDurable(),
		reads.hydrationIntegrity(),
		reads.ownerNeverReadUnsealed(),
		lin.storeLinearizable(),
		dur.recoverySeesAcked(),
		(&failureJudge{x}).noSpuriousFailure(),
		(&servingJudge{x}).handoffResolves(),
	}
	res.Liveness = (&livenessJudge{index: x}).liveness()
	if in.Expect.MaxTimeToFence > 0 {
		res.Invariants = append(res.Invariants, timeToFence(res.Liveness, in.Expect.MaxTimeToFence))
	}
	if in.Expect.MaxTimeToAck > 0 {
		res.Invariants = append(res.Invariants, (&ackTimeJudge{x}).timeToAck(in.Expect.MaxTimeToAck))
	}
	if in.Expect.ServesAfterHeal {
		res.Invariants = append(res.Invariants, (&healJudge{x}).servesAfterHeal())
	}
	excuseLag(res.Invariants, in.Expect.Lag)
	res.Attestation = att.attest()
	compose(&res, x)
	return res
}

// LagTolerance is how far a run may fall behind its schedule (Expect.Lag) before a failed
// liveness invariant is no longer the protocol's to answer for: a quarter of a relocation's
// answer timeout. On the simulated stack (50 scenario seconds per real second) it is 10 ms of
// real time, above what a machine with spare cores shows (a median of about 0.13 s of
// scenario time with 16 schedules side by side on 2 cores) and below what an overloaded one
// does (0.7 s with twice that many under the race detector, where a target's answer missed
// a 2 s timeout and a relocation started 11 s late).
const LagTolerance = 500 * time.Millisecond

// liveness names the invariants that bound when something happens rather than what may
// never happen: a starved machine can fail them with a correct protocol.
var liveness = map[string]bool{HandoffResolves: true, TimeToFence: true, TimeToAck: true, ServesAfterHeal: true}

// excuseLag turns each failed liveness invariant inconclusive when the run fell behind its
// schedule by more than LagTolerance, saying by how much and keeping what it found.
func excuseLag(irs []InvariantResult, lag time.Duration) {
	if lag <= LagTolerance {
		return
	}
	for i := range irs {
		ir := &irs[i]
		if !liveness[ir.Name] || ir.Status != Fail {
			continue
		}
		ir.Status, ir.Violations = Inconclusive, 0
		ir.Explanation = fmt.Sprintf("not shown: the run fell %s behind its schedule (over the %s tolerated), "+
			"so the machine may have kept a copy from acting in time; as it stands, %s", secs(lag), secs(LagTolerance), ir.Explanation)
		ir.Narrative, ir.Counterexample = "", nil
	}
}

func errored(res Result, msg string) Result {
	res.Verdict, res.Raw, res.Error = Error, Error, msg
	res.Reasons = []string{msg}
	res.Narrative = "error: " + msg
	return res
}

// compose applies the verdict rule documented on Expect.
func compose(res *Result, x *index) {
	ex := x.in.Expect
	var failed []string
	status := map[string]InvariantResult{}
	for _, ir := range res.Invariants {
		res.Raw = worst(res.Raw, ir.Status)
		status[ir.Name] = ir
		if ir.Status == Fail {
			failed = append(failed, ir.Name)
		}
	}
	var reasons []string
	verdict := Pass
	survived := false // the verdict is fail only because an expected failure did not happen
	switch {
	case len(ex.Violated) > 0:
		verdict, survived, reasons = variantVerdict(ex.Violated, failed, status)
	case ex.Verdict == Fail:
		if len(failed) > 0 {
			reasons = append(reasons, "a failure was expected: "+strings.Join(failed, ", ")+" failed")
		} else {
			verdict, survived = Fail, true
			reasons = append(reasons, "a failure was expected, but every invariant held")
		}
	default:
		verdict = res.Raw
		for _, ir := range res.Invariants {
			if ir.Status == Fail || ir.Status == Inconclusive {
				reasons = append(reasons, fmt.Sprintf("%s %s: %s", ir.Name, verbOf(ir.Status), ir.Explanation))
			}
		}
		for _, w := range ex.Fenced {
			switch {
			case x.everFenced(w):
			case len(ex.Unrun) > 0:
				// The expectation assumed a step that would have superseded w, and it never
				// ran (its event never came): w's fate was not put to the test.
				verdict = worst(verdict, Inconclusive)
				reasons = append(reasons, fmt.Sprintf("expected %s to end fenced; it never was, but the schedule assumed a step that never ran (%s)",
					w, strings.Join(ex.Unrun, "; ")))
			default:
				verdict = worst(verdict, Fail)
				reasons = append(reasons, fmt.Sprintf("expected %s to end fenced; it never was", w))
			}
		}
	}

	gating := gatingReasons(res, ex, segmentsOnly(x.in))
	// A run that showed the failure it was expected to show proved its point, whatever else it
	// did not get to exercise (a variant killed early never reaches its later faults); a pass
	// of the correct protocol, or a variant's survival, proves nothing unless the run did
	// exercise what it declared.
	shown := verdict == Pass && (len(ex.Violated) > 0 || ex.Verdict == Fail)
	if len(gating) > 0 && ((verdict == Pass && !shown) || survived) {
		verdict = Inconclusive
	}
	reasons = append(reasons, gating...)
	if len(reasons) == 0 {
		reasons = append(reasons, fmt.Sprintf("all %s held", plural(len(res.Invariants), "invariant", "invariants")))
	}
	reasons = append(reasons, otherWay(res.Attestation, ex)...)
	res.Verdict, res.Reasons = verdict, reasons
	res.Narrative = narrative(verdict, reasons, res.Invariants)
}

// narrative is the verdict with its reasons, then the story of each failed invariant.
func narrative(verdict Verdict, reasons []string, invariants []InvariantResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s.", verdict, strings.Join(reasons, "; "))
	for _, ir := range invariants {
		if ir.Status == Fail && ir.Narrative != "" {
			fmt.Fprintf(&b, "\n%s: %s.", ir.Name, ir.Narrative)
		}
	}
	return b.String()
}

// variantVerdict judges a broken variant's run: it is killed exactly when every listed
// invariant failed; survived says a fail comes only from a listed invariant that passed.
func variantVerdict(violated, failed []string, status map[string]InvariantResult) (verdict Verdict, survived bool, reasons []string) {
	verdict = Pass
	var unexpected []string
	for _, n := range failed {
		if !slices.Contains(violated, n) {
			unexpected = append(unexpected, n)
		}
	}
	// A broken protocol often breaks more than the invariant it is known for (a lost write
	// is usually also a second owner); those extra failures are reported, and the kill
	// stands or falls with the listed ones.
	for _, n := range unexpected {
		reasons = append(reasons, fmt.Sprintf("%s also failed: %s", n, status[n].Explanation))
	}
	var passed, unsure []string
	for _, n := range violated {
		switch status[n].Status {
		case Fail:
		case Inconclusive:
			unsure = append(unsure, n)
		default:
			passed = append(passed, n)
		}
	}
	for _, n := range passed {
		reasons = append(reasons, fmt.Sprintf("variant survived: expected %s to fail, it passed", n))
	}
	for _, n := range unsure {
		reasons = append(reasons, fmt.Sprintf("expected %s to fail, it was inconclusive: %s", n, status[n].Explanation))
	}
	switch {
	case len(passed) > 0:
		verdict, survived = Fail, true
	case len(unsure) > 0:
		verdict = Inconclusive
	default:
		reasons = append([]string{"variant killed: " + strings.Join(violated, ", ") + " failed as expected"}, reasons...)
	}
	return verdict, survived, reasons
}

// segmentsOnly says whether the run sent no op and published a segment reference set: the
// work a schedule without traffic (refreshes, collections and hydrations) exercises. A run
// that sent ops is judged by its acknowledgements whatever it published.
func segmentsOnly(in Input) bool {
	published := false
	for _, e := range in.Events {
		switch {
		case e.Kind == history.Op:
			return false
		case e.Kind == history.Publish && e.Outcome == history.OK:
			published = true
		}
	}
	return published
}

// gatingReasons says why a run may not have exercised what it declared: a declared fault
// that never fired, too few acknowledgements, or no fault declared and nothing acknowledged
// (nor, in a run that sent no op, published).
func gatingReasons(res *Result, ex Expect, segmentsOnly bool) []string {
	var gating []string
	correct := len(ex.Violated) == 0 && ex.Verdict != Fail
	for _, a := range res.Attestation {
		switch {
		case a.Fired:
		case a.Missed != "" && correct:
			// The race went the other way: the correct protocol met the other order, which
			// is as much a pass as the order the scenario aimed at; the reason says so.
		case a.Missed != "":
			gating = append(gating, fmt.Sprintf("declared fault %q (%s) never fired: the race went the other way (%s)", a.Name, a.Layer, a.Missed))
		default:
			gating = append(gating, fmt.Sprintf("declared fault %q (%s) never fired", a.Name, a.Layer))
		}
	}
	if ex.MinAcked > 0 && res.Acked < ex.MinAcked {
		gating = append(gating, fmt.Sprintf("only %s acknowledged, below the floor of %d",
			plural(res.Acked, "op", "ops"), ex.MinAcked))
	}
	if res.Acked == 0 && !segmentsOnly && len(ex.Faults) == 0 && ex.MinAcked == 0 {
		gating = append(gating, "nothing was acknowledged (nor, in a run that sent no op, published) and no fault was declared: the run exercised nothing")
	}
	return gating
}

// otherWay notes, for a correct run, each event-triggered fault that could not fire because
// its event never came: the verdict stands, and says which race went the other way.
func otherWay(att []FaultAttestation, ex Expect) []string {
	if len(ex.Violated) > 0 || ex.Verdict == Fail {
		return nil
	}
	var notes []string
	for _, a := range att {
		if !a.Fired && a.Missed != "" {
			notes = append(notes, fmt.Sprintf("the race went the other way: %s, so declared fault %q (%s) did not fire", a.Missed, a.Name, a.Layer))
		}
	}
	return notes
}

func verbOf(v Verdict) string {
	if v == Inconclusive {
		return "was inconclusive"
	}
	return "failed"
}

// Exit maps a verdict to the bench's process exit code: 0 pass, 1 fail, 2 inconclusive,
// 255 error.
func (v Verdict) Exit() int {
	switch v {
	case Pass:
		return 0
	case Fail:
		return 1
	case Inconclusive:
		return 2
	default:
		return 255
	}
}
