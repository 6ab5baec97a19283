// Package s3store holds the two adapters that carry [store.Store] to a real S3-compatible
// store: one over github.com/minio/minio-go/v7 ([NewMinio]) and one over
// github.com/aws/aws-sdk-go-v2 ([NewAWS]); [New] picks one by [store.Client].
//
// It guarantees what package store promises of every adapter: automatic retries off (a
// conditional PUT whose first attempt landed would come back from a retry as 412,
// indistinguishable from being fenced), every call bounded by the config's per-call timeout,
// errors classified by [store.Classify] into the store sentinels with the status, S3 code and
// request id kept in [*store.Error], and ETags returned without their quotes. The contract
// suite in store/storetest runs against both adapters on MinIO and against [store.Mem].
//
// It is kept apart from package store so that a protocol built on the interface alone (fence/)
// links neither SDK.
package s3store
