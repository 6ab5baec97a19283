// Package certify decides whether an S3-compatible object store can carry a fencing protocol
// at all. It runs a battery of probes of the store's conditional-write semantics (the probes
// of §6 of the object-store design notes that need only one endpoint) through the same store
// adapters, the same environments (an env.Env, opened by env.Open as for a run) and the
// same per-writer fault paths the bench uses, and returns a [Report] with one [Result] per probe and store client.
//
// Every probe has a class, taken from the design notes:
//
//   - [Hard]: the protocol is unsafe on a store that fails it. Any HARD probe with verdict
//     [Fail] makes the report [NotCertified]; a HARD probe that could not be judged (verdict
//     [Error]: no answer, a harness problem) makes it [Inconclusive].
//   - [Informational]: a property worth knowing (which status a missing key answers, whether
//     ETags repeat for identical content, whether conditional deletes are honoured). Its
//     verdict is [Info] when it only records, [Pass] or [Fail] when it checks something the
//     protocol does not strictly rely on; it never decides the certification.
//
// With [Options.Rounds] above one, every probe runs that many times with every client, each
// round on fresh keys under the same prefix, and its rounds fold into one result: the worst
// verdict of any round (so one failing round fails a HARD probe), the observation, details and
// facts of the first round with that verdict, the failure rate (failed rounds / rounds), and a
// sentence when the verdict flipped between rounds or an INFO probe's facts differed.
//
// What a run guarantees:
//
//   - It works only inside a fresh prefix: a prefix that already holds objects is refused
//     before anything is written, every probe writes only keys under it, and with
//     [Options.Cleanup] everything under it (and nothing else) is deleted at the end.
//   - Every probe uses fresh keys and bodies that embed a unique nonce, so an answer is never
//     confused with a leftover of another probe.
//   - Each racing goroutine and each "second client" has its own store client, and so its own
//     connection pool; clients never retry (the bench's adapters are built with retries off),
//     except where a probe states that it turns retries on to show their effect.
//   - A verdict is a verdict about the store: a missing answer (a transport error, a timeout)
//     is reported as [Error], never as a pass, and a definite violation is never hidden by a
//     later error.
//   - Reports ([Report.WriteText], [Report.WriteJSON], [Report.WriteHTML]) hold only the
//     store's description (a store.Info), the run's options and what the probes
//     observed (statuses, error codes, ETags, keys under the prefix); credentials never enter
//     them, and URLs quoted from transport errors lose their query strings.
//
// The probes ([Probes]) are A1-A6 (the conditional headers are honoured at all), B9-B11
// (atomicity under concurrency: N-way create and CAS races, and a CAS chain checked for
// linearizability against the checker's register model, [checker.CheckRegister], the model
// the bench's StoreLinearizable invariant judges every run with; a failure carries the
// checker's witness, in [Result.Witness] and every report), C14-C15 (identical content gives an
// identical ETag, and the ABA exploit this allows, which the bench's seq field defeats), D17-D18
// (read-after-CAS from a second client, and no phantom 412), E19-E20 (conditional deletes and
// DeleteObjects per-key reporting, recorded only: the protocol never relies on them) and F24
// (a lost response is ambiguous to the client and settled by reading its own nonce back).
package certify
