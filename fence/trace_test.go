package fence

import "testing"

// trace is one deterministic interleaving from the protocol's catalogue. run asserts the
// correct outcome when v is Correct and, for each variant in mutants, that the variant
// demonstrably goes wrong in the same interleaving.
type trace struct {
	name    string
	mutants []Variant
	run     func(t *testing.T, w *world, v Variant)
}

var traces = []trace{
	{"equal-term-readoption", []Variant{NoReadoptionGuard}, traceEqualTermReadoption},
	{"takeover-sweeps-lower-term", []Variant{NoSweep}, traceTakeoverSweeps},
	{"partial-sweep", []Variant{NoSurvivorCheck, NoReverify, ReuseHalfClaimed}, tracePartialSweep},
	{"double-takeover", []Variant{NoReverify}, traceDoubleTakeover},
	{"stale-grant", []Variant{NoTermFloor}, traceStaleGrant},
	{"conflict-on-advance", []Variant{ConflictIsFenced}, traceConflictOnAdvance},
	{"conflict-on-create", []Variant{ConflictIsSuccess}, traceConflictOnCreate},
	{"lost-request-after-sweep", []Variant{AmbiguousIsSuccess}, traceLostRequestAfterSweep},
	{"lost-response-on-advance", []Variant{AmbiguousIsFenced}, traceLostResponseOnAdvance},
	{"lost-request-twin-wrote", []Variant{AdoptWithoutIdentity}, traceLostRequestTwinWrote},
	{"equal-term-takeover-mid-claim", []Variant{WithdrawArbitrated}, traceTakeoverMidClaim},
	{"relocation-happy-path", []Variant{TransferKeepsSource}, traceRelocationHappyPath},
	{"aborted-handoff-before-target-wrote", []Variant{TargetClaimsBlindly, RevertStandsDown}, traceAbortBeforeTargetWrote},
	{"aborted-handoff-after-target-wrote", []Variant{RevertWithFreshToken}, traceAbortAfterTargetWrote},
	{"lost-transfer-response", []Variant{NoAdoptionOnTransfer}, traceLostTransferResponse},
	{"lost-revert-response", []Variant{AmbiguousIsFenced}, traceLostRevertResponse},
	{"lost-revert-answer-unresolved", []Variant{RevertRetryBlind}, traceLostRevertUnresolved},
	{"higher-term-mid-relocation", []Variant{RecreateOn404}, traceHigherTermMidRelocation},
	{"swept-key-404-vs-412", []Variant{NotFoundIsRetryable}, traceSweptKey404vs412},
	{"segment-gates", []Variant{NoSegmentGates, CollectionFailsOpen, PublishFailsClosed}, traceSegmentGates},
	{"content-hash-aba", []Variant{NoSeq}, traceContentHashABA},
	{"fenced-at-another-term", nil, traceFencedAtAnotherTerm},
	{"foreign-content", nil, traceForeignContent},
	{"lost-response-unresolved-then-refused", nil, traceLostResponseUnresolved},
}

func TestTraces(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			for _, tr := range traces {
				for _, v := range append([]Variant{Correct}, tr.mutants...) {
					t.Run(tr.name+"/"+string(v), func(t *testing.T) {
						t.Parallel()
						tr.run(t, newWorld(t, b), v)
					})
				}
			}
		})
	}
}

// TestEveryFenceVariantMisbehaves holds the registry to the traces: every variant read in
// this package must be shown going wrong by at least one trace.
func TestEveryFenceVariantMisbehaves(t *testing.T) {
	shownBy := map[Variant][]string{}
	for _, tr := range traces {
		for _, v := range tr.mutants {
			if _, ok := v.Info(); !ok {
				t.Errorf("trace %s names unregistered variant %s", tr.name, v)
			}
			shownBy[v] = append(shownBy[v], tr.name)
		}
	}
	// Store-setup variants cannot be read by this package; these tests show their effect on
	// the fence.
	shownBy[SDKRetries] = append(shownBy[SDKRetries], "TestSDKRetriesTurnALostResponseIntoAFence")
	shownBy[AcceptUnenforcedStore] = append(shownBy[AcceptUnenforcedStore], "TestProbe")
	for _, info := range Variants() {
		if info.Name == Correct || info.Reader == ReadByCaller {
			continue
		}
		if len(shownBy[info.Name]) == 0 {
			t.Errorf("variant read by the %s, %s is not shown misbehaving by any test", info.Reader, info.Name)
		} else {
			t.Logf("%-26s shown by %v", info.Name, shownBy[info.Name])
		}
	}
}
