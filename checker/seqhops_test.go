package checker

import (
	"testing"

	"github.com/fencebench/fencebench/history"
)

// TestSeqGapFilledByTheLedger: twins race for term 6; c's arbitration CAS is applied by the
// store (seq 1), but d's CAS follows before c's verifying read, so c's claim records fenced
// and only b's seq 0 and d's seq 2 are accepted writes in the events. The ledger shows the
// store applied c's write, so the chain has no gap; had the store refused c's write, seq 1
// was never accepted and the gap is a violation.
func TestSeqGapFilledByTheLedger(t *testing.T) {
	build := func(cStatus int, cETag string) *hb {
		h := &hb{}
		h.claim("b", 6, k6, 0, 10, 0, "b0", history.OK, "seal")
		h.put("b", k6, 1, 3, "", "*", 200, "b0")
		h.claim("c", 6, k6, 2, 20, 0, "", history.FencedOut, "seal")
		h.put("c", k6, 4, 6, "", "*", 412, "")
		h.put("c", k6, 7, 9, "b0", "", cStatus, cETag)
		h.claim("d", 6, k6, 3, 30, 2, "d2", history.OK, "seal")
		h.put("d", k6, 5, 7, "", "*", 412, "")
		h.put("d", k6, 10, 12, "c1", "", 200, "d2")
		h.fenced("c", 6, 21, "taken over mid-claim")
		return h
	}
	wantStatus(t, Check(build(200, "c1").input()), SeqMonotonic, Pass)
	ir := wantStatus(t, Check(build(412, "").input()), SeqMonotonic, Fail)
	wantMentions(t, ir.Narrative, "seq 1 was never accepted")
	// A ledger chain one hop short of the gap fills nothing.
	h := build(200, "c1")
	h.put("x", k6, 13, 14, "d2", "", 200, "x3")
	h.claim("e", 6, k6, 15, 40, 4, "e4", history.OK, "seal")
	wantStatus(t, Check(h.input()), SeqMonotonic, Fail)
}

// TestLostReadoptionTakesTheSeqAfterWhatItPresented: a's first advance after its seal is a
// re-adopting claim, which learns its seq only by reading the key. Its CAS is applied but the
// answer is lost, so its event is ambiguous and carries no seq; the ledger shows it applied,
// presenting the seal's token. It is the chain's seq 1, not a second seq 0, and a's next
// claim at seq 2 continues the chain. Found by exploration.
func TestLostReadoptionTakesTheSeqAfterWhatItPresented(t *testing.T) {
	build := func(nextSeq int64) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 1, 3, "", "*", 200, "a0")
		h.claim("a", 5, k5, 20, 30, 0, "", history.Ambiguous, "readopt")
		h.put("a", k5, 21, 22, "", "*", 412, "")
		h.put("a", k5, 23, 24, "a0", "", 200, "a1")
		h.led[len(h.led)-1].Delivered = false // the answer was lost
		h.claim("a", 5, k5, 40, 50, nextSeq, "a2", history.OK, "readopt")
		h.put("a", k5, 41, 42, "", "*", 412, "")
		h.put("a", k5, 43, 44, "a1", "", 200, "a2")
		return h
	}
	wantStatus(t, Check(build(2).input()), SeqMonotonic, Pass)
	// The same chain with the next claim at seq 3 has a gap at 2 nobody filled.
	wantStatus(t, Check(build(3).input()), SeqMonotonic, Fail)
}

