package faults_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newBench starts a bench in front of the shared MinIO; it is closed when the test ends.
func newBench(t *testing.T) *faults.Bench {
	t.Helper()
	srv := testenv.MinIO(t)
	b, err := faults.New(faults.Options{
		Upstream:  srv.Addr(),
		Bucket:    srv.Bucket,
		Rand:      rand.New(rand.NewPCG(7, 11)),
		Prefix:    "t/",
		AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

// client returns a store client of kind c whose connections travel the writer's path.
func client(t *testing.T, b *faults.Bench, writer string, c store.Client, timeout time.Duration) (store.Store, *faults.Path) {
	t.Helper()
	p, err := b.Path(writer)
	if err != nil {
		t.Fatal(err)
	}
	cfg := pathConfig(t, p)
	cfg.DialContext = p.DialContext
	cfg.Timeout = timeout
	s, err := store.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// pathConfig is the shared MinIO's client configuration with the path's credential instead of
// the store's.
func pathConfig(t testing.TB, p *faults.Path) store.Config {
	cfg := testenv.MinIO(t).Config()
	cfg.AccessKey, cfg.SecretKey = p.Credentials()
	return cfg
}

func direct(t *testing.T, c store.Client) store.Store {
	t.Helper()
	return testenv.Store(t, c, nil)
}

func byRule(l []history.LedgerEntry, rule string) []history.LedgerEntry {
	var out []history.LedgerEntry
	for _, e := range l {
		if e.Rule == rule {
			out = append(out, e)
		}
	}
	return out
}

func byKey(l []history.LedgerEntry, key string) []history.LedgerEntry {
	var out []history.LedgerEntry
	for _, e := range l {
		if e.Key == key {
			out = append(out, e)
		}
	}
	return out
}

func mustAdd(t *testing.T, p *faults.Path, r faults.Rule) {
	t.Helper()
	if err := p.AddRule(r); err != nil {
		t.Fatal(err)
	}
}

func TestDropResponseToConditionalPut(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			key := testenv.Prefix(t) + "k"
			mustAdd(t, p, faults.Rule{Name: "drop", Method: "PUT", Key: key, Header: "If-None-Match",
				Action: faults.DropResponse, Count: 1})

			_, err := s.PutIfAbsent(ctx, key, []byte("landed"))
			if !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("dropped response: got %v, want ambiguous", err)
			}
			o, err := direct(t, c).Get(ctx, key)
			if err != nil || string(o.Body) != "landed" {
				t.Fatalf("the write must have been applied: %q, %v", o.Body, err)
			}
			got := byRule(b.Ledger(), "drop")
			if len(got) != 1 || p.Fired("drop") != 1 {
				t.Fatalf("want exactly one ledger entry and one firing for the rule, got %d entries, fired %d: %+v",
					len(got), p.Fired("drop"), got)
			}
			e := got[0]
			if !e.Forwarded || e.Status != 200 || e.Delivered || !e.Applied() || e.Copies != 1 {
				t.Fatalf("ledger must say applied-not-delivered: %+v", e)
			}
			if e.Key != key || e.Method != "PUT" || e.IfNoneMatch != "*" || e.Action != "drop-response" || e.Writer != "w" {
				t.Fatalf("ledger entry does not describe the request: %+v", e)
			}
			if e.ETag != o.ETag {
				t.Fatalf("ledger ETag %q, store has %q", e.ETag, o.ETag)
			}
			// The rule is spent: the next request goes through untouched.
			if _, err := s.PutIfAbsent(ctx, key+"2", []byte("x")); err != nil {
				t.Fatalf("after the rule is spent: %v", err)
			}
			// Nobody replayed the dropped PUT behind the client's back.
			if n := len(b.Ledger()); n != 2 {
				t.Fatalf("ledger has %d entries, want 2: %+v", n, b.Ledger())
			}
		})
	}
}

