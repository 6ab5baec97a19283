// Package explore holds the pure parts of exploring the fault space: a generator that turns
// a seed into a fault schedule (a scenarios.Scenario the loader accepts), a shrinker that
// reduces a failing schedule to a small one that still fails, and the coverage of fault
// kinds over protocol phases that one recorded history shows.
//
// Guarantees: Generate is deterministic (one seed and one set of options give byte-identical
// YAML) and every scenario it returns has passed scenarios.Parse and, with GenOptions.System,
// takes only the steps those Limits allow (a schedule they would refuse is an error, never
// returned); Shrink only keeps a
// candidate that passed the loader and failed the judge on every try, stays within its run
// budget and honours its context; CoverageOf reads data only. The package runs nothing: it
// imports no runner, writers, environment, store or reports.
package explore
