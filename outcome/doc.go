// Package outcome holds what a bench run produced, in the one shape the runner records, the
// reports render and `fencebench report` reads back: [Summary] and its [CellResult]s, and
// the exit codes every command of the bench ends with, and the run's [Preflight]: what the
// pre-flight probes found on the store before the first cell, with [StoreUnsafe] naming the
// probe a store failed and its witness (a distinct cause: the store, not the protocol).
//
// It guarantees that a run folder's run.json and result.json files decode into these types
// and nothing else, that [Summary.ExitCode] is the single mapping from verdicts to exit
// codes, and that it imports only history, checker and store (the data it carries), so every
// package above can read a run without importing the runner.
package outcome
