package netpath_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

func TestBlackholeRefuseHeal(t *testing.T) {
	ctx := context.Background()
	const deadline = 500 * time.Millisecond
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, deadline)
			key := testenv.Prefix(t) + "k"
			if _, err := s.Put(ctx, key, []byte("v0")); err != nil {
				t.Fatal(err) // leaves a pooled connection that the blackhole must also catch
			}

			if err := p.Partition(faults.Blackhole); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			_, err := s.Put(ctx, key, []byte("v1"))
			took := time.Since(start)
			if !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("blackhole: got %v, want ambiguous", err)
			}
			if took < deadline || took > 10*time.Second {
				t.Fatalf("blackhole: returned after %v, want at the client's deadline %v", took, deadline)
			}
			t.Logf("blackhole: returned after %v (deadline %v): %v", took, deadline, err)

			if err := p.Heal(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, key, []byte("v2")); err != nil {
				t.Fatalf("after heal the same client must work: %v", err)
			}
			if o, err := s.Get(ctx, key); err != nil || string(o.Body) != "v2" {
				t.Fatalf("after heal: %q %v", o.Body, err)
			}

			if err := p.Partition(faults.Refuse); err != nil {
				t.Fatal(err)
			}
			slow, _ := client(t, b, "w", c, 10*time.Second) // a long deadline: refusal must not wait for it
			for _, st := range []store.Store{s, slow} {
				start = time.Now()
				_, err = st.Put(ctx, key, []byte("v3"))
				took = time.Since(start)
				if !errors.Is(err, store.ErrAmbiguous) || !strings.Contains(err.Error(), "refused") {
					t.Fatalf("refuse: got %v, want a connection refused", err)
				}
				if took > 5*time.Second {
					t.Fatalf("refuse: took %v, want a fast failure", took)
				}
			}
			if err := p.Heal(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, key, []byte("v4")); err != nil {
				t.Fatalf("after heal: %v", err)
			}
		})
	}
}

func TestFaultsStayOnTheirPath(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			sa, pa := client(t, b, "a", c, time.Second)
			sb, _ := client(t, b, "b", c, 5*time.Second)
			pre := testenv.Prefix(t)
			mustAdd(t, pa, faults.Rule{Name: "a-409", Action: faults.SyntheticStatus, Status: 409})
			if _, err := sa.Put(ctx, pre+"a0", []byte("a")); !errors.Is(err, store.ErrConflict) {
				t.Fatalf("a's rule: %v", err)
			}
			if err := pa.Partition(faults.Refuse); err != nil {
				t.Fatal(err)
			}
			if _, err := sa.Put(ctx, pre+"a1", []byte("a")); !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("a is partitioned: got %v", err)
			}
			for i := range 5 {
				k := fmt.Sprintf("%sb%d", pre, i)
				if _, err := sb.PutIfAbsent(ctx, k, []byte("b")); err != nil {
					t.Fatalf("b must be untouched: %v", err)
				}
				if _, err := sb.Get(ctx, k); err != nil {
					t.Fatalf("b must be untouched: %v", err)
				}
			}
			nb := 0
			for _, e := range b.Ledger() {
				if e.Writer != "b" {
					continue
				}
				nb++
				if e.Rule != "" || !e.Delivered || e.Status != 200 {
					t.Fatalf("b's entry touched by a fault: %+v", e)
				}
			}
			if nb != 10 {
				t.Fatalf("b has %d ledger entries, want 10", nb)
			}
		})
	}
}

func TestLatencyAndHeal(t *testing.T) {
	ctx := context.Background()
	const lat = 150 * time.Millisecond
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			key := testenv.Prefix(t) + "k"
			if _, err := s.Put(ctx, key, []byte("v")); err != nil {
				t.Fatal(err)
			}
			if err := p.Latency(lat); err != nil {
				t.Fatal(err)
			}
			for range 3 {
				start := time.Now()
				if _, err := s.Put(ctx, key, []byte("v")); err != nil {
					t.Fatal(err)
				}
				if took := time.Since(start); took < lat || took > lat+5*time.Second {
					t.Fatalf("with %v latency a call took %v", lat, took)
				} else {
					t.Logf("with %v latency a call took %v", lat, took)
				}
			}
			if err := p.Heal(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, key, []byte("v")); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestBandwidthSlowCloseReset(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 10*time.Second)
			pre := testenv.Prefix(t)
			if err := p.Bandwidth(100); err != nil { // 100 KB/s
				t.Fatal(err)
			}
			body := bytes.Repeat([]byte("x"), 60<<10)
			start := time.Now()
			if _, err := s.Put(ctx, pre+"big", body); err != nil {
				t.Fatal(err)
			}
			if took := time.Since(start); took < 300*time.Millisecond {
				t.Fatalf("60 KiB at 100 KB/s took %v", took)
			}
			if err := p.SlowClose(50 * time.Millisecond); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, pre+"small", []byte("x")); err != nil {
				t.Fatal(err)
			}
			if err := p.Heal(); err != nil {
				t.Fatal(err)
			}

			before := len(b.Ledger())
			if err := p.Reset(); err != nil {
				t.Fatal(err)
			}
			_, err := s.Put(ctx, pre+"reset", []byte("x"))
			if !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("reset: got %v, want ambiguous", err)
			}
			t.Logf("reset: %v", err)
			if n := len(b.Ledger()); n != before {
				t.Fatalf("a reset request must not reach the L7 proxy: ledger grew from %d to %d", before, n)
			}
			if _, err := direct(t, c).Get(ctx, pre+"reset"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a reset request must not be applied: %v", err)
			}
			if err := p.Heal(); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, pre+"after", []byte("x")); err != nil {
				t.Fatalf("after heal: %v", err)
			}
		})
	}
}

