package testenv

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
)

// RequireDocker names the environment variable that makes Docker a requirement: with
// FENCEBENCH_REQUIRE_DOCKER=1 (CI sets it) a container test that finds no working Docker
// engine fails instead of skipping, so a broken engine cannot turn the container tests green.
const RequireDocker = "FENCEBENCH_REQUIRE_DOCKER"

// NoDocker ends a test that cannot use Docker for the reason given: a skip, or a failure
// when RequireDocker is set to 1.
func NoDocker(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv(RequireDocker) == "1" {
		t.Fatalf("%s, and %s=1 requires Docker", msg, RequireDocker)
		return
	}
	t.Skip(msg + " (skipped; " + RequireDocker + "=1 makes this a failure)")
}

// NeedDocker ends the test through NoDocker unless a Docker engine answers within 10
// seconds. It disables the testcontainers reaper for the test: its image cannot be pulled
// where no registry is reachable, and every container test removes its own containers.
func NeedDocker(t *testing.T) {
	t.Helper()
	t.Setenv("TESTCONTAINERS_RYUK_DISABLED", "true")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := compose.DockerAvailable(ctx); err != nil {
		NoDocker(t, "no Docker engine answers (%v)", err)
	}
}
