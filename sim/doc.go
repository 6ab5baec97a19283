// Package sim is the simulated stack: one in-memory store ([store.Mem], held by the store
// contract suite that MinIO also passes) reached by every writer through its own simulated
// fault path ([Path]), with request-level faults applied at the store interface by the same
// rule table as the HTTP fault proxy ([faults.Rules]), opened and healed through the same
// [faults.Set], and recorded in the same ledger ([history.LedgerEntry]).
//
// What it guarantees:
//
//   - Same vocabulary, same evidence. A [Path] is a [faults.Network] and a [faults.Requests]
//     target, so every fault a scenario can name opens on it unchanged, and every request it
//     receives leaves one ledger entry shaped like the proxy's: method, key (a listing's and a
//     DeleteObjects batch's as the proxy records them), If-Match / If-None-Match, the rule and
//     action that fired, whether the store received it (Forwarded, Copies), the store's
//     status, ETag and S3 code, and whether the answer reached the writer (Delivered).
//   - Network faults as their observable outcomes. A refused partition or a reset fails a
//     call at once with an unknown outcome and the store never sees it; a blackhole holds the
//     call until the writer's deadline (or a heal) and the store never sees it; one-way lets
//     the store apply the call and holds the answer until the deadline; latency and bandwidth
//     delay the request before it reaches the store. Healing ends every held call at once
//     with an unknown outcome, as cutting a connection does.
//   - Request faults as the proxy applies them: drop-response (applied, answer lost),
//     drop-request (never applied, answer lost), status (answered without reaching the
//     store), delay (held, then applied even if the writer gave up), duplicate (applied twice,
//     first answer returned), strip-conditions (applied without its precondition),
//     fail-delete-keys (per-key failures inside a successful batch).
//   - Confinement. A call outside the path's prefix is refused (AccessDenied) and never
//     reaches the store.
//   - Time. Every delay and deadline is in scenario time, converted by the run's
//     [wait.Clock]: the simulated stack runs a schedule's seconds in milliseconds. The writers
//     still run as goroutines and race for real; what a seed fixes is the schedule, the
//     traffic's choices and the fault plan, not the interleaving (see the runner's replay
//     notes).
//
// Why a scaled clock rather than testing/synctest: a synctest bubble exists only inside a
// test (synctest.Test takes a *testing.T), and `fencebench explore` is a command. A fully
// virtual clock would need every blocking point of the writers (channels, locks, the bus) to
// be clock-aware. Scaling every wait by one factor needs neither, keeps the concurrency real,
// and many schedules running side by side fill the CPU while each one mostly waits.
package sim