// TestLostReadoptionAfterAFailedOneFollowsTheLedger: a's re-adopting claim has its CAS
// applied (seq 1) and then fails on its verifying read, so no event reports that write. Its
// next attempt presents that write's token and is applied, but the answer is lost: an
// ambiguous event with no seq. The ledger shows which write the token came from, so the
// lost one is seq 2, not a second seq 0, and a's next claim at seq 3 continues the chain.
// Found by exploration (a script of a held read, a 403 and a lost answer on a target's
// adoption).
func TestLostReadoptionAfterAFailedOneFollowsTheLedger(t *testing.T) {
	build := func(nextSeq int64) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 1, 3, "", "*", 200, "a0")
		h.claim("a", 5, k5, 20, 30, 0, "", history.Fail, "readopt")
		h.put("a", k5, 21, 22, "", "*", 412, "")
		h.put("a", k5, 23, 24, "a0", "", 200, "a1")
		h.claim("a", 5, k5, 40, 50, 0, "", history.Ambiguous, "readopt")
		h.put("a", k5, 41, 42, "", "*", 412, "")
		h.put("a", k5, 43, 44, "a1", "", 200, "a2")
		h.led[len(h.led)-1].Delivered = false // the answer was lost
		h.claim("a", 5, k5, 60, 70, nextSeq, "a3", history.OK, "readopt")
		h.put("a", k5, 61, 62, "", "*", 412, "")
		h.put("a", k5, 63, 64, "a2", "", 200, "a3")
		return h
	}
	wantStatus(t, Check(build(3).input()), SeqMonotonic, Pass)
	wantStatus(t, Check(build(4).input()), SeqMonotonic, Fail)
}

// TestAmbiguousTwinSealThatLandedJustifiesTheFence: b, promoted at a's term, arbitrates a's
// key with a CAS the store applies, then its verifying re-list fails, so its claim stays
// ambiguous. The key moved: a's next CAS is refused and a is fenced legitimately. Had the
// store refused b's CAS, nothing moved the key and a's fence would be spurious. Found by
// exploration.
func TestAmbiguousTwinSealThatLandedJustifiesTheFence(t *testing.T) {
	build := func(bStatus int, bETag string) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 1, 3, "", "*", 200, "a0")
		h.claim("b", 5, k5, 20, 60, 0, "", history.Ambiguous, "seal")
		h.put("b", k5, 21, 22, "", "*", 412, "")
		h.put("b", k5, 23, 24, "a0", "", bStatus, bETag)
		h.cas("a", 5, k5, 70, 80, 1, "a0", history.FencedOut)
		h.put("a", k5, 71, 72, "a0", "", 412, "")
		h.fenced("a", 5, 81, "lost the CAS")
		return h
	}
	wantStatus(t, Check(build(200, "b1").input()), NoSpuriousFencing, Pass)
	wantStatus(t, Check(build(412, "").input()), NoSpuriousFencing, Fail)
}

// TestRestartedWriterIsCoveredByItsPathsLedger: a restarted incarnation reaches the store by
// its predecessor's path, so the ledger names the predecessor. With the restart recorded the
// store's history is complete and linearizability is judged; without it the incarnation's
// fence writes look unrecorded and the check is inconclusive.
func TestRestartedWriterIsCoveredByItsPathsLedger(t *testing.T) {
	build := func(recorded bool) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 1, 3, "", "*", 200, "a0")
		h.add(history.Event{Kind: history.Crash, Writer: "a", Invoke: ms(20)})
		if recorded {
			h.add(history.Event{Kind: history.Restart, Writer: "a2", Detail: "a", Invoke: ms(30)})
		}
		h.claim("a2", 6, k6, 40, 50, 0, "n0", history.OK, "seal")
		h.put("a", k6, 41, 42, "", "*", 200, "n0")
		return h
	}
	wantStatus(t, Check(build(true).input()), StoreLinearizable, Pass)
	wantStatus(t, Check(build(false).input()), StoreLinearizable, Inconclusive)
}

