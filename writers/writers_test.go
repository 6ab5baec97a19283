package writers

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// runTraffic runs traffic for d and stops it.
func runTraffic(t *testing.T, c *Cluster, d time.Duration, mid func()) TrafficStats {
	t.Helper()
	tr, err := c.StartTraffic(ctx(t), TrafficConfig{Clients: 4, Rate: 400, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	if mid != nil {
		time.Sleep(d / 3)
		mid()
		time.Sleep(d - d/3)
	} else {
		time.Sleep(d)
	}
	return tr.Stop()
}

func TestSteadyRun(t *testing.T) {
	r := minioRig(t, nil)
	a := r.add("a", nil)
	r.promote(a, 1)
	stats := runTraffic(t, r.c, time.Second, nil)
	au := r.audit()
	r.requireDurable(au)
	acked := r.acked("a")
	if len(acked) < 200 {
		t.Fatalf("only %d ops acknowledged (traffic %+v); want many", len(acked), stats)
	}
	if au.Key == "" || len(au.Fences) != 1 {
		t.Fatalf("audit: restore point %q, fences %+v; want a metadata file and exactly the auditor's fence", au.Key, au.Fences)
	}
	if n := len(r.events(history.Fenced, "")); n != 0 {
		t.Fatalf("%d fenced events in a steady run", n)
	}
}

func TestPromotionWhileOldPrimaryRuns(t *testing.T) {
	r := minioRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 1)
	runTraffic(t, r.c, 900*time.Millisecond, func() {
		r.promote(b, 2)
		// The zombie keeps receiving traffic and learns at its next sync.
		r.wait(a, history.SigFenced, 1)
	})
	if a.State() != StateFenced {
		t.Fatalf("old primary is %s, want fenced", a.State())
	}
	fenced := r.events(history.Fenced, "a")
	if len(fenced) != 1 {
		t.Fatalf("got %d Fenced events for a, want 1", len(fenced))
	}
	for _, e := range r.events(history.Ack, "a") {
		if e.Invoke > fenced[0].Complete {
			t.Fatalf("a acknowledged after it was fenced: %v", e)
		}
	}
	if len(r.acked("b")) == 0 || len(r.acked("a")) == 0 {
		t.Fatalf("want acks from both writers; a %d, b %d", len(r.acked("a")), len(r.acked("b")))
	}
	r.requireDurable(r.audit())
}

func TestRelocation(t *testing.T) {
	t.Run("happy", func(t *testing.T) {
		r := minioRig(t, nil)
		a, b := r.add("a", nil), r.add("b", nil)
		r.promote(a, 3)
		r.submit(a, 12)
		r.waitAcked(a, 12)
		res, err := a.Relocate(ctx(t), b, RelocateOptions{})
		if err != nil || res != RelocationHandedOff {
			t.Fatalf("relocate: %+v, %v", res, err)
		}
		if a.BelievesPrimary() || !b.BelievesPrimary() {
			t.Fatalf("after handoff a is %s, b is %s", a.State(), b.State())
		}
		r.submit(b, 10)
		r.waitAcked(b, 10)
		if n := len(r.events(history.Adopt, "b")); n != 1 {
			t.Fatalf("got %d Adopt events, want 1", n)
		}
		// The source's retained token is dead: the target moved the chain past it.
		resumed, err := a.f.Revert(ctx(t))
		if err != nil || resumed {
			t.Fatalf("source revert after a completed handoff: resumed=%v err=%v; want refused", resumed, err)
		}
		tr := r.events(history.Transfer, "a")
		if len(tr) != 1 || tr[0].Token == "" || tr[0].Detail != "b" {
			t.Fatalf("transfer events %+v", tr)
		}
		for _, e := range r.events(history.Hydrate, "b") {
			if e.Detail != "relocation-target" {
				t.Fatalf("target hydration %v lacks the relocation-target mark", e)
			}
		}
		r.requireDurable(r.audit())
	})

	// A handoff message that is only late (within the answer timeout) still hands off.
	t.Run("late-message", func(t *testing.T) {
		r := memRig(t, nil)
		a, b := r.add("a", nil), r.add("b", nil)
		r.promote(a, 3)
		r.submit(a, 5)
		r.waitAcked(a, 5)
		r.faultHandoffs(a, faults.Handoff{Delay: 30 * time.Millisecond})
		res, err := a.Relocate(ctx(t), b, RelocateOptions{AnswerTimeout: 5 * time.Second})
		if err != nil || res != RelocationHandedOff || !b.BelievesPrimary() {
			t.Fatalf("relocate with a late message: %+v, %v, target %s; want handed off", res, err, b.State())
		}
		r.requireDurable(r.audit())
	})

	t.Run("aborted-before-target-writes", func(t *testing.T) {
		r := minioRig(t, nil)
		a, b := r.add("a", nil), r.add("b", nil)
		r.promote(a, 3)
		r.submit(a, 10)
		r.waitAcked(a, 10)
		res, err := a.Relocate(ctx(t), b, RelocateOptions{Abort: history.AbortBeforeTargetWrites, AnswerTimeout: 50 * time.Millisecond})
		if err != nil || res != RelocationResumed {
			t.Fatalf("relocate: %+v, %v; want the source resumed", res, err)
		}
		if rv := r.events(history.Revert, "a"); len(rv) != 1 || rv[0].Outcome != history.OK {
			t.Fatalf("revert events %+v", rv)
		}
		r.submit(a, 10)
		r.waitAcked(a, 20)
		// The late target activates and is refused at its adoption.
		waitFor(t, b.BelievesPrimary)
		r.submit(b, 1)
		r.wait(b, history.SigFenced, 1)
		if ad := r.events(history.Adopt, "b"); len(ad) != 1 || ad[0].Outcome != history.FencedOut {
			t.Fatalf("adopt events %+v; want one refused adoption", ad)
		}
		r.submit(a, 5)
		r.waitAcked(a, 25)
		if a.State() != StateActive {
			t.Fatalf("source is %s, want active (no spurious fence)", a.State())
		}
		r.requireDurable(r.audit())
	})

	t.Run("aborted-after-target-acks", func(t *testing.T) {
		r := minioRig(t, nil)
		a, b := r.add("a", nil), r.add("b", nil)
		r.promote(a, 3)
		r.submit(a, 10)
		r.waitAcked(a, 10)
		tr, err := r.c.StartTraffic(ctx(t), TrafficConfig{Clients: 2, Rate: 300, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		res, err := a.Relocate(ctx(t), b, RelocateOptions{Abort: history.AbortAfterTargetAcks, TargetAcks: 10})
		if err != nil || res != RelocationStoodDown {
			tr.Stop()
			t.Fatalf("relocate: %+v, %v; want the source stood down", res, err)
		}
		before := b.Acked()
		r.waitAcked(b, before+5)
		tr.Stop()
		if sd := r.events(history.StandDown, "a"); len(sd) != 1 || a.State() != StateStoodDown {
			t.Fatalf("got %d StandDown events, source %s; want 1, stood down", len(sd), a.State())
		}
		// The handoff failed because its answer was lost after the target served.
		if ho := r.events(history.Handoff, "a"); len(ho) != 1 || ho[0].Outcome != history.Fail ||
			!strings.Contains(ho[0].Err, "the target adopted and acknowledged") {
			t.Fatalf("handoff events %+v; want one failed, its answer lost after the target served", ho)
		}
		// The refused revert records the fence's own reason, which names the adoption.
		if rv := r.events(history.Revert, "a"); len(rv) != 1 || rv[0].Outcome != history.Fail ||
			!strings.Contains(rv[0].Err, "the target adopted") {
			t.Fatalf("revert events %+v; want one refused revert giving the fence's reason", rv)
		}
		if b.State() != StateActive || len(r.events(history.Fenced, "")) != 0 {
			t.Fatalf("target is %s; fenced events %v", b.State(), r.events(history.Fenced, ""))
		}
		r.requireDurable(r.audit())
	})
}

func TestSegmentsRoundTrip(t *testing.T) {
	r := minioRig(t, func(c *Config) { c.Segments = SegmentPolicy{FilesPerRefresh: 2, MaxRefs: 4, Retain: 1} })
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 1)
	for range 3 {
		if ok, err := a.Refresh(ctx(t)); err != nil || !ok {
			t.Fatalf("refresh: %v %v", ok, err)
		}
	}
	n, err := a.GC(ctx(t))
	if err != nil || n != 2 {
		t.Fatalf("gc deleted %d (%v), want the 2 files merged away", n, err)
	}
	latest := slices.Clone(a.segs.refs)
	r.promote(b, 2)
	var got []string
	for _, e := range r.events(history.Hydrate, "b") {
		if e.Outcome != history.OK {
			t.Fatalf("hydration fetch failed: %v", e)
		}
		got = append(got, e.Key)
	}
	slices.Sort(got)
	slices.Sort(latest)
	if !slices.Equal(got, latest) || len(got) != 4 {
		t.Fatalf("b hydrated %v, want a's latest reference set %v", got, latest)
	}
	// The superseded copy (still believing it is primary) is gated.
	if ok, err := a.Refresh(ctx(t)); err != nil || ok {
		t.Fatalf("superseded refresh published=%v err=%v; want skipped", ok, err)
	}
	if n, err := a.GC(ctx(t)); err != nil || n != 0 {
		t.Fatalf("superseded gc deleted %d (%v); want skipped", n, err)
	}
	pub := r.events(history.Publish, "a")
	if last := pub[len(pub)-1]; last.Outcome != history.Fail || !strings.Contains(last.Err, "superseded") {
		t.Fatalf("last publish of a: %v; want refused by the gate", last)
	}
	col := r.events(history.Collect, "a")
	if last := col[len(col)-1]; last.Outcome != history.Fail || last.Key != "" {
		t.Fatalf("last collect of a: %v; want a refused round", last)
	}
	// Each refusal spans the gate's read of the fence, so that the history shows what the
	// gate read (NoSpuriousFailure looks there for the cause of a failed step).
	lists := r.events(history.StoreList, "a")
	for _, refused := range []history.Event{pub[len(pub)-1], col[len(col)-1]} {
		if !slices.ContainsFunc(lists, func(l history.Event) bool {
			return l.Invoke >= refused.Invoke && l.Complete <= refused.Complete
		}) {
			t.Fatalf("refused %s %v spans none of a's listings %v", refused.Kind, refused, lists)
		}
	}
	if ok, err := b.Refresh(ctx(t)); err != nil || !ok {
		t.Fatalf("new owner refresh: %v %v", ok, err)
	}
	segFiles := func() []string {
		es, err := r.st.List(ctx(t), r.c.cfg.Shard.SegmentDataPrefix())
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, e := range es {
			keys = append(keys, e.Key)
		}
		return keys
	}
	for _, k := range latest {
		if !slices.Contains(segFiles(), k) {
			t.Fatalf("hydrated file %s vanished", k)
		}
	}
	// Once b's own reference sets have moved past the set it hydrated, its collection
	// deletes what that set named: the hydrated set is one b knows, or its files leak.
	for range 2 {
		if ok, err := b.Refresh(ctx(t)); err != nil || !ok {
			t.Fatalf("new owner refresh: %v %v", ok, err)
		}
	}
	if n, err := b.GC(ctx(t)); err != nil || n != 6 {
		t.Fatalf("b's gc deleted %d (%v), want 6: the 4 files it hydrated and the 2 of its first refresh", n, err)
	}
	for _, k := range segFiles() {
		if slices.Contains(latest, k) {
			t.Fatalf("hydrated file %s survived b's collection", k)
		}
	}
	au := r.audit()
	if len(au.SegmentMetadata) == 0 || !strings.Contains(au.SegmentMetadata[0], invert(2)) {
		t.Fatalf("latest reference set %v, want b's at term 2", au.SegmentMetadata)
	}
}

func TestPauseAcrossTakeover(t *testing.T) {
	r := minioRig(t, nil)
	a, b := r.add("a", nil), r.add("b", nil)
	r.promote(a, 1)
	r.submit(a, 10)
	r.waitAcked(a, 10)
	a.Pause()
	ackedAtPause := a.Acked()
	r.submit(a, 7) // the frozen zombie still takes ops
	r.promote(b, 2)
	r.submit(b, 10)
	r.waitAcked(b, 10)
	a.Resume()
	r.wait(a, history.SigFenced, 1)
	if a.Acked() != ackedAtPause {
		t.Fatalf("a acknowledged %d ops after its pause", a.Acked()-ackedAtPause)
	}
	pause := r.events(history.Pause, "a")[0]
	for _, e := range r.events(history.Ack, "a") {
		if e.Complete > pause.Invoke {
			t.Fatalf("ack after the pause: %v", e)
		}
	}
	r.requireDurable(r.audit())
}

// TestVariantsLoseAnAck drives the interleaving each pipeline variant exists to break, with
// the correct protocol as the control.
func TestVariantsLoseAnAck(t *testing.T) {
	t.Run("cas-concurrent-with-metadata", func(t *testing.T) {
		for _, v := range []fence.Variant{fence.Correct, fence.CASConcurrentWithMetadata} {
			t.Run(string(v), func(t *testing.T) {
				r := minioRig(t, func(c *Config) { c.Variant, c.SyncEvery, c.SyncInterval = v, 1, time.Hour })
				hold := newHold(r.st, isMetadataPut)
				a, b := r.add("a", hold), r.add("b", nil)
				r.promote(a, 1)
				r.submit(a, 1)
				r.waitAcked(a, 1)
				hold.arm()
				op2 := r.submit(a, 1)[0]
				hold.waitHit(t) // a's metadata upload for op2 is in flight
				if v == fence.CASConcurrentWithMetadata {
					r.wait(a, history.SigCAS, 1) // and its CAS already landed
				}
				r.promote(b, 2) // seal + restore read inside the window
				close(hold.release)
				if v == fence.CASConcurrentWithMetadata {
					r.waitAcked(a, 2)
				} else {
					r.wait(a, history.SigFenced, 1)
				}
				r.submit(b, 1)
				r.waitAcked(b, 1)
				lost := r.lost(r.audit())
				if v == fence.CASConcurrentWithMetadata && !slices.Equal(lost, []int64{op2}) {
					t.Fatalf("lost %v; want exactly op %d (acked by a, invisible to b's restore)", lost, op2)
				}
				if v == fence.Correct && len(lost) != 0 {
					t.Fatalf("correct protocol lost %v", lost)
				}
			})
		}
	})
	t.Run("restore-before-claim", func(t *testing.T) {
		for _, v := range []fence.Variant{fence.Correct, fence.RestoreBeforeClaim} {
			t.Run(string(v), func(t *testing.T) {
				r := minioRig(t, func(c *Config) { c.Variant, c.SyncEvery, c.SyncInterval = v, 1, time.Hour })
				hold := newHold(r.st, isFenceList)
				a, b := r.add("a", nil), r.add("b", hold)
				r.promote(a, 1)
				r.submit(a, 1)
				r.waitAcked(a, 1)
				hold.arm()
				done := make(chan error, 1)
				go func() { done <- b.Promote(context.Background(), 2) }()
				hold.waitHit(t) // b is about to seal
				op2 := r.submit(a, 1)[0]
				r.waitAcked(a, 2) // a still owns term 1's chain
				close(hold.release)
				if err := <-done; err != nil {
					t.Fatal(err)
				}
				r.submit(b, 1)
				r.waitAcked(b, 1)
				lost := r.lost(r.audit())
				if v == fence.RestoreBeforeClaim && !slices.Equal(lost, []int64{op2}) {
					t.Fatalf("lost %v; want exactly op %d (acked before b sealed, after b read)", lost, op2)
				}
				if v == fence.Correct && len(lost) != 0 {
					t.Fatalf("correct protocol lost %v", lost)
				}
			})
		}
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	c := ctx(t)
	for !cond() {
		select {
		case <-c.Done():
			t.Fatal("condition never held")
		case <-time.After(2 * time.Millisecond):
		}
	}
}
