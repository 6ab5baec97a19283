// Package runner is fencebench's composition root: the only package that wires scenarios,
// the store environment, fault paths, writers, the checker and the reports together.
//
// For every cell of a run (a scenario with the correct protocol, and with each broken variant
// it must kill when the kill matrix is on) it guarantees:
//
//   - the same seed gives the same schedule: time triggers, flap rhythms and traffic are
//     derived from the cell's seed alone, and the seed is recorded and printed;
//   - the store's conditional-write enforcement is probed before any fencing scenario, and a
//     store that fails the probe is refused unless the scenario allows it;
//   - harness problems (store died, port taken, a fault that could not be installed) end the
//     cell with verdict error, never as a safety violation, and a safety violation is never
//     retried into a pass;
//   - everything a cell saw is persisted under results/<run-id>/<cell>/ (scenario.yaml, seed,
//     history.jsonl, ledger.jsonl, result.json, store.log) so it can be judged again later;
//   - a panic in any goroutine of a cell (writers, traffic, fault paths, scheduled steps) is
//     recovered into the cell's guard.Sink, ends the cell at once and makes it a harness
//     error naming the goroutine; the process and the other cells go on;
//   - nothing outlives the run: writers, traffic, fault paths and the store are stopped on
//     every path out, Ctrl-C included.
package runner
