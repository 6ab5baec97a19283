// Package system lets the bench test a fencing implementation it did not write, in any
// language: the bench starts N nodes of the system, one per shard copy, and speaks a small,
// versioned JSON-lines protocol with each (Version), the same messages a Go system implements
// as method calls ([Node]) when it runs inside the bench's process.
//
// What the package guarantees:
//
//   - Strict decoding. Every line a node prints on stdout is one JSON object of a known type
//     with only the fields of the protocol; anything else (an unknown field or type, a reply
//     to no request, a reply of the wrong type, a write_ok for another op than the one
//     written, a line over 1 MiB, an error code outside the protocol) is a [HarnessError]
//     naming the node and the line number. It is never turned into a verdict about the system.
//   - Bounded answers. Every request a [Proc] sends is answered, or fails with a HarnessError
//     once the node stayed silent for the answer timeout while running. Time a node spends
//     stopped by [Proc.Pause] does not count: a paused node legitimately says nothing.
//   - Real process faults. Pause is SIGSTOP of the node's process group, resume SIGCONT, a
//     crash SIGKILL of the whole group; a request in flight at a crash fails with ErrCrashed
//     (its outcome is unknown, never a loss and never an answer).
//   - Nothing left running. Each node runs in its own process group; [Proc.Close] (and
//     [Proc.Kill]) kill the group and reap the process on every path, and a node that exits or
//     misbehaves has its group killed at once. Every Proc started and not yet closed is in
//     [Running], which tests use to prove nothing leaks.
//   - Credentials travel on the node's stdin (the init message), never on its command line or
//     in its environment, and the package never writes them anywhere else.
//   - Stderr of every node goes to a file of its own (one per node id, incarnations appended),
//     so a cell folder keeps what each node said.
//
// [Serve] is the node side of the same protocol for a Go program: it decodes the bench's
// requests, calls a [Node], and prints the answers and the node's own events.
package system