// TestWithdrawnCreateAfterASweepIsNoFork: c's higher-term claim sweeps term 5's key; b, a twin
// at term 5, was creating that key at the same moment and its create lands on the emptied key
// (its answer is lost, its claim stays ambiguous). b then learns of term 11 and is fenced,
// never acting on the key again: nothing forked that anyone acts on. Had b gone on to write
// the key, the recreated seq 0 would be a fork. Found by exploration.
func TestWithdrawnCreateAfterASweepIsNoFork(t *testing.T) {
	build := func(bActs bool) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 1, 3, "", "*", 200, "a0")
		h.claim("b", 5, k5, 20, 90, 0, "", history.Ambiguous, "seal")
		h.claim("c", 6, k6, 25, 40, 0, "c0", history.OK, "seal")
		h.ledger(history.LedgerEntry{Writer: "c", Method: "POST", Query: "delete=", Keys: []string{k5}, Time: ms(30), Done: ms(31),
			Forwarded: true, Status: 200, Delivered: true})
		h.put("b", k5, 32, 33, "", "*", 200, "b0")
		h.led[len(h.led)-1].Delivered = false
		if bActs {
			h.cas("b", 5, k5, 100, 110, 1, "b1", history.OK)
			h.put("b", k5, 101, 102, "b0", "", 200, "b1")
		} else {
			h.fenced("b", 5, 95, "superseded by term 6")
		}
		return h
	}
	wantStatus(t, Check(build(false).input()), SeqMonotonic, Pass)
	wantStatus(t, Check(build(true).input()), SeqMonotonic, Fail)
}

// TestWithdrawnRecreationDoesNotReviveAToken: b's higher term sweeps a's key; a's re-adopting
// claim then creates the key again with its seal's very body (same ETag), re-lists, finds the
// higher term and deletes it. The old token lived again only until a's own delete and nobody
// presented it: no violation. Had a CASed on the revived key instead, the token did come back.
// Found by exploration.
func TestWithdrawnRecreationDoesNotReviveAToken(t *testing.T) {
	build := func(withdraw bool) *hb {
		h := sealedThenSwept(40)
		h.claim("a", 5, k5, 50, 70, 0, "", history.FencedOut, "readopt")
		h.put("a", k5, 51, 52, "", "*", 200, "a0")
		if withdraw {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "DELETE", Key: k5, Time: ms(60), Done: ms(61), Forwarded: true,
				Status: 204, Delivered: true})
		} else {
			h.put("a", k5, 60, 61, "a0", "", 200, "a1")
		}
		h.fenced("a", 5, 71, "superseded by term 6")
		return h
	}
	wantStatus(t, Check(build(true).input()), SeqMonotonic, Pass)
	wantStatus(t, Check(build(false).input()), SeqMonotonic, Fail)
}

// TestWithdrawnCreateRacingTheSweep: a's create arrives just before b's sweep of the key but
// the store applies it just after (the two overlap); a then withdraws. The sweep came first,
// so the create is still a's own, taken back by its own delete.
func TestWithdrawnCreateRacingTheSweep(t *testing.T) {
	h := &hb{}
	h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
	h.put("a", k5, 1, 3, "", "*", 200, "a0")
	h.claim("b", 6, k6, 20, 60, 0, "b0", history.OK, "seal")
	h.claim("a", 5, k5, 40, 70, 0, "", history.FencedOut, "readopt")
	h.put("a", k5, 41, 50, "", "*", 200, "a0")
	h.ledger(history.LedgerEntry{Writer: "b", Method: "POST", Query: "delete=", Keys: []string{k5}, Time: ms(42), Done: ms(43),
		Forwarded: true, Status: 200, Delivered: true})
	h.ledger(history.LedgerEntry{Writer: "a", Method: "DELETE", Key: k5, Time: ms(60), Done: ms(61), Forwarded: true,
		Status: 204, Delivered: true})
	h.fenced("a", 5, 71, "superseded by term 6")
	wantStatus(t, Check(h.input()), SeqMonotonic, Pass)
}

