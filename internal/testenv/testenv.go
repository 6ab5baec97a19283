// Package testenv gives tests a real MinIO server: one process per test binary, started on
// first use and stopped by Main when the package's tests end, with a fresh key prefix per
// test so tests never see each other's objects.
//
// Tests that need MinIO fail (they do not skip) when no binary is available: `make test`
// builds it, and a silently skipped store test would hide a broken bench. Container tests
// (NeedDocker) skip when no Docker engine answers, and fail instead when
// FENCEBENCH_REQUIRE_DOCKER=1, as CI sets it.
package testenv

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

var (
	once   sync.Once
	shared *compose.Local
	errSrv error
	seq    atomic.Int64
)

// Main runs the package's tests and stops the shared MinIO afterwards. Use it from TestMain:
//
//	func TestMain(m *testing.M) { testenv.Main(m) }
func Main(m *testing.M) {
	code := m.Run()
	if shared != nil {
		shared.Stop()
	}
	os.Exit(code)
}

// MinIO returns the shared server, starting it on first use.
func MinIO(t testing.TB) *compose.Local {
	t.Helper()
	once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		shared, errSrv = compose.StartLocal(ctx, compose.LocalOptions{})
	})
	if errSrv != nil {
		t.Fatalf("testenv: MinIO: %v", errSrv)
	}
	if !shared.Alive() {
		t.Fatalf("testenv: the shared MinIO died; log at %s", shared.LogPath)
	}
	return shared
}

// Nightly reports whether the tests run as the nightly job (FENCEBENCH_NIGHTLY=1, `make
// nightly`): the tests that repeat on MinIO what the simulated stack already proves in `make
// test` (the whole catalogue with its kill matrix for both store clients, one cell per
// subtest) run only then.
func Nightly() bool { return os.Getenv("FENCEBENCH_NIGHTLY") == "1" }

// Prefix returns a key prefix unique to this test (and this call), ending in "/".
func Prefix(t testing.TB) string {
	name := strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	return fmt.Sprintf("t/%d-%s-%d/", time.Now().UnixNano(), name, seq.Add(1))
}

// Store returns a store client of the given kind on the shared MinIO, with cfg applied on top
// of the server's endpoint and credentials.
func Store(t testing.TB, client store.Client, tweak func(*store.Config)) store.Store {
	t.Helper()
	cfg := MinIO(t).Config()
	if tweak != nil {
		tweak(&cfg)
	}
	s, err := s3store.New(client, cfg)
	if err != nil {
		t.Fatalf("testenv: %v", err)
	}
	return s
}

// Keys lists the keys under prefix, without the prefix, failing the test on an error.
func Keys(t testing.TB, s store.Store, prefix string) []string {
	t.Helper()
	es, err := s.List(context.Background(), prefix)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, strings.TrimPrefix(e.Key, prefix))
	}
	return out
}

// ExternalMinIO starts a MinIO of the test's own (a test may kill it) and wraps it as an
// external store whose liveness probe reads inside prefix.
func ExternalMinIO(t testing.TB, prefix string) (*compose.Local, *env.External) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := compose.StartLocal(ctx, compose.LocalOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	e, err := env.NewExternal(srv.Config(), "MinIO", prefix)
	if err != nil {
		t.Fatal(err)
	}
	return srv, e
}

// External wraps the store of cfg as an external store named name whose liveness probe
// reads inside prefix.
func External(t testing.TB, cfg store.Config, name, prefix string) *env.External {
	t.Helper()
	e, err := env.NewExternal(cfg, name, prefix)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
