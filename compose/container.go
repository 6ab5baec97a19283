package compose

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/testcontainers/testcontainers-go"

	"github.com/fencebench/fencebench/store"
)

// ContainerOptions configure a MinIO container.
type ContainerOptions struct {
	// Image is the MinIO image; "" means MinIOImage, built FROM scratch from the static MinIO
	// binary (FindStaticMinIO) when it is missing or stale (used as it is when there is no
	// binary to build it from). Any other image is used as it is
	// (pulled by the engine if needed) and must run `minio` given the arguments "server /data".
	Image string
	// Bucket is the bucket to create; "" means "fencebench".
	Bucket string
	// LogPath receives the container's output; "" discards it.
	LogPath string
	// ReadyTimeout bounds the wait for the server to answer; 0 means 90s.
	ReadyTimeout time.Duration
	// Logger receives testcontainers' progress messages at debug level; nil discards them.
	Logger *slog.Logger
}

// Container is a MinIO server in a Docker container started with testcontainers-go, its API
// port published on the loopback interface of the Docker host.
type Container struct {
	Endpoint  string
	Bucket    string
	AccessKey string
	SecretKey string
	LogPath   string
	Image     string

	c       testcontainers.Container
	logFile *os.File
	logMu   sync.Mutex
	stop    sync.Once
}

// Config returns a store.Config for this server (path-style addressing).
func (c *Container) Config() store.Config {
	return store.Config{Endpoint: c.Endpoint, Bucket: c.Bucket, AccessKey: c.AccessKey,
		SecretKey: c.SecretKey, PathStyle: true, Region: "us-east-1"}
}

// Addr is the server's host:port.
func (c *Container) Addr() string { return strings.TrimPrefix(c.Endpoint, "http://") }

// ID is the container's ID.
func (c *Container) ID() string { return c.c.GetContainerID() }

// Alive reports whether the container is still running.
func (c *Container) Alive() bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	st, err := c.c.State(ctx)
	return err == nil && st.Running
}

// Stop removes the container (and its anonymous data volume) and closes the log. It is
// idempotent.
func (c *Container) Stop() {
	c.stop.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = c.c.Terminate(ctx, testcontainers.RemoveVolumes())
		c.logMu.Lock()
		if c.logFile != nil {
			c.logFile.Close()
			c.logFile = nil
		}
		c.logMu.Unlock()
	})
}

// Accept implements testcontainers.LogConsumer: the container's output goes to LogPath.
func (c *Container) Accept(l testcontainers.Log) {
	c.logMu.Lock()
	defer c.logMu.Unlock()
	if c.logFile != nil {
		_, _ = c.logFile.Write(l.Content)
	}
}

type slogPrintf struct{ l *slog.Logger }

func (s slogPrintf) Printf(format string, v ...any) {
	s.l.Debug("testcontainers: " + strings.TrimSpace(fmt.Sprintf(format, v...)))
}

// ContainerHost is the address the Docker host's published ports are reached at:
// $TESTCONTAINERS_HOST_OVERRIDE, else the host of a tcp:// DOCKER_HOST, else 127.0.0.1 (a
// local engine). Set TESTCONTAINERS_HOST_OVERRIDE when the bench itself runs in a container
// next to the engine.
func ContainerHost() string {
	if h := os.Getenv("TESTCONTAINERS_HOST_OVERRIDE"); h != "" {
		return h
	}
	if u, err := url.Parse(os.Getenv("DOCKER_HOST")); err == nil && (u.Scheme == "tcp" || u.Scheme == "http" || u.Scheme == "https") && u.Hostname() != "" {
		return u.Hostname()
	}
	return "127.0.0.1"
}

