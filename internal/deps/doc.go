// Package deps checks the module's import boundaries. The rules are the table of
// ARCHITECTURE.md at the module root, read by [Parse]; [Check] holds an import graph against
// them, and the package's test holds the module's real graph (from `go list`) against the
// document, so a forbidden import fails the tests and a rule cannot drift from its prose.
//
// It also holds the module's shared names to one spelling. [Names] reads a vocabulary (the
// string constants of one type: the writers' signals, the relocation abort points, the
// invariants, the protocol variants) from its declarations, and [Literals] finds every string
// literal of the module's non-test files that spells one of them again; [Emitted] reads which
// signals the writers emit, which the test holds to the events a scenario may wait for.
package deps
