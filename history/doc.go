// Package history is the one record every part of fencebench speaks: [Event].
//
// Store calls recorded at the client boundary, protocol steps (claim, CAS, ack, fenced,
// restore read, transfer, handoff, revert, publish, collect, hydration fetch), client
// operations and fault windows all go into a single stream of Events, written as JSON Lines.
// The package guarantees that
//
//   - times are run-relative and monotonic (taken from one time.Time base with its monotonic
//     clock reading), so events from different writers are comparable;
//   - a [Recorder] is safe for concurrent writers and assigns every event a unique, increasing
//     ID in completion order;
//   - [Encode] and [Decode] round-trip every field, so a stored history can be judged again
//     later by a newer checker.
//
// It is a leaf: it imports nothing of fencebench, and everyone may import it. That makes it
// the home of the names the packages share, each spelled once (names.go): the writers'
// signals a scenario step waits for ([SignalKind]), the relocation abort points
// ([AbortPoint]) and the invariant names ([Invariant]).
package history
