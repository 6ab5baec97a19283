// Package writers is the system under test of fencebench: simulated shard copies of a
// remote-store-backed index, and the client traffic that drives them, all recorded into one
// history stream.
//
// A [Cluster] holds the copies ([Writer]) of one shard. Each writer talks to the store over
// its own client (the runner gives it one over its own fault path), wrapped in a
// [RecordingStore] that records every call at the client boundary, and in a pause gate. A
// writer is promoted (seal -> restore read -> hydrate -> the seal verified when the restore
// point is at its own term -> active with a guarded fence instance), buffers client ops and syncs them (.tlog -> metadata -> fence CAS -> ack),
// relocates (drain -> transfer -> handoff -> adoption, or revert -> resume / stand down),
// refreshes and collects segments behind the fence's gates, crashes, restarts as a new
// incarnation, and pauses. A standby copy recovers from the primary while it works
// ([Writer.Recover]): the primary replicates every op it acknowledges to the copies
// recovering from it, and a relocation hands them over to its target. [Cluster.Audit] is the final auditor whose recovered op set is the
// durability ground truth.
//
// The package guarantees that
//
//   - the writers keep no durable state outside the store: everything a restore needs is in
//     the bucket, under the layout of [Shard];
//   - an op is acknowledged (an Ack event) only after its .tlog and the metadata naming it
//     were uploaded and the fence step succeeded — in that order, unless the
//     cas-concurrent-with-metadata variant is selected — and a writer that learned it is
//     fenced acknowledges nothing more, ever;
//   - every body written is unique and attributable (writer, allocation, term, generation,
//     attempt and op ids), so any object in the bucket maps to one recorded call;
//   - the restore read's "first metadata file in the listing" is the lineage of the copy that
//     most recently owned the chain: generations increase across terms, and within a term a
//     later grant's generations sort above anything an earlier grantee can still write (an
//     earlier grantee whose restore point already holds a later grant's lineage is fenced
//     before it serves, since its own generations would collide with that grant's);
//   - every protocol step is recorded with the semantics of the history.Kind it uses, and is
//     announced on the cluster's [Bus], as one of history's signals (history.SignalKind), so a
//     schedule can wait for it;
//   - traffic is steady and its routing choices are deterministic given a seed, and Stop and
//     Close wait for every goroutine the package started;
//   - a panic in any of those goroutines is reported to [Config.Guard], never ends the
//     process, and still lets Stop and Close return;
//   - a recovery that finishes holds every op acknowledged before it finished (its source's
//     snapshot, and the ops replicated to it once its engine opened), or it fails and starts
//     over; a relocation target replicates to every recovery its source had started;
//   - a collection keeps every file of the collector's last Retain reference sets, the only
//     protection of a same-term relocation target hydrating while its source publishes;
//   - a relocation target that cannot complete its hydration gives the handoff up without
//     touching the fence: it records a StandDown (Detail "relocation-target") with the
//     reason, answers its source, which reverts and resumes, and takes no grant at that term
//     again; a source whose revert succeeded serves again;
//   - what befalls a relocation's handoff message and its answer on the way (lost, delayed)
//     comes only from the faults open on the source's [HandoffLink] when the message is sent
//     (the bench's fault model opens them there, and records them): with none open, the
//     message and the answer arrive at once.
//
// The protocol variants read here are cas-concurrent-with-metadata, restore-before-claim,
// hydrate-before-seal, target-ignores-recoveries, recovery-no-relocation-check,
// no-retention, resume-stays-blocked and target-refuses-empty-shard; every other variant is
// passed to fence/.
package writers