func TestSyntheticStatus(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			d := direct(t, c)
			pre := testenv.Prefix(t)
			etag, err := d.Put(ctx, pre+"existing", []byte("v1"))
			if err != nil {
				t.Fatal(err)
			}
			mustAdd(t, p, faults.Rule{Name: "conflict", Method: "PUT", Key: pre + "*",
				Action: faults.SyntheticStatus, Status: 409})

			_, err = s.PutIfAbsent(ctx, pre+"new", []byte("x"))
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("synthetic 409 on create: got %v, want conflict", err)
			}
			if _, err := d.Get(ctx, pre+"new"); !errors.Is(err, store.ErrNotFound) {
				t.Fatalf("a synthetic 409 must not be applied: Get = %v", err)
			}
			_, err = s.PutIfMatch(ctx, pre+"existing", []byte("v2"), etag)
			if !errors.Is(err, store.ErrConflict) {
				t.Fatalf("synthetic 409 on update: got %v, want conflict", err)
			}
			if o, err := d.Get(ctx, pre+"existing"); err != nil || string(o.Body) != "v1" || o.ETag != etag {
				t.Fatalf("object must be unchanged: %q %q %v", o.Body, o.ETag, err)
			}
			var se *store.Error
			if !errors.As(err, &se) || se.Status != 409 || se.Code != "ConditionalRequestConflict" {
				t.Fatalf("the SDK must have parsed the S3 error: %#v", se)
			}
			for _, e := range byRule(b.Ledger(), "conflict") {
				if e.Forwarded || e.Status != 0 || !e.Delivered || e.Action != "status" {
					t.Fatalf("synthetic answer: ledger %+v", e)
				}
			}
			if p.Fired("conflict") != 2 {
				t.Fatalf("fired %d, want 2", p.Fired("conflict"))
			}

			// 503 SlowDown is ambiguous (SDK retries are off).
			if err := p.RemoveRule("conflict"); err != nil {
				t.Fatal(err)
			}
			mustAdd(t, p, faults.Rule{Name: "slow", Method: "PUT", Action: faults.SyntheticStatus, Status: 503})
			_, err = s.Put(ctx, pre+"slow", []byte("x"))
			if !errors.Is(err, store.ErrAmbiguous) || !errors.As(err, &se) || se.Code != "SlowDown" {
				t.Fatalf("synthetic 503: got %v", err)
			}
		})
	}
}

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

func TestStripConditionsLetsStaleIfMatchOverwrite(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			d := direct(t, c)
			pre := testenv.Prefix(t)
			key := pre + "k"
			stale, err := d.Put(ctx, key, []byte("v1"))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := d.Put(ctx, key, []byte("v2")); err != nil {
				t.Fatal(err)
			}
			// Control: through the idle path the stale token is refused.
			if _, err := s.PutIfMatch(ctx, key, []byte("v3"), stale); !errors.Is(err, store.ErrPreconditionFailed) {
				t.Fatalf("control: got %v, want precondition failed", err)
			}

			mustAdd(t, p, faults.Rule{Name: "strip", Method: "PUT", Key: pre + "*", Action: faults.StripConditions})
			etag, err := s.PutIfMatch(ctx, key, []byte("v3"), stale)
			if err != nil {
				t.Fatalf("stripped If-Match: got %v, want success", err)
			}
			o, err := d.Get(ctx, key)
			if err != nil || string(o.Body) != "v3" || o.ETag != etag {
				t.Fatalf("the stale write must have overwritten: %q %q %v (etag %q)", o.Body, o.ETag, err, etag)
			}
			// If-None-Match: * is ignored too.
			if _, err := s.PutIfAbsent(ctx, key, []byte("v4")); err != nil {
				t.Fatalf("stripped If-None-Match: %v", err)
			}
			if o, _ := d.Get(ctx, key); string(o.Body) != "v4" {
				t.Fatalf("create over an existing key must have overwritten, got %q", o.Body)
			}
			got := byRule(b.Ledger(), "strip")
			if len(got) != 2 || got[0].IfMatch != stale || got[0].Status != 200 || got[1].IfNoneMatch != "*" {
				t.Fatalf("ledger: %+v", got)
			}
		})
	}
}

