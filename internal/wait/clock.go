package wait

import (
	"context"
	"time"
)

// Clock is the time a run lives in: scenario time, which runs Speed times faster than real
// time. Every duration a caller hands it (a sync interval, a timeout, a step's delay) is in
// scenario time and is waited for Speed times shorter. A nil *Clock is real time (Speed 1),
// so code that takes a clock works unchanged without one.
//
// The simulated stack uses a fast clock to compress a schedule of several scenario seconds
// into a fraction of a real second. It scales waits only: goroutines still run and interleave
// for real, so the races a schedule provokes stay real races.
type Clock struct {
	speed float64
}

// Scaled returns a clock that runs speed times faster than real time; speed <= 1 gives real
// time (nil).
func Scaled(speed float64) *Clock {
	if speed <= 1 {
		return nil
	}
	return &Clock{speed: speed}
}

// Speed is how many scenario seconds pass per real second (1 for a nil clock).
func (c *Clock) Speed() float64 {
	if c == nil {
		return 1
	}
	return c.speed
}

// Real is how long the scenario duration d lasts in real time.
func (c *Clock) Real(d time.Duration) time.Duration {
	if c == nil || d <= 0 {
		return d
	}
	r := time.Duration(float64(d) / c.speed)
	if r <= 0 {
		r = 1
	}
	return r
}

// Scenario is the scenario duration that a real duration d amounts to.
func (c *Clock) Scenario(d time.Duration) time.Duration {
	if c == nil {
		return d
	}
	return time.Duration(float64(d) * c.speed)
}

// For waits the scenario duration d; false when ctx ended first.
func (c *Clock) For(ctx context.Context, d time.Duration) bool { return For(ctx, c.Real(d)) }

// NewTimer is time.NewTimer for a scenario duration.
func (c *Clock) NewTimer(d time.Duration) *time.Timer { return time.NewTimer(c.Real(d)) }

// NewTicker is time.NewTicker for a scenario period.
func (c *Clock) NewTicker(d time.Duration) *time.Ticker { return time.NewTicker(c.Real(d)) }

// WithTimeout is context.WithTimeout for a scenario duration.
func (c *Clock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, c.Real(d))
}
