package checker

import (
	"slices"

	"github.com/fencebench/fencebench/history"
)

// guarantees states each invariant in one sentence; the report prints it next to the verdict.
var guarantees = map[history.Invariant]string{
	NoAckedWriteLoss: "every acknowledged op is in the auditor's recovered set, and in the restore read of every promotion that began after it was acknowledged",
	MutualExclusion: "once a writer's ownership acquisition (claim, adopt, revert) completed, no CAS invoked " +
		"afterwards by another writer at a lower term, or at the same term with an older acquisition, is turned into an ack",
	AckAttribution: "every op is acknowledged at most once, by one writer, and only by a writer it was submitted to",
	FencedTerminal: "a writer that reported fenced never acknowledges nor acquires ownership again in that incarnation, " +
		"and one that stood down never again at the term it gave up; a step that came back fenced is not tried again " +
		"at its term, and a writer whose promotion, claim, CAS, sync, adoption or transfer came back fenced records that it is fenced",
	SeqMonotonic: "the accepted writes of each fence key advance seq by exactly one, and no token (ETag) repeats on a key",
	NoSpuriousFencing: "a writer is fenced, or stands down, only after another writer claimed a higher term, or " +
		"legitimately claimed (or took its object over in a claim it then gave up), adopted or reverted its own term, after the writer's own latest grant (claim, adoption, " +
		"revert, or transfer from or to it), or after the fault proxy told it, in the store's place, that its fence key had moved or was gone; a relocation target gives a handoff up only after that, or after a store " +
		"call of its own failed; a segment publication is refused only after another writer claimed a higher term; " +
		"and a claim deletes its term's key only when it created the key and read it back as its own",
	TargetAcksAreDurable: "every op a relocation target acknowledged after adopting the fence is in the recovered set",
	HydrationIntegrity: "a hydrating owner never finds missing a segment file its reference set lists, and no copy finds missing a file of its collector's newest set; " +
		"a promotion (a recovery) that reports success hydrated a reference set at least as new as every one published before its seal (before it began), and fetched every file of its last attempt, as did the target of a handoff that succeeded",
	OwnerNeverReadUnsealed: "a writer reads its restore point or hydrates at term T only after its own claim at T " +
		"completed (a same-term relocation target hydrating is exempt), and a promotion that reports success sealed its term " +
		"and read its restore point within it",
	StoreLinearizable: "the store's answers to the conditional writes, reads and deletes of each fence key, as the " +
		"ledger saw them, are linearizable as a compare-and-swap register",
	RecoverySeesAcked: "a copy that recovered while the primary worked (without a term) holds every op acknowledged " +
		"before its recovery finished",
	NoSpuriousFailure: "a protocol step fails, or ends with an unknown outcome, only when a store call of its own failed, " +
		"another writer wrote to the store, a fault was open on it or its writer was stopped while it ran; a promotion " +
		"that ended with an unknown outcome gave up a retry, unless its writer stopped or its hydration ran out of attempts; " +
		"a claim superseded mid-claim withdraws the key it created",
	HandoffResolves: "the copy the scenario names as serving ends holding the chain: after its latest claim, " +
		"adoption or revert it was not fenced, did not stand down, crash, hand off or transfer, and no other writer " +
		"took its term or a higher one (the final auditor aside); and, when clients sent ops, it acknowledged some after",
	TimeToFence: "every superseded writer that keeps acting is fenced within the scenario's bound",
	TimeToAck: "every op given to a writer serving undisturbed (no fault, no stop, no other writer's claim, " +
		"adoption, revert or transfer) is acknowledged within the scenario's bound",
	ServesAfterHeal: "once every fault healed, no copy stays promoting or relocating (or recovering while a copy at the highest term serves), " +
		"and every op then given to an active copy is acknowledged, unless that copy is fenced or crashes first",
}

func newResult(name history.Invariant) InvariantResult {
	return InvariantResult{Name: name, Status: Pass, Guarantee: guarantees[name]}
}

func (x *index) idsOf(ps ...int32) []int64 {
	var ids []int64
	for _, p := range ps {
		if p >= 0 {
			ids = append(ids, x.ev[p].ID)
		}
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

func verbFor(k history.Kind) string {
	switch k {
	case history.Adopt:
		return "adopted the fence"
	case history.Revert:
		return "reverted the fence"
	default:
		return "claimed"
	}
}

// --- NoAckedWriteLoss -----------------------------------------------------------------------

// --- MutualExclusion ------------------------------------------------------------------------

// --- AckAttribution -------------------------------------------------------------------------

// --- FencedTerminal -------------------------------------------------------------------------

// --- SeqMonotonic ---------------------------------------------------------------------------

// --- NoSpuriousFencing ----------------------------------------------------------------------

// --- TargetAcksAreDurable -------------------------------------------------------------------

// --- HydrationIntegrity ---------------------------------------------------------------------

// --- OwnerNeverReadUnsealed -----------------------------------------------------------------

// --- RecoverySeesAcked ----------------------------------------------------------------------
