// Package scenarios turns scenario YAML into validated [Scenario] values, and ships the
// catalogue of scenarios the bench runs by default.
//
// It guarantees that a Scenario it returns is complete and consistent: every field is known,
// every duration parses, every writer a step names exists, terms do not clash unless the
// scenario says they may, every action and protocol variant is one the bench knows, the
// writer expect.serving names exists and is not also expected to end fenced. Every
// number, and every total a scenario adds up to (writers, steps, planned actions, traffic
// ops, file size), lies in its range in [Bounds], so a valid scenario runs with bounded
// goroutines, listeners and memory. Anything else is rejected before a run starts, with an
// error naming the file, line, column and field and saying what was expected (for a range,
// the range). Decoding is strict: an unknown field is an error, never ignored.
//
// It owns the step vocabulary: [Actions] is the one table of step actions (name, layer,
// parameters, checks, whether a window applies, whether the fault toggles on a planned
// rhythm, the fault it injects), which the parser, validation, the runner and the reports
// read. A step's network or request fault is a faults.Fault ([Step.Fault]).
//
// [Marshal] writes a Scenario back as YAML in the catalogue's style; [Parse] of that text
// gives back an equal Scenario (positions and the file's bytes aside), so a scenario built
// in code is validated by the same loader as one a user wrote.
package scenarios
