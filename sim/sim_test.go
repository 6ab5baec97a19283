package sim_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/sim"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/storetest"
)

func newBench(t *testing.T) (*sim.Bench, *store.Mem) {
	t.Helper()
	mem := store.NewMem()
	b, err := sim.New(mem, sim.Options{Prefix: "p/", Clock: wait.Scaled(100)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b, mem
}

// A fault-free path is a store: the contract suite MinIO passes holds through it.
func TestContractThroughAPath(t *testing.T) {
	storetest.Run(t, func(t *testing.T) (store.Store, string) {
		b, _ := newBench(t)
		return b.Path("a"), "p/"
	})
}

func TestOutsideThePrefixIsRefused(t *testing.T) {
	b, mem := newBench(t)
	_, err := b.Path("a").Put(context.Background(), "other/k", []byte("x"))
	if !errors.Is(err, store.ErrConfig) {
		t.Fatalf("a put outside the prefix: %v, want a configuration error", err)
	}
	if _, err := mem.Get(context.Background(), "other/k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("the refused put reached the store")
	}
	if l := b.Ledger(); len(l) != 1 || l[0].Refused == "" || l[0].Forwarded {
		t.Fatalf("ledger %+v", l)
	}
}

func open(t *testing.T, p *sim.Path, f faults.Fault) {
	t.Helper()
	if err := p.Faults().Open(f); err != nil {
		t.Fatal(err)
	}
}

func TestRequestFaultsApplyAsTheProxyDoes(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		rule      faults.Rule
		applied   bool // the store holds the write afterwards
		errKind   error
		forwarded bool
		delivered bool
	}{
		{faults.Rule{Name: "drop", Action: faults.DropResponse}, true, store.ErrAmbiguous, true, false},
		{faults.Rule{Name: "lose", Action: faults.DropRequest}, false, store.ErrAmbiguous, false, false},
		{faults.Rule{Name: "c409", Action: faults.SyntheticStatus, Status: 409}, false, store.ErrConflict, false, true},
		{faults.Rule{Name: "s503", Action: faults.SyntheticStatus, Status: 503}, false, store.ErrAmbiguous, false, true},
		{faults.Rule{Name: "dup", Action: faults.Duplicate}, true, nil, true, true},
		{faults.Rule{Name: "slow", Action: faults.Delay, Delay: 100 * time.Millisecond}, true, nil, true, true},
	}
	for _, c := range cases {
		t.Run(c.rule.Name, func(t *testing.T) {
			b, mem := newBench(t)
			p := b.Path("a")
			c.rule.Method, c.rule.Key = "PUT", "*fence__*"
			open(t, p, faults.RuleFault(c.rule))
			_, err := p.PutIfAbsent(ctx, "p/fence__1", []byte("v"))
			if c.errKind == nil && err != nil || c.errKind != nil && !errors.Is(err, c.errKind) {
				t.Fatalf("error %v, want kind %v", err, c.errKind)
			}
			_, gerr := mem.Get(ctx, "p/fence__1")
			if (gerr == nil) != c.applied {
				t.Fatalf("applied=%v, want %v", gerr == nil, c.applied)
			}
			l := b.Ledger()
			if len(l) != 1 || l[0].Rule != c.rule.Name || l[0].Forwarded != c.forwarded || l[0].Delivered != c.delivered ||
				l[0].IfNoneMatch != "*" || l[0].Method != "PUT" {
				t.Fatalf("ledger %+v", l)
			}
			if c.rule.Action == faults.Duplicate && (l[0].Copies != 2 || l[0].Err == "") {
				t.Fatalf("duplicate not recorded: %+v", l[0])
			}
		})
	}
}

func TestStripConditionsAppliesWithoutThePrecondition(t *testing.T) {
	b, mem := newBench(t)
	p := b.Path("a")
	ctx := context.Background()
	if _, err := p.PutIfAbsent(ctx, "p/fence__1", []byte("first")); err != nil {
		t.Fatal(err)
	}
	open(t, p, faults.RuleFault(faults.Rule{Name: "strip", Action: faults.StripConditions}))
	if _, err := p.PutIfAbsent(ctx, "p/fence__1", []byte("second")); err != nil {
		t.Fatalf("a stripped create over an existing key: %v, want success", err)
	}
	if o, _ := mem.Get(ctx, "p/fence__1"); string(o.Body) != "second" {
		t.Fatalf("body %q", o.Body)
	}
}

func TestFailDeleteKeysFailsOnlyMatchingKeys(t *testing.T) {
	b, mem := newBench(t)
	p := b.Path("a")
	ctx := context.Background()
	for _, k := range []string{"p/a", "p/fence__1"} {
		if _, err := mem.Put(ctx, k, []byte("x")); err != nil {
			t.Fatal(err)
		}
	}
	open(t, p, faults.RuleFault(faults.Rule{Name: "keep", Key: "*fence__*", Action: faults.FailDeleteKeys}))
	failed, err := p.DeleteMany(ctx, []string{"p/a", "p/fence__1"})
	if err != nil || len(failed) != 1 || failed[0].Key != "p/fence__1" {
		t.Fatalf("failed %v err %v", failed, err)
	}
	if _, err := mem.Get(ctx, "p/fence__1"); err != nil {
		t.Fatal("the failed key was deleted")
	}
	if _, err := mem.Get(ctx, "p/a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatal("the other key survived")
	}
	if l := b.Ledger(); len(l) != 1 || l[0].Method != "POST" || len(l[0].Keys) != 2 || l[0].Query != "delete=" {
		t.Fatalf("ledger %+v", l)
	}
}

func TestNetworkFaultsAsObservableOutcomes(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		fault   faults.Fault
		applied bool
		ledger  int
	}{
		{"refuse", faults.PartitionFault("refuse", faults.Refuse), false, 0},
		{"blackhole", faults.PartitionFault("bh", faults.Blackhole), false, 0},
		{"reset", faults.ResetFault("reset"), false, 0},
		{"one-way", faults.OneWayFault("ow"), true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			b, mem := newBench(t)
			p := b.Path("a")
			open(t, p, c.fault)
			_, err := p.Put(ctx, "p/k", []byte("v"))
			if !errors.Is(err, store.ErrAmbiguous) {
				t.Fatalf("error %v, want an unknown outcome", err)
			}
			if _, gerr := mem.Get(ctx, "p/k"); (gerr == nil) != c.applied {
				t.Fatalf("applied=%v, want %v", gerr == nil, c.applied)
			}
			if l := b.Ledger(); len(l) != c.ledger || c.ledger == 1 && l[0].Delivered {
				t.Fatalf("ledger %+v", l)
			}
			if err := p.Faults().Close(c.fault.Name()); err != nil {
				t.Fatal(err)
			}
			if _, err := p.Put(ctx, "p/k2", []byte("v")); err != nil {
				t.Fatalf("after healing: %v", err)
			}
		})
	}
}

