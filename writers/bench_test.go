package writers

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

func benchCluster(b *testing.B, st store.Store, tweak func(*Config)) (*Cluster, *Writer) {
	b.Helper()
	cfg := Config{Shard: Shard{Prefix: testenv.Prefix(b), IndexUUID: "idx"}, Recorder: history.NewRecorder()}
	tweak(&cfg)
	c, err := NewCluster(cfg)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(c.Close)
	w, err := c.AddWriter(WriterSpec{ID: "a", Store: st})
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Promote(context.Background(), 1); err != nil {
		b.Fatal(err)
	}
	return c, w
}

// BenchmarkWriterThroughput measures acknowledged ops per second of one writer on MinIO,
// with a bounded window of unacknowledged ops (a closed-loop client population).
func BenchmarkWriterThroughput(b *testing.B) {
	const syncEvery, window = 50, 200
	st := testenv.Store(b, store.ClientMinio, nil)
	c, w := benchCluster(b, st, func(cfg *Config) { cfg.SyncEvery, cfg.SyncInterval = syncEvery, 5*time.Millisecond })
	ctx := context.Background()
	b.ResetTimer()
	start := time.Now()
	for i := int64(0); i < int64(b.N); i++ {
		if i-w.Acked() >= window {
			if err := c.Bus().WaitAcked(ctx, w.ID(), i-window+1); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Submit(c.NextOp()); err != nil {
			b.Fatal(err)
		}
	}
	if err := c.Bus().WaitAcked(ctx, w.ID(), int64(b.N)); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "ops/s")
}

// BenchmarkAckLatency measures the latency from submit to ack of single-op syncs, alternating
// a fenced writer and an unfenced one (NoFence: no CAS on the ack path) on the same store, and
// reports both distributions and their ratio: the sequenced protocol adds one conditional PUT
// per sync, so the ratio should be close to 3 requests over 2.
func BenchmarkAckLatency(b *testing.B) {
	st := testenv.Store(b, store.ClientMinio, nil)
	tweak := func(nofence bool) func(*Config) {
		return func(cfg *Config) { cfg.SyncEvery, cfg.SyncInterval, cfg.NoFence = 1, time.Hour, nofence }
	}
	cf, wf := benchCluster(b, st, tweak(false))
	cu, wu := benchCluster(b, st, tweak(true))
	ctx := context.Background()
	one := func(c *Cluster, w *Writer) time.Duration {
		t0 := time.Now()
		if err := w.Submit(c.NextOp()); err != nil {
			b.Fatal(err)
		}
		if err := c.Bus().WaitAcked(ctx, w.ID(), w.Acked()+1); err != nil {
			b.Fatal(err)
		}
		return time.Since(t0)
	}
	// Warm up both paths (the fenced writer's first sync re-adopts the chain).
	one(cf, wf)
	one(cu, wu)
	fenced := make([]time.Duration, 0, b.N)
	unfenced := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		fenced = append(fenced, one(cf, wf))
		unfenced = append(unfenced, one(cu, wu))
	}
	b.StopTimer()
	pf50, pf99 := percentiles(fenced)
	pu50, pu99 := percentiles(unfenced)
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(pf50), "p50-fenced-ms")
	b.ReportMetric(ms(pf99), "p99-fenced-ms")
	b.ReportMetric(ms(pu50), "p50-unfenced-ms")
	b.ReportMetric(ms(pu99), "p99-unfenced-ms")
	b.ReportMetric(float64(pf50)/float64(pu50), "p50-ratio")
	b.ReportMetric(float64(pf99)/float64(pu99), "p99-ratio")
}

func percentiles(ds []time.Duration) (p50, p99 time.Duration) {
	s := slices.Clone(ds)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.99)
}
