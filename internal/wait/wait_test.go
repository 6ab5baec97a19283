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

func TestScaledClockShortensWaits(t *testing.T) {
	c := Scaled(50)
	if got := c.Real(5 * time.Second); got != 100*time.Millisecond {
		t.Fatalf("Real(5s) at speed 50 = %v, want 100ms", got)
	}
	if got := c.Scenario(100 * time.Millisecond); got != 5*time.Second {
		t.Fatalf("Scenario(100ms) at speed 50 = %v, want 5s", got)
	}
	if c.Real(time.Nanosecond) <= 0 {
		t.Fatal("a positive scenario duration became a zero real one")
	}
	var real *Clock
	if real.Real(time.Second) != time.Second || real.Speed() != 1 || Scaled(1) != nil {
		t.Fatal("a nil clock is not real time")
	}
	start := time.Now()
	if !c.For(context.Background(), 2*time.Second) {
		t.Fatal("For returned false with a live context")
	}
	if got := time.Since(start); got < 40*time.Millisecond {
		t.Fatalf("2s at speed 50 waited %v, want at least 40ms", got)
	}
}

// Lag converts each late wake-up to scenario time: on a clock a million times faster than
// real time, the microseconds any timer wakes late are seconds of the schedule. Stop ends the
// measurement and returns what it saw; the value holds still after it.
func TestLagIsInScenarioTime(t *testing.T) {
	c := Scaled(1e6)
	l := c.WatchLag(time.Second) // a real millisecond
	time.Sleep(30 * time.Millisecond)
	got := l.Stop()
	if got < time.Second {
		t.Fatalf("lag %v after 30 real ms of ticks on a clock 1e6 times fast; every wake-up is late by more than a microsecond", got)
	}
	time.Sleep(5 * time.Millisecond)
	if l.Max() != got {
		t.Fatalf("lag moved after Stop: %v, then %v", got, l.Max())
	}
}
