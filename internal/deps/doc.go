// Package deps checks the module's import boundaries. The rules are the table of
// ARCHITECTURE.md at the module root, read by [Parse]; [Check] holds an import graph against
// them, and the package's test holds the module's real graph (from `go list`) against the
// document, so a forbidden import fails the tests and a rule cannot drift from its prose.
package deps
