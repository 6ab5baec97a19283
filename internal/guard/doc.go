// Package guard runs the bench's goroutines so that a panic in one of them becomes a harness
// error of the unit of work that started it (a cell, a run) instead of ending the process.
//
// A [Sink] collects the panics of one unit of work. [New] ties a sink to a context: the first
// panic reported to it cancels that context (with the panic as its cause), so the work winds
// down, runs its cleanup and reports the panic through [Sink.Err]. [Sink.Go] starts a goroutine
// whose panic is recovered and reported; [Sink.Recover], deferred, does the same for a
// goroutine started by hand; [Sink.Handler] does it for an HTTP handler, whose panics net/http
// would otherwise swallow. A nil *Sink stands for the process-wide [Default] sink, which
// cancels nothing: the command checks it when it ends.
//
// Guarantee: a goroutine started through this package never ends the process by panicking;
// its panic, with the goroutine's name and stack, is in the sink's Err.
package guard
