package compose_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// startDrives starts an erasure-coded MinIO over n drives for one test.
func startDrives(t *testing.T, n int) (*compose.Local, store.Store) {
	t.Helper()
	return startServer(t, compose.LocalOptions{Drives: n})
}

// startServer starts a MinIO with opts for one test and returns it with a client whose SDK
// retries are off.
func startServer(t *testing.T, opts compose.LocalOptions) (*compose.Local, store.Store) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts a MinIO; skipped with -short")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	srv, err := compose.StartLocal(ctx, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Stop)
	cfg := srv.Config()
	cfg.Timeout, cfg.MaxAttempts = 5*time.Second, 1
	s, err := s3store.New(store.ClientMinio, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, s
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// status is the HTTP status of a store answer: 200 for success, 0 when none arrived.
func status(err error) int {
	var se *store.Error
	switch {
	case err == nil:
		return 200
	case errors.As(err, &se):
		return se.Status
	default:
		return 0
	}
}

// conditionalWrites tries the conditional writes whose condition is false on key (a create
// over it, a CAS from a stale ETag) and, with current, the CAS from the current ETag, which a
// store that lost its write quorum cannot apply. It returns the statuses.
func conditionalWrites(ctx context.Context, s store.Store, key, current, stale string) map[string]int {
	out := map[string]int{}
	_, err := s.PutIfAbsent(ctx, key, []byte("create over it"))
	out["If-None-Match: *"] = status(err)
	_, err = s.PutIfMatch(ctx, key, []byte("stale CAS"), stale)
	out["If-Match: stale"] = status(err)
	if current != "" {
		_, err = s.PutIfMatch(ctx, key, []byte("current CAS"), current)
		out["If-Match: current"] = status(err)
	}
	return out
}

// TestDriveOfflineBelowQuorumFailsClosed takes drives away until the server has lost its
// write quorum (then its read quorum too): every conditional write must fail with a 5xx and
// none may succeed; with the drives back, the data is there and conditions hold again.
func TestDriveOfflineBelowQuorumFailsClosed(t *testing.T) {
	srv, s := startDrives(t, 4)
	if srv.Drives() != 4 {
		t.Fatalf("Drives() = %d, want 4", srv.Drives())
	}
	ctx := context.Background()
	stale, err := s.Put(ctx, "k", []byte("v1"))
	must(t, err)
	etag, err := s.Put(ctx, "k", []byte("v2"))
	must(t, err)
	for _, down := range [][]int{{1, 2}, {1, 2, 3}} {
		for _, d := range down {
			must(t, srv.DriveOffline(d))
		}
		for round := 0; round < 3; round++ {
			for what, code := range conditionalWrites(ctx, s, "k", etag, stale) {
				// A false condition the server could still check may answer 412; nothing may
				// succeed, and the true condition must fail with a 5xx.
				if code == 200 || (what == "If-Match: current" || len(down) > 2) && code < 500 {
					t.Errorf("drives %v offline, round %d: %s answered %d, want a 5xx", down, round, what, code)
				} else {
					t.Logf("drives %v offline, round %d: %s answered %d", down, round, what, code)
				}
			}
		}
		must(t, srv.DrivesOnline())
	}
	obj, err := s.Get(ctx, "k")
	must(t, err)
	if string(obj.Body) != "v2" || obj.ETag != etag {
		t.Fatalf("after the drives came back: %q (ETag %s), want v2 (ETag %s)", obj.Body, obj.ETag, etag)
	}
	if _, err := s.PutIfMatch(ctx, "k", []byte("v3"), stale); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("stale CAS with every drive back: %v, want 412", err)
	}
}

