package env_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
)

// TestOpenLocalDrives: --drives 4 opens an erasure-coded local MinIO the runner can fault
// from inside, and says so in the store's description.
func TestOpenLocalDrives(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a MinIO")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	op, err := env.Open(ctx, env.Options{Stack: "local", Drives: 4}, "drives-run", t.TempDir(), slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	defer op.Stop()
	sf, ok := op.Env.(env.StoreFaults)
	if !ok {
		t.Fatalf("the local stack (%T) cannot be faulted from inside", op.Env)
	}
	if sf.Drives() != 4 {
		t.Fatalf("Drives() = %d, want 4", sf.Drives())
	}
	if s := op.Env.Info().Server; !strings.Contains(s, "4 drives") {
		t.Fatalf("Info().Server = %q, want it to name the 4 drives", s)
	}
}

// TestOpenDrivesBadInput: drives are a local-stack option within one erasure set.
func TestOpenDrivesBadInput(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, o := range []env.Options{
		{Stack: "local", Drives: -1},
		{Stack: "local", Drives: env.MaxDrives + 1},
		{Stack: "containers", Drives: 4},
		{Stack: "external", Drives: 4, Bucket: "b"},
	} {
		_, err := env.Open(context.Background(), o, "r", t.TempDir(), log)
		if !errors.Is(err, outcome.ErrBadInput) || !strings.Contains(err.Error(), "--drives") {
			t.Errorf("Open(stack %s, drives %d) = %v, want a bad-input error naming --drives", o.Stack, o.Drives, err)
		}
	}
}
