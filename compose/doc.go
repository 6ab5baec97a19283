// Package compose provides the object store a run talks to, on one of three stacks.
//
// Local ([Local], the default): a MinIO server binary started as a child process on a free
// loopback port, with a temporary data directory and random credentials, its log kept in a
// file. Stop (also called on context cancellation by the caller, on test cleanup and, through
// the parent-death signal, if the bench itself is killed) kills the server's whole process
// group and removes its data directory, so no MinIO outlives the run. With
// [LocalOptions.CertsDir] it serves HTTPS with the given certificate. With
// [LocalOptions.Drives] > 1 it runs erasure-coded over that many folders of the data
// directory; [Local.DriveOffline] and [Local.DriveOnline] take a drive away and put it back
// with its data, each returning once the server has noticed, [Local.CorruptObjectMeta]
// leaves a drive online with one key's metadata unreadable, and [Local.Restart] kills the
// server and starts it again on the same address, credentials and data. [LocalOptions.Parity]
// sets the parity of the standard storage class. With [LocalOptions.SlowableDrives] each drive
// folder is a FUSE loopback of a real folder served by this process, and [Local.DriveSlow]
// makes every operation on one drive wait a delay that can change at run time; where FUSE
// is not usable ([FUSEUsable] says why) such a server does not start. Stop unmounts the
// drives, and a watchdog process detaches them if this process dies without doing so, so no
// mount outlives the run either.
//
// Containers ([Container]): the same MinIO in a Docker container started with
// testcontainers-go, its API published on the loopback interface of a local engine, with
// random credentials and its output in a log file. By default the image is [MinIOImage],
// built FROM scratch from the static MinIO binary (no registry needed) and rebuilt only when
// the binary changes. Stop removes the container and its data volume; a bench killed without
// running Stop leaves it behind unless the testcontainers reaper runs (containers carry the
// label org.fencebench=minio). docker-compose.yml in this folder describes a MinIO and a
// Toxiproxy for nightly jobs, with official images by default.
//
// External: any S3 endpoint the bench does not manage (a MinIO cluster, AWS S3, another
// S3-compatible store). This package only creates its bucket when asked ([MakeBucket]); the
// environment (package env) and the runner keep the guarantees: the run works inside a fresh
// key prefix that it refuses when it already holds objects, never touches a key outside it,
// deletes only what it created (unless told to keep it) and never prints or stores the
// credentials.
//
// A panic in a goroutine of the package (the process watcher, the image build) is reported
// to the guard.Sink of the context it was started with, never the end of the process.
//
// MinIO is AGPL: it only ever runs as a separate process or container and is never
// imported. The binary is built once by `make minio` into .cache/bin (or named by
// $FENCEBENCH_MINIO_BIN).
package compose
