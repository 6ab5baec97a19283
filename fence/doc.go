// Package fence implements per-term object-store fencing for one shard: the protocol a
// primary runs so that, whatever the network does, at most one writer can acknowledge
// through a term's chain, a higher term always prevails over a lower one, and nothing a
// superseded writer acknowledged can land after its successor read its restore point.
//
// Each primary term T owns one object, Prefix+"fence__"+Invert(T); listing the prefix returns
// the highest term first. The body records the shard identity, the term, the recorded owner
// (allocation id), the writing node and a sequence number that grows by one on every write,
// so every version is byte-distinct and a content-hash ETag never repeats. The token is the
// object's ETag: every write presents the current ETag with If-Match and receives the next,
// and whoever holds the latest ETag owns the chain.
//
// A Fence instance belongs to one shard copy at one term and guarantees:
//
//   - Claim never creates a key below an existing higher term, deletes only keys strictly
//     below its own term, verifies its own key afterwards, and withdraws a key it created if a
//     newer grant appeared meanwhile. A surviving lower-term key makes the claim retryable,
//     never successful.
//   - Equal-term arbitration takes an existing key at most twice, never re-creates a vanished
//     key, and, for a guarded instance, only when the key records the instance's allocation.
//   - Advance returns nil only if the store accepted this instance's If-Match write (or a
//     read-back proves that exactly this write landed). A refused CAS or a swept key fences.
//   - An unknown outcome (timeout, lost response, 5xx, 409 ConditionalRequestConflict) is
//     never a fencing verdict: it is adopted only when the key holds exactly this term, seq,
//     recorded allocation and node, and is otherwise ErrRetryable.
//   - A foreign or unparseable body is ErrIdentity, a loud I/O error, never a fencing verdict.
//   - Fenced is terminal, at every term.
//   - Transfer/Revert hand the chain to a same-term relocation target and take it back only if
//     the target never wrote (the retained ETag answers that question).
//   - PublishAllowed fails open and CollectAllowed fails closed when the fence is unreadable.
//   - Verify writes nothing: it is nil only while the key holds the instance's version, and
//     fences once the key is gone or holds another version; a read it cannot make is never a
//     fencing verdict.
//
// These guarantees assume the store enforces conditional writes, is strongly consistent for
// reads and listings, and that the client does not retry conditional PUTs on its own.
//
// Variant selects deliberately broken versions of the protocol, for testing whatever judges a
// protocol's runs; Variants lists them. Each is one switch at the place the behaviour lives:
// in this package, or, for the variants whose Reader is not ReadByProtocol, in the caller that
// orders its I/O around the fence or builds its store client. The package knows nothing of
// the code that uses it.
package fence
