// Package compose provides the object store a run talks to.
//
// The default is [Local]: a MinIO server binary started as a child process on a free loopback
// port, with a temporary data directory and random credentials, its log kept in a file. It
// guarantees that Stop (also called on context cancellation by the caller, on test cleanup
// and, through the parent-death signal, if the bench itself is killed) kills the server's
// whole process group and removes its data directory, so no MinIO outlives the run.
//
// MinIO is AGPL: it only ever runs as a separate process and is never imported. The binary is
// built once by `make minio` into .cache/bin (or named by $FENCEBENCH_MINIO_BIN).
package compose