// TestSetHealsOneFaultAndKeepsTheRest: healing one fault of a path's set lifts it alone (the
// latency and the rule opened beside a partition are in force after the partition heals), and
// the set records one start and one end per fault, in order.
func TestSetHealsOneFaultAndKeepsTheRest(t *testing.T) {
	ctx := context.Background()
	srv := testenv.MinIO(t)
	var mu sync.Mutex
	var events []string
	b, err := netpath.New(netpath.Options{Upstream: srv.Addr(), Bucket: srv.Bucket, Prefix: "t/",
		AccessKey: srv.AccessKey, SecretKey: srv.SecretKey, Record: func(e history.Event) {
			mu.Lock()
			events = append(events, fmt.Sprintf("%s %s %s", e.Kind, e.Writer, e.Detail))
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.Path("w")
	if err != nil {
		t.Fatal(err)
	}
	cfg := srv.Config()
	cfg.DialContext, cfg.Timeout = p.DialContext, time.Second
	cfg.AccessKey, cfg.SecretKey = p.Credentials()
	s, err := s3store.New(store.ClientMinio, cfg)
	if err != nil {
		t.Fatal(err)
	}
	key := testenv.Prefix(t) + "k"
	set := p.Faults()
	const lat = 300 * time.Millisecond
	for _, f := range []faults.Fault{faults.LatencyFault("slow", lat),
		faults.RuleFault(faults.Rule{Name: "no-get", Method: "GET", Action: faults.SyntheticStatus, Status: 503}),
		faults.PartitionFault("cut", faults.Refuse)} {
		if err := set.Open(f); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Put(ctx, key, []byte("v")); err == nil {
		t.Fatal("a put went through a partition")
	}
	if err := set.Close("cut"); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if _, err := s.Put(ctx, key, []byte("v")); err != nil {
		t.Fatalf("after the partition healed: %v", err)
	}
	if d := time.Since(start); d < lat {
		t.Fatalf("the put took %v: the latency opened beside the partition was lost when it healed", d)
	}
	if _, err := s.Get(ctx, key); err == nil {
		t.Fatal("the rule opened beside the partition was lost when it healed")
	}
	if got := set.Names(); fmt.Sprint(got) != "[slow no-get]" {
		t.Fatalf("open faults %v", got)
	}
	if err := set.CloseLayer(faults.L4); err != nil {
		t.Fatal(err)
	}
	if err := set.Close("no-get"); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	if _, err := s.Get(ctx, key); err != nil || time.Since(start) >= lat {
		t.Fatalf("after every fault healed: %v in %v", err, time.Since(start))
	}
	want := "[fault-start w slow fault-start w no-get fault-start w cut fault-end w cut fault-end w slow fault-end w no-get]"
	mu.Lock()
	defer mu.Unlock()
	if fmt.Sprint(events) != want {
		t.Fatalf("events\n%v\nwant\n%s", events, want)
	}
}

// TestOneWayAppliesButNeverAnswers: under a one-way partition a PUT reaches the store and is
// applied, but the client gets no answer; healing it restores the answers and keeps the
// path's other faults.
func TestOneWayAppliesButNeverAnswers(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, time.Second)
			key := testenv.Prefix(t) + "k"
			if err := p.Faults().Open(faults.OneWayFault("one-way")); err != nil {
				t.Fatal(err)
			}
			start := time.Now()
			if _, err := s.Put(ctx, key, []byte("landed")); !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("a put under a one-way partition: %v, want an ambiguous outcome", err)
			}
			if d := time.Since(start); d < 900*time.Millisecond {
				t.Fatalf("the put failed after %v: the client must wait for its deadline, not be refused", d)
			}
			o, err := direct(t, c).Get(ctx, key)
			if err != nil || string(o.Body) != "landed" {
				t.Fatalf("the store did not apply the put: %q, %v", o.Body, err)
			}
			if err := p.Faults().Close("one-way"); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, key, []byte("answered")); err != nil {
				t.Fatalf("after healing: %v", err)
			}
		})
	}
}

// A latency changed while requests flow takes effect and leaves the running links alone: each
// change replaces the toxic (Toxiproxy's in-place update writes the struct its pipes read, a
// data race that -race reports), and the last value is the one a call meets.
func TestLatencyChangedUnderTraffic(t *testing.T) {
	ctx := context.Background()
	b := newBench(t)
	s, p := client(t, b, "w", store.ClientMinio, 5*time.Second)
	key := testenv.Prefix(t) + "k"
	if _, err := s.Put(ctx, key, []byte("v")); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if _, err := s.Put(ctx, key, []byte("v")); err != nil {
				done <- err
				return
			}
		}
	}()
	for _, d := range []time.Duration{20 * time.Millisecond, 60 * time.Millisecond, 10 * time.Millisecond, 200 * time.Millisecond} {
		if err := p.Latency(d); err != nil {
			t.Fatal(err)
		}
		time.Sleep(80 * time.Millisecond)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatalf("a request under changing latency failed: %v", err)
	}
	start := time.Now()
	if _, err := s.Put(ctx, key, []byte("v")); err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond {
		t.Fatalf("after the last change to 200ms a call took %v", took)
	}
	if err := p.Heal(); err != nil {
		t.Fatal(err)
	}
}
