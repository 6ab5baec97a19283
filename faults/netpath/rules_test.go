package netpath_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

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

func TestRuleValidation(t *testing.T) {
	b, err := netpath.New(netpath.Options{Upstream: "127.0.0.1:1", Bucket: "b", Prefix: "p/", AccessKey: "a", SecretKey: "s"})
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
	good := netpath.Options{Upstream: "127.0.0.1:1", Bucket: "b", Prefix: "p/", AccessKey: "a", SecretKey: "s"}
	for name, edit := range map[string]func(*netpath.Options){
		"bad upstream":     func(o *netpath.Options) { o.Upstream = "nohostport" },
		"no credentials":   func(o *netpath.Options) { o.SecretKey = "" },
		"no bucket":        func(o *netpath.Options) { o.Bucket = "" },
		"no prefix":        func(o *netpath.Options) { o.Prefix = "" },
		"rooted prefix":    func(o *netpath.Options) { o.Prefix = "/p/" },
		"prefix without /": func(o *netpath.Options) { o.Prefix = "p" },
	} {
		o := good
		edit(&o)
		if b, err := netpath.New(o); err == nil {
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

// A rule with Until holds a conditional create on its way to the store until the channel
// closes: a create sent by another client meanwhile lands first, and the held one meets it.
func TestUntilHoldsARequestUntilItsEvent(t *testing.T) {
	ctx := context.Background()
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, p := client(t, b, "w", c, 30*time.Second)
			key := testenv.Prefix(t) + "fence__6"
			release := make(chan struct{})
			mustAdd(t, p, faults.Rule{Name: "hold", Method: "PUT", Header: "If-None-Match", Action: faults.Delay,
				Until: release, Count: 1})
			done := make(chan error, 1)
			go func() {
				_, err := s.PutIfAbsent(ctx, key, []byte("held"))
				done <- err
			}()
			for p.Fired("hold") == 0 {
				time.Sleep(time.Millisecond)
			}
			if _, err := direct(t, c).PutIfAbsent(ctx, key, []byte("first")); err != nil {
				t.Fatalf("the unheld create: %v", err)
			}
			select {
			case err := <-done:
				t.Fatalf("the held create answered (%v) before its release", err)
			case <-time.After(50 * time.Millisecond):
			}
			close(release)
			if err := <-done; !errors.Is(err, store.ErrPreconditionFailed) {
				t.Fatalf("the held create: %v, want a precondition failure (it landed second)", err)
			}
			if o, err := direct(t, c).Get(ctx, key); err != nil || string(o.Body) != "first" {
				t.Fatalf("store holds %q (%v), want the unheld create's body", o.Body, err)
			}
		})
	}
}
