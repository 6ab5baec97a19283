// Package runner is fencebench's composition root: the only package that wires scenarios,
// the store environment (package env), fault paths, writers, the checker and the reports
// together. It records a run as outcome values, persists them, and renders the reports
// itself ([Options.NoReports] skips them); [Rereport] judges a stored run again.
//
// For every cell of a run (a scenario with the correct protocol, and with each broken variant
// it must kill when the kill matrix is on) it guarantees:
//
//   - the same seed gives the same schedule: time triggers, flap rhythms and traffic are
//     derived from the cell's seed alone, and the seed is recorded and printed;
//   - once per run, before the first cell, a pre-flight races the store's conditional writes
//     straight to the store, under <prefix>.preflight/ (package storeprobe: an N-way create
//     race and an N-way CAS race, 8 and 32 racers over 16 fresh keys each). A store that lets
//     two racers win is unsafe: every cell is recorded without running, with verdict fail,
//     outcome.CellResult.StoreUnsafe naming the probe and its witness, and a reason starting
//     "store unsafe", so the run exits 1 and the store, not the protocol, is the named cause.
//     Cells of a scenario that allows a store without enforced conditional writes
//     (store.allow_unenforced) run as on any store: their own probe below decides. A
//     pre-flight that cannot judge the store makes every cell a harness error;
//   - the store's conditional-write enforcement is probed again before each fencing cell,
//     through the cell's first fault path, and a store that fails the probe is refused unless
//     the scenario allows it;
//   - harness problems (store died, port taken, a fault that could not be installed) end the
//     cell with verdict error, never as a safety violation, and a safety violation is never
//     retried into a pass;
//   - everything a cell saw is persisted under results/<run-id>/<cell>/ (scenario.yaml, seed,
//     history.jsonl, ledger.jsonl, result.json, store.log) so it can be judged again later;
//   - every fault a step opens lives in a faults.Set (the writer's path for network and
//     request faults, the writer's own set for a pause): when its window or flap phase ends it
//     heals alone, the writer's other faults stay, and its start and end are recorded there;
//   - the run works inside a prefix it claims (store.ClaimPrefix): a prefix that holds
//     objects, or whose parent or sub-prefix another run claims, is refused before the run
//     writes anything; a run id or prefix that is not a safe name is refused as outcome.ErrBadInput;
//   - a store that stops answering, found before a cell or while it runs (checked every
//     second; an external store is probed with a read of the run's claim marker), ends that
//     cell with verdict error and stops the run: an unreachable store always wins over a
//     safety verdict. A store-restart step declares its outage: while it is under way the
//     store counts as alive, and a restart that fails is the cell's harness error;
//   - store steps (drive-offline, drive-online, drive-slow, store-restart) act on a local
//     MinIO only: a scenario with store.drives runs on the run's MinIO when it has exactly
//     those drives (and, for drive-slow, drives served through FUSE), else on one of its own
//     over them, stopped with the cell; on another stack its cells are harness errors that
//     name the local stack. A scenario that slows a drive where FUSE is not usable does not
//     run: the summary names it as not applicable, with the reason. Every drive taken away is
//     put back, and every slowed drive made fast, before the writers settle and the store is
//     audited;
//   - LoadRun, SaveRun and Rereport never touch anything outside the run folder they are
//     given: a stored cell id that is not one safe folder name directly inside it is refused;
//   - a panic in any goroutine of a cell (writers, traffic, fault paths, scheduled steps) is
//     recovered into the cell's guard.Sink, ends the cell at once and makes it a harness
//     error naming the goroutine; the process and the other cells go on;
//   - nothing outlives the run: writers, traffic, fault paths and the store are stopped on
//     every path out, Ctrl-C included;
//   - a cell stays within the ranges of scenarios.Bounds even for a scenario that skipped
//     validation: its plan holds at most the schedule bound, and a scenario with too many
//     writers, clients, steps or ops, or a rate outside its range, ends the cell as a
//     harness error before anything starts.
package runner