// A call held by a blackhole ends as soon as the path heals, not at its deadline.
func TestHealEndsHeldCalls(t *testing.T) {
	mem := store.NewMem()
	b, err := sim.New(mem, sim.Options{Prefix: "p/", Timeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := b.Path("a")
	open(t, p, faults.PartitionFault("bh", faults.Blackhole))
	done := make(chan error, 1)
	go func() { _, err := p.Get(context.Background(), "p/k"); done <- err }()
	wait.For(context.Background(), 20*time.Millisecond)
	if err := p.Faults().Close("bh"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if !errors.Is(err, store.ErrAmbiguous) {
			t.Fatalf("held call ended with %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the held call did not end when the path healed")
	}
}

// A delayed request lands even when its writer gave up, and the ledger says it was not
// delivered.
func TestDelayedRequestLandsAfterTheWriterGaveUp(t *testing.T) {
	mem := store.NewMem()
	b, err := sim.New(mem, sim.Options{Prefix: "p/", Clock: wait.Scaled(100), Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	p := b.Path("a")
	open(t, p, faults.RuleFault(faults.Rule{Name: "hold", Action: faults.Delay, Delay: time.Second}))
	if _, err := p.Put(context.Background(), "p/k", []byte("v")); !errors.Is(err, store.ErrAmbiguous) {
		t.Fatalf("error %v, want an unknown outcome", err)
	}
	l := b.Ledger() // waits for the held request to land
	if len(l) != 1 || !l[0].Applied() || l[0].Delivered {
		t.Fatalf("ledger %+v", l)
	}
	if _, err := mem.Get(context.Background(), "p/k"); err != nil {
		t.Fatal("the held request never landed")
	}
	_ = b.Close()
}

func TestFaultEventsAreRecorded(t *testing.T) {
	var evs []history.Event
	b, err := sim.New(store.NewMem(), sim.Options{Prefix: "p/", Record: func(e history.Event) { evs = append(evs, e) }})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := b.Path("a")
	open(t, p, faults.LatencyFault("slow", time.Millisecond))
	if err := p.Faults().Close("slow"); err != nil {
		t.Fatal(err)
	}
	if len(evs) != 2 || evs[0].Kind != history.FaultStart || evs[1].Kind != history.FaultEnd || evs[0].Writer != "a" {
		t.Fatalf("events %+v", evs)
	}
}

// With retries on, a conditional write whose answer was lost is sent again and meets its own
// landed write: the second answer is a precondition failure.
func TestRetryingResendsALostConditionalWrite(t *testing.T) {
	b, _ := newBench(t)
	p := b.Path("a")
	open(t, p, faults.RuleFault(faults.Rule{Name: "drop", Action: faults.DropResponse, Count: 1}))
	_, err := sim.Retrying(p, 3).PutIfAbsent(context.Background(), "p/fence__1", []byte("v"))
	if !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("retried create: %v, want a precondition failure", err)
	}
	if l := b.Ledger(); len(l) != 2 {
		t.Fatalf("ledger has %d entries, want 2 (the lost one and the retry)", len(l))
	}
}

// Drain returns only once a request held by a delay rule has landed: after it, a direct read
// of the store (the auditor's) sees the write, and no late write can follow it.
func TestDrainWaitsForDelayedRequests(t *testing.T) {
	mem := store.NewMem()
	b, err := sim.New(mem, sim.Options{Prefix: "p/", Clock: wait.Scaled(100), Timeout: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := b.Path("a")
	open(t, p, faults.RuleFault(faults.Rule{Name: "hold", Action: faults.Delay, Delay: 200 * time.Second}))
	if _, err := p.Put(context.Background(), "p/k", []byte("v")); !errors.Is(err, store.ErrAmbiguous) {
		t.Fatalf("error %v, want an unknown outcome", err)
	}
	if _, err := mem.Get(context.Background(), "p/k"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the held write landed before its delay: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := b.Drain(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Get(context.Background(), "p/k"); err != nil {
		t.Fatalf("Drain returned before the held write landed: %v", err)
	}
}

// A rule with Until holds its request until the channel closes, however long that takes:
// the write lands after the event, never before.
func TestUntilHoldsARequestUntilItsEvent(t *testing.T) {
	mem := store.NewMem()
	b, err := sim.New(mem, sim.Options{Prefix: "p/", Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p := b.Path("a")
	release := make(chan struct{})
	open(t, p, faults.RuleFault(faults.Rule{Name: "hold", Action: faults.Delay, Until: release, Count: 1}))
	done := make(chan error, 1)
	go func() {
		_, err := p.PutIfAbsent(context.Background(), "p/fence__6", []byte("b"))
		done <- err
	}()
	for p.Fired("hold") == 0 {
		time.Sleep(time.Millisecond)
	}
	// A second writer's create meets no rule and takes the key while the first is held.
	if _, err := b.Path("c").PutIfAbsent(context.Background(), "p/fence__6", []byte("c")); err != nil {
		t.Fatalf("the unheld create: %v", err)
	}
	select {
	case err := <-done:
		t.Fatalf("the held create answered (%v) before its event", err)
	default:
	}
	close(release)
	if err := <-done; !errors.Is(err, store.ErrPreconditionFailed) {
		t.Fatalf("the held create after the event: %v, want a precondition failure (it landed second)", err)
	}
	if o, err := mem.Get(context.Background(), "p/fence__6"); err != nil || string(o.Body) != "c" {
		t.Fatalf("store holds %q (%v), want the unheld writer's body", o.Body, err)
	}
}

// TestMisdirectAnswersAReadWithAnotherObject: a misdirected read gets the next object of the
// key's folder (wrapping to the first), body and ETag, or an empty body when the folder holds
// no other object; the ledger names the object answered, and what is stored is untouched.
func TestMisdirectAnswersAReadWithAnotherObject(t *testing.T) {
	b, mem := newBench(t)
	p := b.Path("a")
	ctx := context.Background()
	read := func(key string) string {
		t.Helper()
		o, err := p.Get(ctx, key)
		if err != nil {
			t.Fatalf("misdirected read of %s: %v", key, err)
		}
		return string(o.Body)
	}
	if _, err := mem.Put(ctx, "p/f/only", []byte("alone")); err != nil {
		t.Fatal(err)
	}
	open(t, p, faults.RuleFault(faults.Rule{Name: "m", Method: "GET", Key: "p/f/*", Action: faults.Misdirect}))
	if got := read("p/f/only"); got != "" {
		t.Fatalf("the folder's only object read back %q, want an empty body", got)
	}
	for _, k := range []string{"p/f/b", "p/f/c", "p/f/sub/x"} {
		if _, err := mem.Put(ctx, k, []byte("body of "+k)); err != nil {
			t.Fatal(err)
		}
	}
	for key, want := range map[string]string{"p/f/b": "body of p/f/c", "p/f/c": "alone", "p/f/only": "body of p/f/b"} {
		if got := read(key); got != want {
			t.Errorf("misdirected read of %s answered %q, want %q", key, got, want)
		}
	}
	if o, _ := mem.Get(ctx, "p/f/b"); string(o.Body) != "body of p/f/b" {
		t.Fatalf("the store holds %q at p/f/b", o.Body)
	}
	var named []string
	for _, l := range b.Ledger() {
		if l.Action == string(faults.Misdirect) {
			named = append(named, l.Err)
		}
	}
	if len(named) != 4 || !slices.Contains(named, "misdirected to p/f/c") || !strings.Contains(named[0], "an empty body") {
		t.Fatalf("ledger: %q", named)
	}
	if err := faults.NewRules("a").Add(faults.Rule{Name: "w", Method: "PUT", Action: faults.Misdirect}); err == nil {
		t.Fatal("a misdirect rule on PUT was accepted")
	}
}

// TestMisdirectAltersAReadsOwnBody: a misdirected read of a '|'-separated body is answered,
// one time in two, with that body altered (each of the alterations drawn), an answer the
// fence's decoder refuses, never another valid version of the key; the ledger names it, and
// the store keeps the object as it was.
func TestMisdirectAltersAReadsOwnBody(t *testing.T) {
	b, mem := newBench(t)
	p := b.Path("a")
	ctx := context.Background()
	const key = "p/t/fence__9223372036854775802"
	body, err := fence.Encode(fence.Content{IndexUUID: "idx", ShardID: 0, Term: 5, AllocationID: "a-1", NodeID: "a", Seq: 12})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := mem.Put(ctx, key, body); err != nil {
		t.Fatal(err)
	}
	altered, other := 0, 0
	for i := range 60 {
		open(t, p, faults.RuleFault(faults.Rule{Name: fmt.Sprintf("m%d", i), Method: "GET", Key: "p/t/*", Count: 1,
			Action: faults.Misdirect}))
		o, err := p.Get(ctx, key)
		if err != nil {
			t.Fatalf("misdirected read: %v", err)
		}
		if string(o.Body) == "" {
			other++ // the folder holds no other object
			continue
		}
		altered++
		if _, err := fence.Decode(o.Body); err == nil {
			t.Errorf("the altered body %q decodes", o.Body)
		}
		if o.ETag == "" || bytes.Equal(o.Body, body) {
			t.Errorf("altered answer %q with ETag %q", o.Body, o.ETag)
		}
	}
	how := map[string]bool{}
	for _, l := range b.Ledger() {
		if l.Action == string(faults.Misdirect) && strings.HasPrefix(l.Err, "misdirected to its own body, ") {
			how[l.Err] = true
		}
	}
	if altered < 15 || other < 15 || len(how) != 5 {
		t.Fatalf("%d altered, %d answered with another object; alterations seen: %v", altered, other, how)
	}
	if o, _ := mem.Get(ctx, key); !bytes.Equal(o.Body, body) {
		t.Fatalf("the store holds %q", o.Body)
	}
}
