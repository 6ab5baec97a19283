package compose

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/store"
)

// MinIOPin is the MinIO module version `make minio` builds.
const MinIOPin = "github.com/minio/minio@v0.0.0-20260212201848-7aac2a2c5b7c"

// EnvMinIOBin names an explicit MinIO binary, overriding the cache folder.
const EnvMinIOBin = "FENCEBENCH_MINIO_BIN"

// ErrNoMinIO is returned when no MinIO binary can be found.
var ErrNoMinIO = errors.New("no MinIO binary: run `make minio` (builds " + MinIOPin + " into .cache/bin) or set " + EnvMinIOBin)

// FindMinIO locates the MinIO binary: $FENCEBENCH_MINIO_BIN, else .cache/bin/minio in the
// nearest directory at or above the working directory that holds go.mod, else minio on PATH.
func FindMinIO() (string, error) {
	if p := os.Getenv(EnvMinIOBin); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Errorf("%s=%s: %w", EnvMinIOBin, p, err)
		}
		return p, nil
	}
	dir, err := os.Getwd()
	if err == nil {
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				p := filepath.Join(dir, ".cache", "bin", "minio")
				if _, err := os.Stat(p); err == nil {
					return p, nil
				}
				break
			}
			parent := filepath.Dir(dir)
			if parent == dir {
				break
			}
			dir = parent
		}
	}
	if p, err := exec.LookPath("minio"); err == nil {
		return p, nil
	}
	return "", ErrNoMinIO
}

// LocalOptions configure a local MinIO.
type LocalOptions struct {
	Binary  string // "" = FindMinIO
	Bucket  string // "" = "fencebench"
	LogPath string // "" = <data dir>/minio.log, removed with it
	// CertsDir, when set, is passed to MinIO as --certs-dir: holding public.crt and private.key
	// (see WriteSelfSignedCert), it makes MinIO serve HTTPS only, and the server's clients trust
	// public.crt alone.
	CertsDir string
	// ReadyTimeout bounds the wait for the server to answer; 0 means 60s.
	ReadyTimeout time.Duration
	// Drives is the number of drives (folders <data dir>/d1 ... dN) of an erasure-coded server;
	// 0 or 1 means one folder, as a single-drive server.
	Drives int
	// Parity is the parity of an erasure-coded server's standard storage class
	// (MINIO_STORAGE_CLASS_STANDARD=EC:<Parity>); 0 leaves MinIO's default (2 on four or five
	// drives). A lower parity raises the read quorum of an object (its data shards) above the
	// majority of the drives.
	Parity int
	// SlowableDrives serves each drive folder of an erasure-coded server (Drives > 1) through
	// a FUSE loopback of a real folder run by this process, so that [Local.DriveSlow] can delay
	// the drive's operations. StartLocal fails, saying why, where FUSE is not usable
	// ([FUSEUsable]).
	SlowableDrives bool
}

// Local is a MinIO server running as a child process.
type Local struct {
	Endpoint  string
	Bucket    string
	AccessKey string
	SecretKey string
	LogPath   string

	rootCAs *x509.CertPool // the self-signed certificate of an HTTPS server
	dataDir string
	logFile *os.File
	drives  int
	slow    *slowDrives // the FUSE drives, with SlowableDrives
	argv    []string    // the server's command line, for a restart on the same port and data
	env     []string    // the server's settings beyond its credentials, kept for a restart
	stop    sync.Once

	mu      sync.Mutex // guards the current process: a restart replaces it
	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
	stopped bool
}

// Config returns a store.Config for this server (path-style addressing; for an HTTPS server,
// trusting its certificate only).
func (l *Local) Config() store.Config {
	return store.Config{Endpoint: l.Endpoint, Bucket: l.Bucket, AccessKey: l.AccessKey,
		SecretKey: l.SecretKey, PathStyle: true, Region: "us-east-1", RootCAs: l.rootCAs}
}

// Addr is the server's host:port.
func (l *Local) Addr() string {
	return strings.TrimPrefix(strings.TrimPrefix(l.Endpoint, "http://"), "https://")
}

func randHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// freePort asks the kernel for a free loopback port. There is a window between closing the
// probe listener and MinIO binding it; StartLocal retries on a bind failure.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// StartLocal starts MinIO, waits until it answers and creates the bucket. The caller must
// call Stop.
func StartLocal(ctx context.Context, opts LocalOptions) (*Local, error) {
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		l, err := startLocalOnce(ctx, opts)
		if err == nil {
			return l, nil
		}
		lastErr = err
		if errors.Is(err, ErrNoMinIO) || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

func startLocalOnce(ctx context.Context, opts LocalOptions) (*Local, error) {
	bin := opts.Binary
	if bin == "" {
		var err error
		if bin, err = FindMinIO(); err != nil {
			return nil, err
		}
	}
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("compose: find a free port: %w", err)
	}
	cport, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("compose: find a free port: %w", err)
	}
	scheme, rootCAs, err := localTrust(opts.CertsDir)
	if err != nil {
		return nil, err
	}
	dataDir, err := os.MkdirTemp("", "fencebench-minio-")
	if err != nil {
		return nil, fmt.Errorf("compose: data dir: %w", err)
	}
	l := &Local{
		Endpoint:  fmt.Sprintf("%s://127.0.0.1:%d", scheme, port),
		rootCAs:   rootCAs,
		Bucket:    opts.Bucket,
		AccessKey: "fb" + randHex(8),
		SecretKey: randHex(20),
		dataDir:   dataDir,
	}
	if l.Bucket == "" {
		l.Bucket = "fencebench"
	}
	l.LogPath = opts.LogPath
	if l.LogPath == "" {
		l.LogPath = filepath.Join(dataDir, "minio.log")
	}
	if l.logFile, err = os.OpenFile(l.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
		os.RemoveAll(dataDir)
		return nil, fmt.Errorf("compose: log file: %w", err)
	}
	l.drives = max(opts.Drives, 1)
	if opts.Parity > 0 {
		if l.drives < 2*opts.Parity {
			l.logFile.Close()
			os.RemoveAll(dataDir)
			return nil, fmt.Errorf("compose: parity %d needs at least %d drives, the server has %d", opts.Parity, 2*opts.Parity, l.drives)
		}
		l.env = append(l.env, fmt.Sprintf("MINIO_STORAGE_CLASS_STANDARD=EC:%d", opts.Parity))
	}
	if opts.SlowableDrives {
		if err := l.mountDrives(); err != nil {
			l.logFile.Close()
			os.RemoveAll(dataDir)
			return nil, err
		}
	}
	l.argv = l.command(bin, port, cport, opts.CertsDir)
	if err := l.spawn(ctx); err != nil {
		l.Stop()
		return nil, err
	}

	timeout := opts.ReadyTimeout
	if timeout == 0 {
		timeout = 60 * time.Second
	}
	if err := l.waitReady(ctx, timeout); err != nil {
		l.Stop()
		return nil, err
	}
	if err := l.makeBucket(ctx); err != nil {
		l.Stop()
		return nil, err
	}
	return l, nil
}

// localTrust reads the certificate a TLS server in certsDir presents ("" means plain HTTP)
// and returns the scheme and the pool that trusts it.
func localTrust(certsDir string) (string, *x509.CertPool, error) {
	if certsDir == "" {
		return "http", nil, nil
	}
	pem, err := os.ReadFile(filepath.Join(certsDir, "public.crt"))
	if err != nil {
		return "", nil, fmt.Errorf("compose: certs dir: %w", err)
	}
	rootCAs := x509.NewCertPool()
	if !rootCAs.AppendCertsFromPEM(pem) {
		return "", nil, fmt.Errorf("compose: %s holds no PEM certificate", filepath.Join(certsDir, "public.crt"))
	}
	return "https", rootCAs, nil
}

