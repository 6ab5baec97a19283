// Package env is the home of the object store a run or a certification talks to: the [Env]
// interface (how clients reach the bucket, the host:port fault paths forward to, a
// description without credentials, the store's log, whether it is still up), its three
// stacks ([Local], [Container], [External]), [Open], which turns the command line's
// [Options] into an opened store, [UpstreamTLS], how fault paths reach an HTTPS store, and
// [LoadStores], which reads a file of several external stores to compare.
//
// It guarantees:
//
//   - credentials stay in store.Config and are handed to [Options.Secret] as soon as they are
//     known; [Env.Info] and every String hold none, and an endpoint URL that carries
//     user:password@ is refused;
//   - an option the store cannot be opened with wraps outcome.ErrBadInput, so it ends the
//     command with the bad-input exit code, never as a harness error;
//   - an external store is only ever read inside the run's prefix: its liveness probe reads
//     the run's claim marker (<prefix>.fencebench-claim), never a key outside the prefix;
//   - the local stack runs MinIO on one folder, or with [Options.Drives] > 1 as an
//     erasure-coded server over that many folders; [Local] is then a [StoreFaults], whose
//     drives can be taken away and whose server can be restarted on the same address and data;
//   - whatever Open starts is stopped by [Opened.Stop], and [Options.Hold] is told what would
//     be left behind until then;
//   - a stores file holds no credential: it names the environment variables that hold them,
//     a literal credential field is refused, and no error of [LoadStores] repeats a value
//     that could be one; every problem of the file is reported as file:line.
package env
