package wait

import (
	"context"
	"testing"
	"time"
)

func TestForWaitsTheFullDuration(t *testing.T) {
	const d = 50 * time.Millisecond
	start := time.Now()
	if !For(context.Background(), d) {
		t.Fatal("For returned false with a live context")
	}
	if got := time.Since(start); got < d {
		t.Fatalf("For returned after %v, want at least %v", got, d)
	}
}

func TestForEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(20*time.Millisecond, cancel)
	start := time.Now()
	if For(ctx, time.Minute) {
		t.Fatal("For returned true although the context ended first")
	}
	if got := time.Since(start); got > 10*time.Second {
		t.Fatalf("For returned %v after the context ended", got)
	}
}

func TestForOnAnEndedContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if For(ctx, time.Hour) {
		t.Fatal("For returned true on an ended context")
	}
}
