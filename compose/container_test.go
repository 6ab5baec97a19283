package compose_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// needDocker ends the test unless a Docker engine answers: a skip, or a failure in CI
// (testenv.RequireDocker).
func needDocker(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts containers; skipped with -short")
	}
	testenv.NeedDocker(t)
}

func TestIsStatic(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := compose.IsStatic(exe); err != nil {
		t.Fatalf("IsStatic(%s): %v", exe, err)
	}
	if _, err := compose.IsStatic(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("IsStatic of a missing file must fail")
	}
}

// TestMinIOContainer builds the FROM scratch MinIO image (cached by tag and binary digest),
// starts it with testcontainers and round-trips a conditional write; its log reaches LogPath
// and Stop removes the container.
func TestMinIOContainer(t *testing.T) {
	needDocker(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	logPath := filepath.Join(t.TempDir(), "minio.log")
	c, err := compose.StartContainer(ctx, compose.ContainerOptions{LogPath: logPath})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if !strings.HasPrefix(c.Endpoint, "http://127.0.0.1:") || !c.Alive() {
		t.Fatalf("endpoint %s alive %v", c.Endpoint, c.Alive())
	}
	if strings.Contains(c.Config().String(), c.SecretKey) {
		t.Fatal("Config.String shows the secret")
	}
	s, err := s3store.New(store.ClientAWS, c.Config())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfAbsent(ctx, "k", []byte("v")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.PutIfAbsent(ctx, "k", []byte("w")); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("second create: %v, want precondition failed", err)
	}
	c.Stop()
	if c.Alive() {
		t.Fatal("the container still runs after Stop")
	}
	if b, _ := os.ReadFile(logPath); len(b) == 0 {
		t.Log("the container wrote nothing to its log (MinIO is quiet when healthy)")
	}
}
