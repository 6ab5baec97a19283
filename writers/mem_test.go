package writers

import (
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

func TestLayoutOrdersHighestFirst(t *testing.T) {
	sh := Shard{Prefix: "run/", IndexUUID: "u", ID: 3}
	keys := []string{
		sh.MetadataKey(1, 5, "x"), sh.MetadataKey(2, 1, "x"), sh.MetadataKey(2, 7, "x"), sh.MetadataKey(1, 900, "x"),
	}
	sort.Strings(keys)
	if keys[0] != sh.MetadataKey(2, 7, "x") || keys[1] != sh.MetadataKey(2, 1, "x") {
		t.Fatalf("listing order %v; want term 2 gen 7 first", keys)
	}
	term, gen, ok := parseMetadataName(keys[0])
	if !ok || term != 2 || gen != 7 {
		t.Fatalf("parse %s: %d %d %v", keys[0], term, gen, ok)
	}
	if got := sh.TlogKey(4, 9, "x1"); got != "run/u/3/translog/data/4/9__x1.tlog" {
		t.Fatalf("tlog key %s", got)
	}
	if got := sh.FenceKey(1); got != "run/u/3/translog/metadata/fence__9223372036854775806" {
		t.Fatalf("fence key %s", got)
	}
}

func TestBodiesRoundTrip(t *testing.T) {
	o := origin{Writer: "a", Alloc: "a-1", Node: "n", Term: 2, Gen: 3, Attempt: 1}
	ops, err := decodeTlog(encodeTlog(o, []int64{4, 5, 6}))
	if err != nil || !slices.Equal(ops, []int64{4, 5, 6}) {
		t.Fatalf("tlog: %v %v", ops, err)
	}
	keys, err := decodeList(metadataMagic, encodeList(metadataMagic, o, []string{"k1", "k2"}))
	if err != nil || !slices.Equal(keys, []string{"k1", "k2"}) {
		t.Fatalf("metadata: %v %v", keys, err)
	}
	if string(encodeTlog(o, []int64{1})) == string(encodeTlog(origin{Writer: "a", Alloc: "a-1", Node: "n", Term: 2, Gen: 3, Attempt: 2}, []int64{1})) {
		t.Fatal("a retried sync must write new bytes")
	}
}

// TestEqualTermTwin: a copy sealed at a term is paused in its tokenless window; a twin seals
// the same term over it and acknowledges; the first copy resumes, uploads one orphan
// generation and is refused at re-adoption. The orphan must not become the restore point.
func TestEqualTermTwin(t *testing.T) {
	r := memRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 4)
	a.Pause()
	r.submit(a, 3)
	r.promote(b, 4)
	r.submit(b, 5)
	r.waitAcked(b, 5)
	a.Resume()
	r.wait(a, history.SigFenced, 1)
	if len(r.acked("a")) != 0 {
		t.Fatalf("a acknowledged %v", r.acked("a"))
	}
	au := r.audit()
	r.requireDurable(au)
	if _, _, ok := parseMetadataName(au.Key); !ok || au.Key != r.c.cfg.Shard.MetadataKey(4, b.log.lastGen, b.Alloc()) {
		t.Fatalf("restore point %s; want b's latest", au.Key)
	}
}

func TestTrafficStopsAndUsesUniqueIDs(t *testing.T) {
	r := memRig(t, nil)
	a := r.add("a", nil)
	r.promote(a, 1)
	tr, err := r.c.StartTraffic(ctx(t), TrafficConfig{Clients: 3, Rate: 600, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	r.waitAcked(a, 50)
	st := tr.Stop()
	seen := map[int64]bool{}
	for _, e := range r.events(history.Op, "") {
		if seen[e.Ops[0]] {
			t.Fatalf("op id %d used twice", e.Ops[0])
		}
		seen[e.Ops[0]] = true
	}
	if int64(len(seen)) != st.Sent {
		t.Fatalf("%d op events, %d sent", len(seen), st.Sent)
	}
	r.requireDurable(r.audit())
}

func TestCrashAndRestart(t *testing.T) {
	r := memRig(t, nil)
	a := r.acking("a", 1, 10)
	r.submit(a, 2)
	a.Crash()
	if err := a.Submit(r.c.NextOp()); err == nil {
		t.Fatal("a crashed writer took an op")
	}
	a2, err := a.Restart(ctx(t), "", 2)
	if err != nil {
		t.Fatal(err)
	}
	if a2.Alloc() == a.Alloc() || a2.Node() != a.Node() {
		t.Fatalf("restart: alloc %s node %s", a2.Alloc(), a2.Node())
	}
	r.submit(a2, 5)
	r.waitAcked(a2, 5)
	r.requireDurable(r.audit())
}

func TestNoGoroutineLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	func() {
		r := memRig(t, nil)
		a, b, c := r.add("a", nil), r.add("b", nil), r.add("c", nil)
		r.promote(a, 1)
		tr, err := r.c.StartTraffic(ctx(t), TrafficConfig{Clients: 2, Rate: 500, Seed: 3})
		if err != nil {
			t.Fatal(err)
		}
		r.waitAcked(a, 20)
		if _, err := a.Relocate(ctx(t), b, RelocateOptions{Abort: history.AbortBeforeTargetWrites, AnswerTimeout: 10 * time.Millisecond}); err != nil {
			t.Fatal(err)
		}
		c.Pause()
		tr.Stop()
		r.c.Close()
	}()
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Fatalf("%d goroutines left behind (before %d):\n%s", n-before, before, buf[:runtime.Stack(buf, true)])
	}
}

// TestPromotionOrderFollowsVariant: seal, restore read and hydration run in the order the
// variant says.
func TestPromotionOrderFollowsVariant(t *testing.T) {
	for _, tc := range []struct {
		variant fence.Variant
		want    []history.Kind
	}{
		{fence.Correct, []history.Kind{history.Claim, history.RestoreRead, history.Hydrate}},
		{fence.RestoreBeforeClaim, []history.Kind{history.RestoreRead, history.Claim, history.Hydrate}},
		{fence.HydrateBeforeSeal, []history.Kind{history.Hydrate, history.Claim, history.RestoreRead}},
	} {
		t.Run(string(tc.variant), func(t *testing.T) {
			r := memRig(t, func(c *Config) { c.Variant = tc.variant })
			a, b := r.add("a", nil), r.add("b", nil)
			r.promote(a, 1)
			if _, err := a.Refresh(ctx(t)); err != nil {
				t.Fatal(err)
			}
			r.promote(b, 2)
			var got []history.Kind
			for _, e := range r.rec.Events() {
				if e.Writer != "b" || (e.Kind != history.Claim && e.Kind != history.RestoreRead && e.Kind != history.Hydrate) {
					continue
				}
				if len(got) == 0 || got[len(got)-1] != e.Kind {
					got = append(got, e.Kind)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("promotion steps %v, want %v", got, tc.want)
			}
		})
	}
}