func TestNthCountUnderConcurrency(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			pre := testenv.Prefix(t)
			mustAdd(t, p, faults.Rule{Name: "nth", Method: "PUT", Key: pre + "*", Nth: 3, Count: 2,
				Action: faults.SyntheticStatus, Status: 500})
			const n = 24
			var wg sync.WaitGroup
			errs := make([]error, n)
			for i := range n {
				wg.Go(func() {
					_, errs[i] = s.Put(ctx, fmt.Sprintf("%sk%02d", pre, i), []byte("x"))
				})
			}
			wg.Wait()
			failed := 0
			for _, err := range errs {
				if err != nil {
					if !errors.Is(err, store.ErrAmbiguous) {
						t.Fatalf("unexpected error: %v", err)
					}
					failed++
				}
			}
			got := byRule(b.Ledger(), "nth")
			if failed != 2 || len(got) != 2 || p.Fired("nth") != 2 {
				t.Fatalf("want exactly 2 firings: %d failed calls, %d ledger entries, fired %d", failed, len(got), p.Fired("nth"))
			}
			if all := b.Ledger(); len(all) != n {
				t.Fatalf("ledger has %d entries, want %d", len(all), n)
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
	b, err := faults.New(faults.Options{Upstream: srv.Addr(), Bucket: srv.Bucket, Prefix: "t/",
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
	s, err := store.New(store.ClientMinio, cfg)
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

func TestDuplicate(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			key := testenv.Prefix(t) + "k"
			mustAdd(t, p, faults.Rule{Name: "dup", Method: "PUT", Header: "If-None-Match", Value: "*",
				Action: faults.Duplicate, Count: 1})
			etag, err := s.PutIfAbsent(ctx, key, []byte("once"))
			if err != nil {
				t.Fatalf("the client gets the first answer: %v", err)
			}
			o, err := direct(t, c).Get(ctx, key)
			if err != nil || string(o.Body) != "once" || o.ETag != etag {
				t.Fatalf("store: %q %q %v", o.Body, o.ETag, err)
			}
			got := byRule(b.Ledger(), "dup")
			if len(got) != 1 {
				t.Fatalf("ledger: %+v", got)
			}
			e := got[0]
			if e.Copies != 2 || e.Status != 200 || e.ETag != etag || !e.Delivered ||
				!strings.Contains(e.Err, "412") || !strings.Contains(e.Err, "PreconditionFailed") {
				t.Fatalf("the store must have received it twice, the second copy refused: %+v", e)
			}
		})
	}
}

func TestLedgerBucketLevelAndNoSecrets(t *testing.T) {
	ctx := context.Background()
	srv := testenv.MinIO(t)
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, _ := client(t, b, "w", c, 5*time.Second)
			pre := testenv.Prefix(t)
			for _, k := range []string{"a", "b/c"} {
				if _, err := s.Put(ctx, pre+k, []byte(k)); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.List(ctx, pre)
			if err != nil || len(l) != 2 {
				t.Fatalf("list: %v %v", l, err)
			}
			if failed, err := s.DeleteMany(ctx, []string{pre + "a", pre + "b/c"}); err != nil || len(failed) != 0 {
				t.Fatalf("delete-many: %v %v", failed, err)
			}
			var list, del bool
			for _, e := range b.Ledger() {
				if e.Key == "" && e.Method == "GET" && strings.Contains(e.Query, "list-type=2") &&
					strings.Contains(e.Query, "prefix=") {
					list = true
				}
				if e.Key == "" && e.Method == "POST" && strings.Contains(e.Query, "delete") {
					del = true
				}
			}
			if !list || !del {
				t.Fatalf("bucket-level calls missing from the ledger (list %v, delete %v): %+v", list, del, b.Ledger())
			}
			if got := byKey(b.Ledger(), pre+"b/c"); len(got) != 1 || got[0].Status != 200 {
				t.Fatalf("key with a slash: %+v", got)
			}
			var buf bytes.Buffer
			if err := b.WriteLedger(&buf); err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{srv.SecretKey, "Signature", "Credential", "AWS4-HMAC"} {
				if strings.Contains(buf.String(), secret) {
					t.Fatalf("the ledger leaks %q", secret)
				}
			}
			back, err := history.DecodeLedger(&buf)
			if err != nil || len(back) != len(b.Ledger()) {
				t.Fatalf("decode: %d entries, %v", len(back), err)
			}
			for i := 1; i < len(back); i++ {
				if back[i].ID <= back[i-1].ID {
					t.Fatalf("ledger not ordered by ID")
				}
			}
		})
	}
}

