package netpath_test

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// TestCloseLeavesNothing drives every kind of fault, closes the bench and checks that no
// goroutine of the bench (listeners, Toxiproxy links, flapping, handlers, pooled connections)
// survives.
func TestCloseLeavesNothing(t *testing.T) {
	srv := testenv.MinIO(t) // the shared server's goroutines predate the snapshot below
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())

	ctx := context.Background()
	b, err := netpath.New(netpath.Options{Upstream: srv.Addr(), Bucket: srv.Bucket, Rand: rand.New(rand.NewPCG(1, 2)),
		Prefix: "t/", AccessKey: srv.AccessKey, SecretKey: srv.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	pre := testenv.Prefix(t)
	for _, c := range store.Clients {
		p, err := b.Path("leak-" + string(c))
		if err != nil {
			t.Fatal(err)
		}
		tr := store.NewTransport(p.DialContext)
		defer tr.CloseIdleConnections()
		cfg := pathConfig(t, p)
		cfg.Transport = tr
		cfg.Timeout = 300 * time.Millisecond
		s, err := s3store.New(c, cfg)
		if err != nil {
			t.Fatal(err)
		}
		key := pre + string(c)
		mustAdd(t, p, faults.Rule{Name: "drop", Method: "PUT", Action: faults.DropResponse, Count: 1})
		mustAdd(t, p, faults.Rule{Name: "dup", Method: "PUT", Action: faults.Duplicate, Count: 1})
		mustAdd(t, p, faults.Rule{Name: "strip", Method: "PUT", Action: faults.StripConditions, Count: 1})
		mustAdd(t, p, faults.Rule{Name: "late", Method: "GET", Action: faults.Delay, Delay: time.Hour, Count: 1})
		for range 4 {
			_, _ = s.PutIfAbsent(ctx, key, []byte("x"))
		}
		_, _ = s.Get(ctx, key) // held by the delay rule past the client's deadline: Close must end it
		if err := p.Latency(20 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
		_, _ = s.Put(ctx, key, []byte("x"))
		if err := p.Partition(faults.Blackhole); err != nil {
			t.Fatal(err)
		}
		_, _ = s.Put(ctx, key, []byte("x"))
		if err := p.Heal(); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Put(ctx, key, []byte("x")); err != nil {
			t.Fatalf("after heal: %v", err)
		}
		if err := p.Faults().Open(faults.PartitionFault("cut", faults.Refuse)); err != nil {
			t.Fatal(err)
		}
		_, _ = s.Put(ctx, key, []byte("x"))
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if err := b.Close(); err != nil {
		t.Fatalf("second close: %v", err)
	}
	if _, err := b.Path("late"); !errors.Is(err, netpath.ErrClosed) {
		t.Fatalf("Path after Close: %v", err)
	}
	if len(b.Ledger()) == 0 {
		t.Fatal("the ledger must stay readable after Close")
	}
}
