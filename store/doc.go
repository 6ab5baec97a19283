// Package store is fencebench's access layer to an S3-compatible object store.
//
// It guarantees three things to everything above it:
//
//   - One small interface, [Store], holding exactly the calls a fencing protocol needs: get (body
//     and ETag), put, put-if-absent (If-None-Match: *), put-if-match (If-Match), delete,
//     delete-many with per-key failures, and a complete, key-ordered listing by prefix.
//   - No hidden retries. Both SDK adapters are built with automatic retries off (a conditional PUT
//     whose first attempt landed would come back from a retry as 412, indistinguishable from
//     being fenced), and every call is bounded by a per-call timeout.
//   - Errors classified once, here, into sentinels for errors.Is: [ErrPreconditionFailed],
//     [ErrNotFound], [ErrConflict], [ErrAmbiguous] and [ErrConfig]. The HTTP status, S3 error
//     code and request id stay reachable through [*Error] for reports.
//
// A run owns its key prefix through [ClaimPrefix]: a marker object created with
// create-if-absent, then checks that no parent prefix and no sub-prefix belongs to another
// run and that the prefix holds nothing else. On a linearizable store two claims on the same,
// a parent or a child prefix never both succeed. [Claim.Release] deletes the run's objects,
// never those under a sub-prefix another run claims, and the marker last. [ValidatePrefix]
// refuses prefixes that are not plain relative key paths.
//
// This package imports the standard library only, so a protocol written against [Store] (fence/)
// links no SDK. The two adapters that talk to real stores, over minio-go and over
// aws-sdk-go-v2, live in store/s3store; [Mem] is an in-memory store with the same
// conditional-write semantics as MinIO, used for fast deterministic protocol traces. The
// contract suite in store/storetest runs against all three.
//
// ETags are opaque tokens. Adapters return them without the surrounding double quotes and add
// the quotes back when sending If-Match, so a token read with Get compares equal to one
// returned by a Put.
package store
