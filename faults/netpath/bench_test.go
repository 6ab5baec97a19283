package netpath_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// benchClients returns a minio-go client straight to MinIO and one through an idle path.
func benchClients(b *testing.B) (directS, pathS store.Store) {
	b.Helper()
	srv := testenv.MinIO(b)
	fb, err := netpath.New(netpath.Options{Upstream: srv.Addr(), Bucket: srv.Bucket, Prefix: "t/",
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = fb.Close() })
	p, err := fb.Path("bench")
	if err != nil {
		b.Fatal(err)
	}
	mk := func(tr store.Config) store.Store {
		s, err := s3store.New(store.ClientMinio, tr)
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	dtr, ptr := store.NewTransport(nil), store.NewTransport(p.DialContext)
	b.Cleanup(dtr.CloseIdleConnections)
	b.Cleanup(ptr.CloseIdleConnections)
	dc, pc := srv.Config(), pathConfig(b, p)
	dc.Transport, pc.Transport = dtr, ptr
	return mk(dc), mk(pc)
}

func benchPut(b *testing.B, s store.Store) {
	ctx := context.Background()
	pre := testenv.Prefix(b)
	body := []byte("a small fencing record, about a hundred bytes long, like a lease or an epoch marker..")
	if _, err := s.Put(ctx, pre+"warm", body); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(body)))
	i := 0
	for b.Loop() {
		if _, err := s.Put(ctx, fmt.Sprintf("%sk%d", pre, i%64), body); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkPutDirect measures small PUTs from minio-go straight to MinIO.
func BenchmarkPutDirect(b *testing.B) {
	d, _ := benchClients(b)
	benchPut(b, d)
}

// BenchmarkPutThroughPath measures the same PUTs through an idle fault path (Toxiproxy and the
// L7 proxy, no fault installed).
func BenchmarkPutThroughPath(b *testing.B) {
	_, p := benchClients(b)
	benchPut(b, p)
}

// BenchmarkPathP50Ratio interleaves direct and through-path PUTs (so both see the same
// machine load) and reports the ratio of their median latencies as "p50-ratio".
func BenchmarkPathP50Ratio(b *testing.B) {
	d, p := benchClients(b)
	ctx := context.Background()
	pre := testenv.Prefix(b)
	body := []byte("a small fencing record")
	for _, s := range []store.Store{d, p} {
		if _, err := s.Put(ctx, pre+"warm", body); err != nil {
			b.Fatal(err)
		}
	}
	var dl, pl []time.Duration
	i := 0
	for b.Loop() {
		for j, s := range []store.Store{d, p} {
			if i%2 == 1 { // alternate which goes first
				s = []store.Store{p, d}[j]
			}
			start := time.Now()
			if _, err := s.Put(ctx, fmt.Sprintf("%sk%d", pre, i%64), body); err != nil {
				b.Fatal(err)
			}
			if s == d {
				dl = append(dl, time.Since(start))
			} else {
				pl = append(pl, time.Since(start))
			}
		}
		i++
	}
	q := func(l []time.Duration, f float64) time.Duration {
		s := slices.Clone(l)
		slices.Sort(s)
		return s[int(float64(len(s)-1)*f)]
	}
	if len(dl) == 0 {
		return
	}
	b.ReportMetric(float64(q(dl, 0.5).Microseconds()), "direct-p50-µs")
	b.ReportMetric(float64(q(pl, 0.5).Microseconds()), "path-p50-µs")
	b.ReportMetric(float64(q(dl, 0.99).Microseconds()), "direct-p99-µs")
	b.ReportMetric(float64(q(pl, 0.99).Microseconds()), "path-p99-µs")
	b.ReportMetric(float64(q(pl, 0.5))/float64(q(dl, 0.5)), "p50-ratio")
}
