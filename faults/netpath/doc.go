// Package netpath gives every writer of a fencebench run its own fault path to the object
// store, so a fault can hit one writer and spare the others:
//
//	writer's S3 client --(Path.DialContext)--> Toxiproxy proxy (L4) --> L7 fault proxy --> store
//
// The client keeps the real store endpoint in its configuration; only its dialer is redirected
// (plug [Path.DialContext] into store.Config.DialContext) and it signs with the path's own
// credential ([Path.Credentials]) instead of the store's. The Host header stays the endpoint's.
//
// What the package guarantees:
//
//   - No signing oracle. Each [Path] has its own SigV4 key pair, drawn from crypto/rand and
//     held only by the proxy and the writer's client. The proxy verifies every request fully
//     against it (algorithm, access key, credential scope, X-Amz-Date within 15 minutes, the
//     signature over method, path, query, the signed headers and the declared payload hash,
//     the body against that hash or, for a streaming-signed body, every chunk signature),
//     compared in constant time. Anonymous requests, query-string (presigned) authentication,
//     another access key (the store's own included) and anything that does not verify are
//     answered 403 with an S3 XML error, never forwarded, and recorded in the ledger with
//     Refused set.
//   - Confinement. A verified request is then refused (403 AccessDenied) unless it addresses
//     [Options.Bucket] and stays under [Options.Prefix]: its object key and any copy source,
//     a listing's prefix parameter, every key of a DeleteObjects batch; keys with "." or ".."
//     segments and other bucket-level calls are refused. Only then is the request re-signed
//     with the store's credentials, carrying only the headers the client signed (plus transfer
//     headers such as Content-Length and User-Agent). The store's credentials never appear in
//     the ledger or the logs.
//   - Loopback only. The Toxiproxy listener and the L7 listener of every path bind to
//     127.0.0.1.
//   - Isolation. Each [Path] has its own Toxiproxy proxy and its own L7 listener; an L4 fault or
//     an L7 rule on one path never touches another path's traffic.
//   - L4 faults through Toxiproxy v2.12.0 embedded in-process: [Path.Partition] ([faults.Refuse]: dials are
//     refused; [faults.Blackhole]: bytes stop both ways and the client waits for its own deadline),
//     [Path.Latency], [Path.Bandwidth], [Path.Reset] and [Path.SlowClose]. Toxicity is always 1.0
//     and jitter 0; the package draws nothing at random (a flap is a partition the caller opens
//     and heals on its own seeded plan). [Path.Heal] removes every L4 fault of the path and, when
//     it returns, no connection opened before it is still usable, so the same client works again.
//   - One fault model. A Path is a target of the model in package faults: it offers the
//     [faults.Network] and [faults.Requests] capabilities, its open faults are a [faults.Set]
//     ([Path.Faults]), and its request rules are a [faults.Rules] table, the same one the
//     simulated stack matches its requests with.
//   - L7 rules ([faults.Rule]) matched per request on method, object key glob, If-Match/If-None-Match
//     presence or value, n-th match and count; added and removed while traffic flows; counted
//     exactly under concurrency ([Path.Fired]). Actions: [faults.DropResponse], [faults.DropRequest], [faults.SyntheticStatus],
//     [faults.Delay], [faults.Duplicate], [faults.StripConditions], [faults.FailDeleteKeys]. A DeleteObjects batch is
//     matched on the keys it names. [faults.Misdirect] is refused: the simulated stack carries it.
//   - A ledger ([Bench.Ledger], [Bench.WriteLedger]): one history.LedgerEntry per request the L7
//     proxy received, recording what the client sent, the rule that fired, what the store
//     answered (status, ETag, S3 error code) and whether the answer reached the client. A client
//     that gives up does not cancel the request towards the store: the store's real answer is
//     always recorded. The ledger never contains credentials.
//   - Clean shutdown. [Bench.Close] stops listeners, proxies and in-flight
//     handlers and closes every connection a path handed out; no goroutine of the package
//     outlives it.
//   - No silent panics. A panic in a listener, a request handler, a flap or a toxic change is
//     reported to [Options.Guard] (a handler's connection is then aborted), never swallowed
//     as a network error and never the end of the process.
//
// Limits worth knowing:
//
//   - The L7 proxy sits behind the L4 proxy, so Delivered in the ledger means the L7 proxy handed
//     the complete response to the L4 leg. An L4 fault that cuts the connection after that point
//     (Heal or Partition while a call is in flight) can still lose it; the client's own error is
//     then the better witness. Latency and reset act on the request direction, before the L7
//     proxy, so they do not make the ledger lie in steady state.
//   - The store is reached at [Options.Upstream] over plain HTTP, or over HTTPS when
//     [Options.UpstreamTLS] is set: the L7 listeners then terminate TLS with certificates of a
//     run-local [CA] that only the writers' clients trust, and the proxy opens its own verified
//     TLS connection to the store. Toxiproxy stays at TCP level either way; HTTP/2 is not
//     spoken on the paths.
package netpath