// TestRecreationSweptAgainDoesNotReviveAToken: as above, but a's re-creation (its create held
// in flight across b's sweep) is removed by b's second sweep before a's own delete could come:
// the old token lived again only until that sweep and nobody presented it. Found by
// exploration (a correct run, 1 in 20,000 simulated schedules).
func TestRecreationSweptAgainDoesNotReviveAToken(t *testing.T) {
	build := func(presented bool) *hb {
		h := sealedThenSwept(90)
		h.claim("a", 5, k5, 25, 100, 0, "", history.FencedOut, "readopt")
		h.put("a", k5, 26, 52, "", "*", 200, "a0")
		if presented {
			h.put("a", k5, 60, 61, "a0", "", 200, "a1")
		}
		h.ledger(history.LedgerEntry{Writer: "b", Method: "POST", Query: "delete=", Keys: []string{k5}, Time: ms(70), Done: ms(71),
			Forwarded: true, Status: 200, Delivered: true})
		h.fenced("a", 5, 101, "superseded by term 6")
		return h
	}
	wantStatus(t, Check(build(false).input()), SeqMonotonic, Pass)
	wantStatus(t, Check(build(true).input()), SeqMonotonic, Fail)
}

// TestRecreationOutlivingItsWriterDoesNotReviveAToken: a's re-adopting create arrives before
// b's sweep and is held in flight across it, landing after: nothing removes the re-created key
// within the run and nobody writes it again (a crashed before the answer came, or its claim
// failed on its next request and a failed claim holds nothing), so nobody used the revived
// token. A CAS on the revived key by anyone is the violation, and so is a create sent after
// the sweep (a re-adoption that re-creates the key it found gone: recreate-on-404), whether
// or not anyone uses its token. Found by exploration (correct runs: a pair of held fence writes
// with a crash, and with a flapping path).
func TestRecreationOutlivingItsWriterDoesNotReviveAToken(t *testing.T) {
	build := func(presented bool, sent int) *hb {
		h := sealedThenSwept(40)
		h.claim("a", 5, k5, 25, 200, 0, "", history.Ambiguous, "readopt")
		h.put("a", k5, sent, 140, "", "*", 200, "a0")
		if presented {
			h.put("b", k5, 150, 151, "a0", "", 200, "a1")
		}
		return h
	}
	wantStatus(t, Check(build(false, 26).input()), SeqMonotonic, Pass)
	wantStatus(t, Check(build(true, 26).input()), SeqMonotonic, Fail)
	wantStatus(t, Check(build(false, 35).input()), SeqMonotonic, Fail)
}

// sealedThenSwept is a history where a sealed k5 (its create answered a0), b claimed term 6
// (its claim answered at bDone ms) and swept k5 at 30ms.
func sealedThenSwept(bDone int) *hb {
	h := &hb{}
	h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
	h.put("a", k5, 1, 3, "", "*", 200, "a0")
	h.claim("b", 6, k6, 20, bDone, 0, "b0", history.OK, "seal")
	h.ledger(history.LedgerEntry{Writer: "b", Method: "POST", Query: "delete=", Keys: []string{k5}, Time: ms(30), Done: ms(31),
		Forwarded: true, Status: 200, Delivered: true})
	return h
}

// TestAStopOnAnInjectedRefusalIsTheFaults: a's CAS is answered 412 by the fault proxy, not
// by the store (the ledger's Injected), and a is fenced with no other writer about: it
// believed a false answer, which NoSpuriousFencing puts down to the fault. The same stop
// after a 412 the store gave, with nothing that moved the key, is spurious; so is one after
// an injected 500 (which says nothing about the key).
func TestAStopOnAnInjectedRefusalIsTheFaults(t *testing.T) {
	build := func(injected, status int) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 1, 3, "", "*", 200, "a0")
		h.cas("a", 5, k5, 20, 30, 1, "a0", history.FencedOut)
		h.put("a", k5, 21, 22, "a0", "", status, "")
		if injected != 0 {
			l := &h.led[len(h.led)-1]
			l.Rule, l.Action, l.Forwarded, l.Status, l.Injected = "r", "status", false, 0, injected
		}
		h.fenced("a", 5, 31, "lost the CAS")
		return h
	}
	ir := wantStatus(t, Check(build(412, 0).input()), NoSpuriousFencing, Pass)
	wantMentions(t, ir.Explanation, "injected 412 or 404")
	wantStatus(t, Check(build(0, 412).input()), NoSpuriousFencing, Fail)
	wantStatus(t, Check(build(500, 0).input()), NoSpuriousFencing, Fail)
}
