package history

// The names the packages share. Each is spelled once, here, because this leaf is the one
// package that every package speaking the name may import (ARCHITECTURE.md): the writers
// emit signals and take abort points that scenarios name, and the checker judges invariants
// that scenarios, explore and the reports name. Every spelling below is also the scenario
// files' (YAML) spelling and the stored runs' (JSON) one: renaming a value breaks the files
// already written. internal/deps' vocabulary test fails when one of these names appears as a
// string literal anywhere else in the module.

// SignalKind names a protocol event of one writer: the writers emit it right after the
// history event it stands for was recorded, and a scenario step can wait for it with
// `after: {writer: ..., event: ...}` (the kinds scenarios.Events accepts).
type SignalKind string

// The writers' signals.
const (
	SigClaimed     SignalKind = "claimed"      // a seal, or a translog instance's re-adoption, succeeded
	SigPromoted    SignalKind = "promoted"     // promotion finished: the writer is active
	SigRestoreRead SignalKind = "restore-read" // the restore point was read
	SigHydrating   SignalKind = "hydrating"    // a hydration attempt read the reference set it will fetch
	SigHydrated    SignalKind = "hydrated"     // a hydration finished (every listed file fetched)
	SigCAS         SignalKind = "cas"          // a steady-state fence CAS of a sync succeeded
	SigSynced      SignalKind = "synced"       // a sync attempt completed in full
	SigAcked       SignalKind = "acked"        // the ops of a sync were acknowledged
	SigFenced      SignalKind = "fenced"       // the writer learned it is fenced (terminal)
	SigDrained     SignalKind = "drained"      // a relocation source finished its final sync
	SigTransferred SignalKind = "transferred"  // a relocation source transferred the fence
	SigHandedOff   SignalKind = "handed-off"   // the handoff completed (source's view)
	SigAdopted     SignalKind = "adopted"      // a relocation target adopted the fence
	SigReverted    SignalKind = "reverted"     // an aborted source reverted and resumed
	SigStoodDown   SignalKind = "stood-down"   // an aborted source, or a target giving up, stood down
	SigPublished   SignalKind = "published"    // a segment reference set was published
	SigCollected   SignalKind = "collected"    // a collection round ran (gate open)
	SigCrashed     SignalKind = "crashed"      // the writer crashed
	SigPaused      SignalKind = "paused"       // the writer froze
	SigResumed     SignalKind = "resumed"      // the writer thawed

	SigRecoveryStarted SignalKind = "recovery-started" // a recovering copy registered with its source
	SigEngineOpened    SignalKind = "engine-opened"    // a recovering copy applies replicated ops from now on
	SigRecovered       SignalKind = "recovered"        // a recovery finished
	SigRecoveryFailed  SignalKind = "recovery-failed"  // a recovery attempt failed (it starts over)
)

// AbortPoint is where a relocation is made to abort: a scenario's `relocate: {abort: ...}`
// (where `none` spells AbortNone), read by the writers.
type AbortPoint string

// The abort points.
const (
	// AbortNone lets the handoff complete (unless the handoff message or answer is lost).
	AbortNone AbortPoint = ""
	// AbortBeforeTargetWrites holds the handoff message until the source has given up and
	// reverted, then delivers it: the source resumes, and the late target is refused at its
	// adoption.
	AbortBeforeTargetWrites AbortPoint = "before-target-writes"
	// AbortAfterTargetAcks delivers the message and loses the target's answer; the source
	// gives up only once the target has adopted the fence and acknowledged some ops, so its
	// revert is refused and it stands down.
	AbortAfterTargetAcks AbortPoint = "after-target-acks"
)

// Invariant names an invariant the checker judges, as the protocol's TLA+ models spell it: a
// scenario's `expect: {violated: [...]}` and `kills: [{violates: [...]}]`, a result's
// invariant verdicts, an exploration's target.
//
// It is an alias of string, not yet a type of its own, because code outside the non-test
// files (the runner's tests) still mixes invariant names with plain strings; the vocabulary
// test holds the spelling to this one place all the same.
type Invariant = string

// The invariants, in the checker's report order (the package checker names them too).
const (
	NoAckedWriteLoss       Invariant = "NoAckedWriteLoss"
	MutualExclusion        Invariant = "MutualExclusion"
	AckAttribution         Invariant = "AckAttribution"
	FencedTerminal         Invariant = "FencedTerminal"
	SeqMonotonic           Invariant = "SeqMonotonic"
	NoSpuriousFencing      Invariant = "NoSpuriousFencing"
	TargetAcksAreDurable   Invariant = "TargetAcksAreDurable"
	HydrationIntegrity     Invariant = "HydrationIntegrity"
	OwnerNeverReadUnsealed Invariant = "OwnerNeverReadUnsealed"
	StoreLinearizable      Invariant = "StoreLinearizable"
	RecoverySeesAcked      Invariant = "RecoverySeesAcked"
	// NoSpuriousFailure: a protocol step fails only for a cause the history shows.
	NoSpuriousFailure Invariant = "NoSpuriousFailure"
	// HandoffResolves holds trivially unless the scenario names the copy that must end serving.
	HandoffResolves Invariant = "HandoffResolves"
	// TimeToFence is the liveness bound, judged only when the scenario sets one.
	TimeToFence Invariant = "TimeToFence"
	// TimeToAck is the acknowledgement bound, judged only when the scenario sets one.
	TimeToAck Invariant = "TimeToAck"
	// ServesAfterHeal: once every fault healed, the copies settle and an active one serves;
	// judged only when the scenario asks for it (expect.serves_after_heal).
	ServesAfterHeal Invariant = "ServesAfterHeal"
)

// Invariants lists every invariant name, in the checker's report order: the safety
// invariants, then the liveness bounds TimeToFence and TimeToAck, then ServesAfterHeal.
func Invariants() []Invariant {
	return []Invariant{NoAckedWriteLoss, MutualExclusion, AckAttribution, FencedTerminal, SeqMonotonic,
		NoSpuriousFencing, TargetAcksAreDurable, HydrationIntegrity, OwnerNeverReadUnsealed,
		StoreLinearizable, RecoverySeesAcked, NoSpuriousFailure, HandoffResolves, TimeToFence, TimeToAck, ServesAfterHeal}
}

// CorrectVariant is the name of the correct protocol, fence.Correct, for the packages that
// may not import fence (scenarios, outcome, reports): the one name spelled twice, held equal
// to fence's by internal/deps' vocabulary test.
const CorrectVariant = "correct"