// TestReadQuorumLostConditionalWritesFailClosed builds the state of MinIO's read-quorum bug:
// five drives with parity 1, so an object's read quorum is its four data shards while a
// version counts as the key's latest once three drives agree on it. The key's metadata is
// made unreadable on drives 1 and 2, which stay online: the server finds the key on three
// drives but cannot read it (a read-quorum error, not "no such key"), while all five drives
// still take a write (the write quorum is four). Each conditional write is sent on that
// state; none may succeed, since the server could not check its condition. MinIO releases
// before 18f97e7 (every tag up to RELEASE.2025-10-15) let a conditional write go ahead when
// the metadata read behind its condition failed with the read-quorum error.
//
// It runs on every `make test` against the pinned MinIO, which must fail closed, and is the
// check of `make known-bug-21603`, which runs it against the affected release: see docs/stores.md#known-store-bugs.
func TestReadQuorumLostConditionalWritesFailClosed(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MinIO; skipped with -short")
	}
	srv, s := startServer(t, compose.LocalOptions{Drives: 5, Parity: 1})
	ctx := context.Background()
	stale, err := s.Put(ctx, "k", []byte("v1"))
	must(t, err)
	current, err := s.Put(ctx, "k", []byte("v2"))
	must(t, err)
	var restore []func() error // puts back the metadata of v2 replaced first
	unreadable := func() {
		for _, d := range []int{1, 2} {
			r, err := srv.CorruptObjectMeta(d, "k")
			must(t, err)
			if len(restore) < 2 {
				restore = append(restore, r)
			}
		}
	}
	unreadable()
	if _, err := s.Get(ctx, "k"); status(err) < 500 {
		t.Fatalf("metadata unreadable on drives 1 and 2: GET answered %d (%v), want a 5xx: the read quorum is not lost", status(err), err)
	}
	writes := []struct {
		what string
		put  func() error
	}{
		{"If-None-Match: *", func() error { _, err := s.PutIfAbsent(ctx, "k", []byte("create over it")); return err }},
		{"If-Match: stale", func() error { _, err := s.PutIfMatch(ctx, "k", []byte("stale CAS"), stale); return err }},
		{"If-Match: current", func() error { _, err := s.PutIfMatch(ctx, "k", []byte("current CAS"), current); return err }},
	}
	applied := false
	for _, w := range writes {
		unreadable() // a write that went through rewrote the metadata everywhere
		if code := status(w.put()); code == 200 {
			applied = true
			t.Errorf("read quorum lost, write quorum held: %s succeeded on a key the server could not read: the store skipped the condition it could not check", w.what)
		} else {
			t.Logf("read quorum lost, write quorum held: %s answered %d", w.what, code)
		}
	}
	if !applied { // the metadata of v2 is still the key's: putting it back makes v2 readable
		for _, r := range restore {
			must(t, r())
		}
		obj, err := s.Get(ctx, "k")
		must(t, err)
		if string(obj.Body) != "v2" {
			t.Errorf("with the metadata put back the key holds %q, want v2", obj.Body)
		}
	}
	// The same state takes a write without a condition: the write quorum held throughout.
	unreadable()
	if _, err := s.Put(ctx, "k", []byte("v3")); err != nil {
		t.Fatalf("metadata unreadable on drives 1 and 2: a PUT without a condition failed (%v): the write quorum is lost", err)
	}
}

// TestRestartKeepsData restarts the server mid-use: it answers again on the same endpoint,
// with the same credentials and the same objects, and conditions still hold on them.
func TestRestartKeepsData(t *testing.T) {
	srv, s := startDrives(t, 4)
	ctx := context.Background()
	etag, err := s.Put(ctx, "kept", []byte("before"))
	must(t, err)
	endpoint := srv.Endpoint
	must(t, srv.Restart(ctx, 100*time.Millisecond))
	if !srv.Alive() || srv.Endpoint != endpoint {
		t.Fatalf("after Restart: alive %v, endpoint %s (was %s)", srv.Alive(), srv.Endpoint, endpoint)
	}
	obj, err := s.Get(ctx, "kept")
	must(t, err)
	if string(obj.Body) != "before" || obj.ETag != etag {
		t.Fatalf("after Restart: %q (ETag %s), want %q (ETag %s)", obj.Body, obj.ETag, "before", etag)
	}
	if _, err := s.PutIfAbsent(ctx, "kept", []byte("again")); !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("create over a kept key after Restart: %v, want 412", err)
	}
	if _, err := s.PutIfMatch(ctx, "kept", []byte("after"), etag); err != nil {
		t.Fatalf("CAS from the kept ETag after Restart: %v", err)
	}
}

// TestDriveFaultsNeedDrives: a single-folder server refuses drive faults, and a drive number
// outside the server's is refused.
func TestDriveFaultsNeedDrives(t *testing.T) {
	srv, _ := startDrives(t, 1)
	if err := srv.DriveOffline(1); err == nil {
		t.Fatal("DriveOffline on a single-folder server: no error")
	}
	srv4, _ := startDrives(t, 4)
	for _, d := range []int{0, 5} {
		if err := srv4.DriveOffline(d); err == nil {
			t.Fatal(fmt.Sprintf("DriveOffline(%d) on four drives: no error", d))
		}
	}
}