func TestRuleValidation(t *testing.T) {
	b, err := faults.New(faults.Options{Upstream: "127.0.0.1:1", Bucket: "b", Prefix: "p/", AccessKey: "a", SecretKey: "s"})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := b.Path("w")
	if err != nil {
		t.Fatal(err)
	}
	bad := []faults.Rule{
		{Action: faults.DropResponse},
		{Name: "x", Action: "explode"},
		{Name: "x", Action: faults.SyntheticStatus},
		{Name: "x", Action: faults.Delay},
		{Name: "x", Action: faults.DropResponse, Key: "[a"},
		{Name: "x", Action: faults.DropResponse, Header: "Range"},
		{Name: "x", Action: faults.DropResponse, Value: "abc"},
		{Name: "x", Action: faults.DropResponse, Nth: -1},
	}
	for _, r := range bad {
		if err := p.AddRule(r); err == nil {
			t.Errorf("AddRule(%+v) accepted", r)
		}
	}
	mustAdd(t, p, faults.Rule{Name: "x", Action: faults.DropResponse})
	if err := p.AddRule(faults.Rule{Name: "x", Action: faults.Duplicate}); err == nil {
		t.Error("duplicate rule name accepted")
	}
	if err := p.RemoveRule("x"); err != nil {
		t.Error(err)
	}
	if err := p.RemoveRule("x"); err == nil {
		t.Error("removing a missing rule succeeded")
	}
	good := faults.Options{Upstream: "127.0.0.1:1", Bucket: "b", Prefix: "p/", AccessKey: "a", SecretKey: "s"}
	for name, edit := range map[string]func(*faults.Options){
		"bad upstream":     func(o *faults.Options) { o.Upstream = "nohostport" },
		"no credentials":   func(o *faults.Options) { o.SecretKey = "" },
		"no bucket":        func(o *faults.Options) { o.Bucket = "" },
		"no prefix":        func(o *faults.Options) { o.Prefix = "" },
		"rooted prefix":    func(o *faults.Options) { o.Prefix = "/p/" },
		"prefix without /": func(o *faults.Options) { o.Prefix = "p" },
	} {
		o := good
		edit(&o)
		if b, err := faults.New(o); err == nil {
			_ = b.Close()
			t.Errorf("%s accepted", name)
		}
	}
}

// A listing is matched on the prefix it lists, so a rule can make one prefix unreadable.
func TestListingMatchedOnItsPrefix(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 5*time.Second)
			pre := testenv.Prefix(t)
			mustAdd(t, p, faults.Rule{Name: "fence-list", Method: "GET", Key: "*fence__*",
				Action: faults.SyntheticStatus, Status: 503})
			if _, err := s.List(ctx, pre+"fence__"); !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("listing the fence prefix: got %v, want the synthetic 503 (ambiguous)", err)
			}
			if _, err := s.List(ctx, pre+"metadata__"); err != nil {
				t.Fatalf("listing another prefix must be untouched: %v", err)
			}
			if p.Fired("fence-list") != 1 {
				t.Fatalf("fired %d, want 1", p.Fired("fence-list"))
			}
		})
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
