// Package reports turns a finished fencebench run into the files people and CI read: an HTML
// index of scenarios x verdicts with the variant kill matrix, one HTML page per cell (timeline,
// invariants, counterexample, lost writes, fault attestation, request and latency statistics,
// rerun command), JUnit XML, a summary JSON, and a trend page across the runs of a results
// folder; and, in the same style, the page of a store certification ([WriteCertification]) and
// the page that compares several stores, probe by probe or cell by cell ([WriteComparison]);
// and the page of an exploration of generated fault schedules ([WriteExploration]).
//
// What it guarantees:
//
//   - Every page is a single self-contained file: inline CSS, an inline SVG timeline and at
//     most a few lines of inline script; no CDN, no external font or script, no network.
//   - Every string that comes from a scenario, the store, an event, the ledger or an error is
//     escaped for its context: pages are rendered with html/template from templates embedded
//     in the binary, and nothing untrusted is ever marked as safe HTML. JUnit XML is written
//     with encoding/xml.
//   - Pages are built in two steps: a plain view model (an outcome.Summary to index data, an
//     outcome.CellResult to cell page data) and a rendering of it, so what a page shows can
//     be tested as data. [Write] takes the run exactly as the runner recorded it.
//   - A cell page stays legible and small for long runs: frequent events (store calls, acks,
//     CAS outcomes, client ops) are aggregated per time slice and writer; rare protocol steps
//     and every counterexample event keep an individual mark, and the first violation carries
//     the anchor "first-violation".
//   - Store identity is shown as endpoint, server version, stack, bucket and prefix; user
//     information embedded in an endpoint URL is redacted, and no credential field exists.
//     The store panel shows the run's pre-flight: each racing probe with its counts, and for
//     a store that failed one, the probe and its witness; a cell refused for an unsafe store
//     reads "store unsafe" (never SURVIVED or killed), in the pages and in summary.json.
//   - A comparison page (compare.html, with compare.json) marks every row whose stores do not
//     all read the same, and links each store's own report and each cell's page by a path
//     relative to its folder.
//   - An exploration page (explore.html, with explore.json) shows the fault-by-phase
//     coverage with the phases never reached or never faulted named, and the shrunk
//     failures grouped by the invariants they violated. It links only files inside its own
//     folder: a recorded path that is absolute, climbs out with "..", or carries a URL
//     scheme is shown as text, never linked. An endpoint's user information quoted in its
//     free text (a rerun command, a narrative, an error) reads REDACTED. explore.json
//     round-trips through [ReadExploration].
//   - summary.json round-trips through [ReadSummary], and [WriteTrend] rebuilds the trend
//     page from the summaries alone, so old runs stay readable after the bench changes.
//
// The package reads [outcome] results, [history] events and ledger entries and [checker]
// result types only; it never runs a scenario, touches a store or judges a history itself.
package reports
