// Package unsafestore is a store the bench must refuse, for tests: an S3 front over a real
// store that breaks its conditional writes in one of four ways ([Mode]), each a way real
// stores and gateways have been seen to break them:
//
//   - [CheckThenAct]: a PUT with If-None-Match: * or If-Match is answered by reading the key
//     first (HEAD), judging the condition on what it saw, waiting [Options.Gap], and then
//     writing unconditionally, as non-atomic emulations do. One request at a time it answers
//     every condition correctly (412 for a create on an existing key or a stale ETag, 404 for
//     If-Match on a missing key); racing writers that read the same state all win.
//   - [IgnoreUnderLoad]: conditional PUTs reach the store with their conditions while at most
//     [Options.MaxInFlight] requests are in flight at the front; above that the conditions
//     are stripped and the PUT is written unconditionally, as a gateway that skips them when
//     a quorum or a lock is out of reach. One request at a time it is the store itself.
//   - [CreateOnIfMatch]: a PUT with If-Match on a missing key creates the object (200);
//     on an existing key the condition reaches the store unchanged.
//   - [StaleAfterCAS]: conditional PUTs reach the store unchanged, but for [Options.Stale]
//     after a PUT If-Match succeeded, GET and HEAD of that key serve the version the PUT
//     replaced (its body, ETag and headers), as a read cache that a write does not
//     invalidate.
//
// Two more fronts are stores the bench cannot judge rather than ones it must refuse (they are
// not in [Every]):
//
//   - [Stall]: a conditional PUT gets no answer: the front holds it until the client gives up,
//     as a store swamped by the bench's racing writers.
//   - [NoConditionalCreate]: a PUT with If-None-Match is answered 501 NotImplemented, as a
//     store that does not support the header; If-Match reaches the store unchanged.
//
// Every other request passes through unchanged (its Host header kept, so the client's
// signature stays valid upstream). The front's own HEAD, GET and PUT are signed with the
// store's credentials. It trusts its callers: it verifies no signature of its own.
package unsafestore
