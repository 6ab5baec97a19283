// Package faults is fencebench's fault model: what a fault is, how it is opened and healed
// on a target, and how request-level rules match and fire. It knows no network, no store
// client and no protocol; it imports the standard library and history only, so the scenario
// loader, the simulated stack and the explorer link neither Toxiproxy nor an HTTP proxy.
//
// What the package guarantees:
//
//   - Faults own their life. A [Fault] knows its name, its [Layer], how to inject itself and how
//     to heal itself; it acts on a target's capability ([Network], [Requests], [Handoffs]), so
//     any backend carries the same faults: the network paths of package faults/netpath
//     (Toxiproxy at L4, the HTTP fault proxy at L7), the in-process paths of package sim, and
//     the writers' handoff links, where a relocation's message and its answer are lost or
//     delayed ([HandoffFault]).
//   - A [Set] holds the open faults of one target: healing one fault leaves the others in force
//     (at L4, where a target can lift faults only as a whole, the set injects the others
//     again), a one-off fault ([FuncFault] without heal, a crash) is recorded when it fires and
//     never stays open, and the set records every fault's start and end, the only place that
//     does.
//   - One rule table. [Rules] matches requests on method, object key glob ('*' and '?' also
//     match '/'), If-Match/If-None-Match presence or value, the n-th match and a count; rules
//     are added and removed while traffic flows and counted exactly under concurrency
//     ([Rules.Fired]); at most one rule fires per request. A DeleteObjects batch is matched on
//     the keys it names. The actions are [DropResponse], [DropRequest], [SyntheticStatus],
//     [Delay], [Duplicate], [StripConditions], [FailDeleteKeys] and [Misdirect]; what each
//     does to a request is carried out by the target (faults/netpath, sim; [Misdirect] by sim
//     only).
//   - Partition modes ([Refuse], [Blackhole]) and layers ([L4], [L7], [Protocol]) have one
//     spelling each, the one the ledger, attestation and the reports show.
package faults
