package writers

import (
	"context"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"
)

// TrafficConfig shapes client traffic.
type TrafficConfig struct {
	// Clients is the number of concurrent clients; 0 means 1.
	Clients int
	// Rate is the total rate in ops per second across all clients. Required.
	Rate float64
	// Seed seeds each client's choice among writers that believe they are primary; client i
	// uses the PCG stream (Seed, i), so the choices do not depend on scheduling.
	Seed uint64
}

// TrafficStats counts what the clients did.
type TrafficStats struct {
	// Sent ops reached a writer; Accepted were buffered, Refused were turned away.
	Sent, Accepted, Refused int64
	// Unrouted slots found no writer believing it is primary (no op id was used).
	Unrouted int64
	// Skipped slots were dropped because a client fell behind its schedule.
	Skipped int64
}

// Traffic is running client traffic. Stop ends it.
type Traffic struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	stats  struct{ sent, accepted, refused, unrouted, skipped atomic.Int64 }
	once   sync.Once
}

// StartTraffic starts cfg.Clients clients sending ops at a steady total rate. Every op gets a
// fresh id from NextOp and goes to a writer that currently believes it is primary (the
// router's view, Primaries), chosen by the client's seeded generator; a zombie that still
// believes it is primary keeps receiving traffic. Each client runs on a fixed schedule (slot
// k at start + phase + k*interval); a client that falls behind drops the missed slots
// instead of bursting. Traffic stops when ctx ends or on Stop.
func (c *Cluster) StartTraffic(ctx context.Context, cfg TrafficConfig) (*Traffic, error) {
	if cfg.Rate <= 0 {
		return nil, errors.New("writers: traffic rate must be positive")
	}
	if cfg.Clients <= 0 {
		cfg.Clients = 1
	}
	ctx, cancel := context.WithCancel(ctx)
	t := &Traffic{cancel: cancel}
	// The clients keep their schedule in scenario time: the rate is per scenario second.
	interval := time.Duration(float64(cfg.Clients) / cfg.Rate * float64(time.Second))
	now := c.cfg.Clock.Stopwatch()
	for i := range cfg.Clients {
		rng := rand.New(rand.NewPCG(cfg.Seed, uint64(i)))
		phase := interval * time.Duration(i) / time.Duration(cfg.Clients)
		t.wg.Add(1)
		c.cfg.Guard.Go("a traffic client", func() { c.client(ctx, t, rng, now, phase, interval) }, t.wg.Done)
	}
	return t, nil
}

// client sends one op per slot: slot k is due at first + k*interval on now's reading.
func (c *Cluster) client(ctx context.Context, t *Traffic, rng *rand.Rand, now func() time.Duration, first, interval time.Duration) {
	timer := c.cfg.Clock.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	for k := int64(0); ; k++ {
		due := first + time.Duration(k)*interval
		if late := now() - due; late > interval {
			missed := int64(late / interval)
			t.stats.skipped.Add(missed)
			k += missed
			due = first + time.Duration(k)*interval
		}
		timer.Reset(due - now())
		select {
		case <-ctx.Done():
			return
		case <-timer.C:
		}
		ps := c.Primaries()
		if len(ps) == 0 {
			t.stats.unrouted.Add(1)
			continue
		}
		w := ps[rng.IntN(len(ps))]
		t.stats.sent.Add(1)
		if err := w.Submit(c.NextOp()); err != nil {
			t.stats.refused.Add(1)
		} else {
			t.stats.accepted.Add(1)
		}
	}
}

// Stop ends the traffic, waits for every client to exit, and returns the counts.
func (t *Traffic) Stop() TrafficStats {
	t.once.Do(func() {
		t.cancel()
		t.wg.Wait()
	})
	return t.Stats()
}

// Stats returns the counts so far.
func (t *Traffic) Stats() TrafficStats {
	return TrafficStats{Sent: t.stats.sent.Load(), Accepted: t.stats.accepted.Load(),
		Refused: t.stats.refused.Load(), Unrouted: t.stats.unrouted.Load(), Skipped: t.stats.skipped.Load()}
}