// command is the MinIO server's command line: API and console on loopback, the data folder
// (or its drives).
func (l *Local) command(bin string, port, cport int, certsDir string) []string {
	args := []string{bin, "server", "--quiet", "--address", fmt.Sprintf("127.0.0.1:%d", port),
		"--console-address", fmt.Sprintf("127.0.0.1:%d", cport)}
	if certsDir != "" {
		args = append(args, "--certs-dir", certsDir)
	}
	return append(args, l.dataArgs()...)
}

// spawn starts the server process with the server's credentials, output to the log file, in
// a process group of its own, and watches it.
func (l *Local) spawn(ctx context.Context) error {
	cmd := exec.Command(l.argv[0], l.argv[1:]...)
	cmd.Env = append(os.Environ(),
		"MINIO_ROOT_USER="+l.AccessKey,
		"MINIO_ROOT_PASSWORD="+l.SecretKey,
		"MINIO_BROWSER=off",
		"MINIO_UPDATE=off",
		"MINIO_CI_CD=1",
	)
	cmd.Env = append(cmd.Env, l.env...)
	cmd.Stdout = l.logFile
	cmd.Stderr = l.logFile
	// Own process group so Stop can kill MinIO and anything it spawned; the parent-death
	// signal kills it if the bench dies without running Stop.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("compose: start %s: %w", l.argv[0], err)
	}
	done := make(chan struct{})
	l.mu.Lock()
	l.cmd, l.done = cmd, done
	l.mu.Unlock()
	guard.Go(ctx, "the MinIO process watcher", func() {
		err := cmd.Wait()
		l.mu.Lock()
		l.waitErr = err
		l.mu.Unlock()
	}, func() { close(done) })
	return nil
}

// process is the current server process and the channel closed when it exits.
func (l *Local) process() (*exec.Cmd, chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.cmd, l.done
}

func (l *Local) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := l.Config().HTTPClient(time.Second)
	for {
		_, done := l.process()
		select {
		case <-done:
			l.mu.Lock()
			werr := l.waitErr
			l.mu.Unlock()
			return fmt.Errorf("compose: MinIO exited before it was ready (%v); log:\n%s", werr, l.tailLog(2000))
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		resp, err := client.Get(l.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK && l.objectLayerUp(client) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compose: MinIO at %s not ready after %v; log:\n%s", l.Endpoint, timeout, l.tailLog(2000))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// objectLayerUp reports whether the server answers object requests: /minio/health/ready is
// 200 before an erasure set has initialised, while a request then still gets 503
// XMinioServerNotInitialized. An anonymous request on the bucket is refused (403) or finds no
// bucket (404) once the object layer is up, and answers 503 before.
func (l *Local) objectLayerUp(client *http.Client) bool {
	resp, err := client.Get(l.Endpoint + "/" + l.Config().Bucket + "/?location")
	if err != nil {
		return false
	}
	resp.Body.Close()
	return resp.StatusCode != http.StatusServiceUnavailable
}

func (l *Local) makeBucket(ctx context.Context) error {
	return MakeBucket(ctx, l.Config())
}

func (l *Local) tailLog(n int) string {
	b, _ := os.ReadFile(l.LogPath)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// DataDir is the server's data folder, removed by Stop.
func (l *Local) DataDir() string { return l.dataDir }

// Alive reports whether the server process is still running.
func (l *Local) Alive() bool {
	_, done := l.process()
	select {
	case <-done:
		return false
	default:
		return true
	}
}

// Stop kills the server's process group, waits for it, unmounts its FUSE drives and removes
// the data directory (and the log, unless LogPath was given). It is idempotent.
func (l *Local) Stop() {
	l.stop.Do(func() {
		l.mu.Lock()
		l.stopped = true
		l.mu.Unlock()
		l.kill()
		if l.logFile != nil {
			l.logFile.Close()
		}
		if l.slow != nil {
			// A drive still busy is detached lazily; nothing under the data folder is
			// removed through a mount.
			_ = l.slow.unmount()
		}
		os.RemoveAll(l.dataDir)
	})
}

// kill kills the current process group and waits (bounded) until the process has exited.
func (l *Local) kill() {
	cmd, done := l.process()
	if cmd != nil && cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
		}
	}
}