// StartContainer starts MinIO in a container, waits until it answers and creates the bucket.
// The caller must call Stop. Containers carry the label org.fencebench=minio.
func StartContainer(ctx context.Context, opts ContainerOptions) (*Container, error) {
	c := &Container{Bucket: opts.Bucket, AccessKey: "fb" + randHex(8), SecretKey: randHex(20), Image: opts.Image,
		LogPath: opts.LogPath}
	if c.Bucket == "" {
		c.Bucket = "fencebench"
	}
	if c.Image == "" {
		if err := ensureMinIOImage(ctx); err != nil {
			return nil, err
		}
		c.Image = MinIOImage
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	if opts.LogPath != "" {
		f, err := os.OpenFile(opts.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("compose: log file: %w", err)
		}
		c.logFile = f
	}
	host := ContainerHost()
	customs := c.customizers(logger, host)
	ctr, err := testcontainers.Run(ctx, c.Image, customs...)
	if ctr != nil {
		c.c = ctr
	}
	if err != nil {
		if c.c != nil {
			c.Stop()
		} else if c.logFile != nil {
			c.logFile.Close()
		}
		return nil, fmt.Errorf("compose: start the MinIO container (%s): %w%s", c.Image, err, reaperHint(err))
	}
	port, err := ctr.MappedPort(ctx, minioAPI)
	if err != nil {
		c.Stop()
		return nil, fmt.Errorf("compose: MinIO container port: %w", err)
	}
	c.Endpoint = "http://" + net.JoinHostPort(host, port.Port())
	timeout := opts.ReadyTimeout
	if timeout == 0 {
		timeout = 90 * time.Second
	}
	if err := c.waitReady(ctx, timeout); err != nil {
		c.Stop()
		return nil, err
	}
	if err := MakeBucket(ctx, c.Config()); err != nil {
		c.Stop()
		return nil, err
	}
	return c, nil
}

// minioAPI is the container port MinIO serves its API on.
const minioAPI = "9000/tcp"

// ensureMinIOImage builds MinIOImage from a static MinIO binary when there is one, and
// otherwise requires an image built earlier.
func ensureMinIOImage(ctx context.Context) error {
	bin, err := FindStaticMinIO()
	if err == nil {
		return EnsureImage(ctx, MinIOImageSpec(bin))
	}
	if !ImageExists(ctx, MinIOImage) {
		// No binary to build from, and no image built earlier.
		return fmt.Errorf("compose: image %s: %w", MinIOImage, err)
	}
	return nil
}

// customizers configure the MinIO container: its command, credentials, labels, log
// consumer, and for a local engine a port published on loopback only.
func (c *Container) customizers(logger *slog.Logger, host string) []testcontainers.ContainerCustomizer {
	customs := []testcontainers.ContainerCustomizer{
		testcontainers.WithLogger(slogPrintf{logger}),
		testcontainers.WithExposedPorts(minioAPI),
		testcontainers.WithCmd("server", "/data", "--address", ":9000"),
		testcontainers.WithEnv(map[string]string{
			"MINIO_ROOT_USER":     c.AccessKey,
			"MINIO_ROOT_PASSWORD": c.SecretKey,
			"MINIO_BROWSER":       "off",
			"MINIO_UPDATE":        "off",
			"MINIO_CI_CD":         "1",
		}),
		testcontainers.WithLabels(map[string]string{"org.fencebench": "minio"}),
		testcontainers.WithLogConsumers(c),
	}
	if ip, err := netip.ParseAddr(host); err == nil && ip.IsLoopback() {
		// A local engine: publish on loopback only.
		customs = append(customs, testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{network.MustParsePort(minioAPI): {{HostIP: ip, HostPort: "0"}}}
		}))
	}
	return customs
}

func reaperHint(err error) string {
	if strings.Contains(strings.ToLower(err.Error()), "ryuk") || strings.Contains(strings.ToLower(err.Error()), "reaper") {
		return " (the testcontainers reaper image could not be started: set TESTCONTAINERS_RYUK_DISABLED=true where no registry is reachable)"
	}
	return ""
}

func (c *Container) waitReady(ctx context.Context, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	client := c.Config().HTTPClient(time.Second)
	for {
		resp, err := client.Get(c.Endpoint + "/minio/health/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if !c.Alive() {
			return errors.New("compose: the MinIO container exited before it was ready; see " + orNone(c.LogPath))
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("compose: MinIO container at %s not ready after %v", c.Endpoint, timeout)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func orNone(p string) string {
	if p == "" {
		return "its log (not kept: no LogPath)"
	}
	return p
}
