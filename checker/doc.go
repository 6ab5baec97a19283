// Package checker judges a recorded fencebench run: it reads the history of events, the L7
// proxy's ledger and the final state the runner gathered, and says for every fencing invariant
// whether it held, with a counterexample and a plain-words narrative when it did not.
//
// The checker is pure: it reads data only — no network, no clock, no store — so a stored run
// can be judged again later by a newer checker. Its non-test code imports only the standard
// library, [github.com/fencebench/fencebench/history] and porcupine.
//
// What it guarantees:
//
//   - Every invariant named in [Invariants] is judged on every call to [Check] and reported
//     as pass, fail or inconclusive; a fail carries the IDs of the events that prove it
//     (ledger entry IDs for store-level checks) and a narrative that names ops, writers,
//     terms and times.
//   - A StoreLinearizable failure, and a [CheckRegisterWitness] failure, carries a [Witness]:
//     a small part of the failing key's history that is not linearizable on its own (every
//     operation with its client, invoke and complete times, answer, ETag and value) and one
//     sentence saying why no order explains it. It is shrunk until dropping any one operation
//     makes it linearizable, unless its time budget runs out first (Witness.Minimal says
//     which); the only clock the checker reads bounds this search and porcupine's. When
//     the witness shows one condition granted twice (two answers ok to PUT If-Match with one
//     ETag, or more creates answered ok than its deletes make room for), the explanation
//     says the store answered two winners for one condition and names it.
//   - A broken harness (an event completing before it was invoked, duplicate event or ledger
//     IDs, a store call recorded against its own answer: ok with an error, or a 412 or
//     NoSuchKey refusal as an unknown outcome; a store call recorded against what its path
//     saw on the wire: ok with no request of it answered 2xx with the recorded ETag and
//     precondition, refused with no request of it answered 412, a conditional write failed
//     that the store applied, a request on a writer's path that no recorded call made; an
//     expectation naming an unknown invariant) yields the verdict error, never a safety
//     violation.
//   - Ambiguous protocol writes are resolved from the ledger before judging; what the ledger
//     cannot settle is treated as possibly applied, so an unknown outcome never produces a
//     violation on its own. Likewise a claim that was taken over between its CAS and its
//     verifying read reports fenced, not its write: SeqMonotonic counts that write when the
//     ledger shows the store applied it in the chain.
//   - NoSpuriousFencing judges every fence and every stand-down (a relocation source giving
//     up after its revert was refused, or a relocation target giving the handoff up) against
//     the writer's own latest grant: only a supersession by another writer after that grant —
//     a higher-term claim, or an equal-term seal, revert or legitimate adoption — justifies
//     it (a higher-term claim that failed counts once it created its key or swept); a
//     target's give-up is also justified by a failed store call of its own since then (its
//     hydration could not complete), never by nothing; and any stop, by the fault proxy
//     answering the writer's request on its fence key with a 412 or 404 no store gave (the
//     writer believed a false answer). A claim deletes its term's key only
//     when its own create made the key and its last read returned that version: a key won
//     by arbitration, or taken over by a twin, is another writer's to lose.
//   - NoSpuriousFailure judges every protocol step (claim, sync, CAS, adoption, revert,
//     transfer, restore read, hydration, publication, collection) of a copy whose store calls
//     the history records that failed or ended unknown, fenced aside: only a failed or unknown
//     store call of its own, another writer's write or higher-term claim, a fault open on the
//     copy or the store, or the copy crashing, pausing or restarting while it ran explains it.
//     A promotion retries what has an unknown outcome until it succeeds or is fenced: one
//     that ended unknown is explained only by its copy crashing or restarting, its context
//     ending, or its hydration's bounded attempts running out. A fence step (claim, CAS,
//     adoption, transfer, revert) is also held to the definite answer its last conditional
//     write got: a 403 AccessDenied fails it (a configuration error is neither retried nor
//     fencing), a 404 to If-Match fences it (a revert stands down), and neither ends it as
//     an unknown outcome or a success; and to its last request on its key, or listing or
//     sweep of the fence keys: a 403 there never ends it ok or unknown, an answer the store
//     adapter classified as unknown never ends it ok, nor fails it unless a fenced decision's
//     listing took it, and a read answered with another object's content (a misdirected
//     read) fails it; a segment gate's listing that runs beside the step is the gate's, not
//     the step's. A claim that created its key, read it back as its own, re-listed and came
//     back fenced (superseded mid-claim) deleted the key. A relocation target gives a
//     handoff up only when a store call of its own failed since it last stopped or started.
//   - FencedTerminal holds a fence terminal for the incarnation, and a stand-down terminal for
//     the term it gave up: no acknowledgement and no ownership acquisition afterwards; and
//     a step that came back fenced is not tried again at its term by the same incarnation,
//     and a promotion, claim, CAS, sync, adoption or transfer that came back fenced is
//     followed by its writer's Fenced event (a crash aside): fenced is for good, not a
//     failure the writer stands by after.
//   - A promotion's restore read, recorded ok, holds every op acknowledged before it began
//     (NoAckedWriteLoss): the newest metadata names every acknowledged op from its
//     acknowledgement on, so a promoted copy that misses one starts its term without it,
//     whatever the final auditor later sees.
//   - A promotion that reports success did what a promotion is: within its span its writer
//     claimed the term and read the restore point (OwnerNeverReadUnsealed), read a segment
//     reference set at least as new as every one published before its seal, and fetched
//     every file of its last hydration attempt (HydrationIntegrity; a recovery attempt that
//     succeeded is held to the same, from the moment it began, and the target of a handoff
//     that succeeded to its last attempt's fetches). A system's node, whose reads
//     the history does not see, is held to none of this.
//   - When the scenario names the copy that must end serving ([Expect].Serving),
//     HandoffResolves fails unless that copy ends holding the chain and, when clients sent
//     ops, acknowledged some after it took it: a handoff that never completes, an abort the
//     source does not survive, or a copy that owns the chain and serves nothing, is a
//     failure, not a low count.
//   - When the scenario asks for it ([Expect].ServesAfterHeal), ServesAfterHeal fails when,
//     once every fault healed, a copy stays promoting, relocating or a relocation's target
//     (or recovering while a copy at the highest term served) to the end of the wait
//     the bench records, or an op then given to an active copy is never acknowledged while
//     that copy is neither fenced nor crashed: a failed step must not leave a copy blocked.
//   - A run that exercised nothing does not pass: a declared fault that never fired, fewer
//     acknowledged ops than the scenario's floor, or a run with no acknowledgement and no
//     declared fault (unless it sent no op and published segments: a refresh and collection
//     schedule) makes the verdict inconclusive. One exception: a fault that waited for a
//     protocol event its writer never reached (the race went the other way) does not gate
//     a correct run expected to pass; the verdict stays and its reasons name the race. A
//     variant's run is still gated by it: the variant met no occasion to fail.
//   - The scenario verdict keeps both views: the raw status of each invariant and the verdict
//     adjusted by the scenario's expectations (see [Expect] for the exact rule for broken
//     protocol variants).
//
// Invariant names follow the protocol's TLA+ models (NoAckedWriteLoss, MutualExclusion,
// AckAttribution, FencedTerminal, SeqMonotonic, NoSpuriousFencing, TargetAcksAreDurable,
// HydrationIntegrity, OwnerNeverReadUnsealed), plus StoreLinearizable, which checks the store
// itself, independently of the protocol, NoSpuriousFailure, HandoffResolves, the outcome a scenario declares for
// a relocation, two liveness bounds judged only when the scenario sets them: TimeToFence
// (a superseded writer is fenced in time) and TimeToAck (a writer serving undisturbed
// acknowledges in time), and ServesAfterHeal, judged only when the scenario asks for it.
package checker
