package wait

import (
	"context"
	"sync"
	"time"
)

// Clock is the time a run lives in: scenario time. Every duration a caller hands it (a sync
// interval, a timeout, a step's delay) is in scenario time. There are three kinds:
//
//   - a nil *Clock is real time, so code that takes a clock works unchanged without one;
//   - Scaled(speed) runs speed times faster than real time: waits are speed times shorter,
//     goroutines still run and interleave for real, and a loaded machine falls behind the
//     schedule (WatchLag measures by how much);
//   - Virtual() stands still while any goroutine can run and jumps to the next wake-up once
//     none can, so no amount of load shifts one event of a schedule relative to another.
type Clock struct {
	speed float64
	v     *timeline // non-nil: virtual time
}

// Scaled returns a clock that runs speed times faster than real time; speed <= 1 gives real
// time (nil).
func Scaled(speed float64) *Clock {
	if speed <= 1 {
		return nil
	}
	return &Clock{speed: speed}
}

// IsVirtual reports whether c is on virtual time.
func (c *Clock) IsVirtual() bool { return c != nil && c.v != nil }

// Speed is how many scenario seconds pass per real second (1 for a nil clock, 0 for a
// virtual one: it has no fixed pace).
func (c *Clock) Speed() float64 {
	switch {
	case c == nil:
		return 1
	case c.v != nil:
		return 0
	}
	return c.speed
}

// String names the clock for logs and reports.
func (c *Clock) String() string {
	switch {
	case c == nil:
		return "real time"
	case c.v != nil:
		return "virtual time"
	}
	return "scaled time"
}

// Real is how long the scenario duration d lasts in real time. A virtual clock has no fixed
// pace: it answers d itself, which suits the one use left for it there, a bound on real time
// against a hang.
func (c *Clock) Real(d time.Duration) time.Duration {
	if c == nil || c.v != nil || d <= 0 {
		return d
	}
	r := time.Duration(float64(d) / c.speed)
	if r <= 0 {
		r = 1
	}
	return r
}

// Scenario is the scenario duration that a real duration d amounts to; 0 on a virtual clock,
// where real time does not move scenario time.
func (c *Clock) Scenario(d time.Duration) time.Duration {
	switch {
	case c == nil:
		return d
	case c.v != nil:
		return 0
	}
	return time.Duration(float64(d) * c.speed)
}

// Stopwatch starts measuring scenario time: the function it returns reads how much passed
// since the call. On a virtual clock, successive readings of all its stopwatches are strictly
// increasing, a nanosecond apart within one instant, so they order causally related steps
// that happen at the same instant.
func (c *Clock) Stopwatch() func() time.Duration {
	if c.IsVirtual() {
		start := c.v.reading()
		return func() time.Duration { return c.v.reading() - start }
	}
	start := time.Now()
	return func() time.Duration { return c.Scenario(time.Since(start)) }
}

// For waits the scenario duration d; false when ctx ended first.
func (c *Clock) For(ctx context.Context, d time.Duration) bool {
	if c.IsVirtual() {
		return c.v.virtualFor(ctx, d)
	}
	return For(ctx, c.Real(d))
}

// NewTimer is time.NewTimer for a scenario duration.
func (c *Clock) NewTimer(d time.Duration) *Timer {
	if c.IsVirtual() {
		vt := c.v.newTimer(d, 0, nil)
		return &Timer{C: vt.ch, c: c, vt: vt}
	}
	rt := time.NewTimer(c.Real(d))
	return &Timer{C: rt.C, c: c, rt: rt}
}

// NewTicker is time.NewTicker for a scenario period, which must be positive.
func (c *Clock) NewTicker(d time.Duration) *Ticker {
	if c.IsVirtual() {
		if d <= 0 {
			panic("wait: non-positive interval for NewTicker")
		}
		vt := c.v.newTimer(d, d, nil)
		return &Ticker{C: vt.ch, vt: vt}
	}
	rt := time.NewTicker(c.Real(d))
	return &Ticker{C: rt.C, rt: rt}
}

// WithTimeout is context.WithTimeout for a scenario duration.
func (c *Clock) WithTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if c.IsVirtual() {
		return c.v.withTimeout(ctx, d)
	}
	return context.WithTimeout(ctx, c.Real(d))
}

// Busy marks work in progress that waits for nothing (a simulated store call): until release
// is called, a virtual clock's time line does not move on, whatever the Go scheduler's counts
// say. The runtime's counts miss a goroutine now and then (one parked for a GC assist is
// neither running nor runnable); a mark covers the stretches where a jump would change an
// outcome. It must not be held across a wait on the clock. A no-op on other clocks.
func (c *Clock) Busy() (release func()) {
	if !c.IsVirtual() {
		return func() {}
	}
	tl := c.v
	tl.d.mu.Lock()
	tl.busy++
	tl.d.acts++
	tl.d.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			tl.d.mu.Lock()
			tl.busy--
			tl.d.acts++
			tl.d.mu.Unlock()
		})
	}
}
