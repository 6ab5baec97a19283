package checker

import (
	"fmt"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
)

// synthRun builds a correct run of about n events: writer a (term 5) serves syncs of 20 ops
// (op submissions, a sync span, three store calls, the fence CAS and the ack, with their
// ledger entries); halfway b (term 6) takes over — claim, restore read — a is fenced, and b
// serves the rest. The auditor recovers every acked op.
func synthRun(n int) Input {
	const opsPerSync = 20
	var (
		ev      = make([]history.Event, 0, n+16)
		led     = make([]history.LedgerEntry, 0, n/8)
		id, lid int64
		now     time.Duration
		op      int64
		rec     = make([]int64, 0, n)
	)
	add := func(e history.Event) {
		id++
		e.ID = id
		if e.Outcome == "" {
			e.Outcome = history.OK
		}
		if e.Complete < e.Invoke {
			e.Complete = e.Invoke
		}
		ev = append(ev, e)
	}
	put := func(w, key, ifMatch, ifNone, etag string, at time.Duration) {
		lid++
		led = append(led, history.LedgerEntry{ID: lid, Writer: w, Method: "PUT", Key: key, IfMatch: ifMatch,
			IfNoneMatch: ifNone, Time: at, Done: at + 200*time.Microsecond, Forwarded: true, Status: 200, ETag: etag,
			Delivered: true})
	}
	tick := func() time.Duration { now += 50 * time.Microsecond; return now }
	serve := func(w string, term int64, key string, untilEvents int) {
		t0 := tick()
		add(history.Event{Kind: history.Claim, Writer: w, Term: term, Key: key, Invoke: t0, Complete: tick(),
			Token: w + "-0", Detail: "seal"})
		add(history.Event{Kind: history.StorePutIfAbsent, Writer: w, Key: key, Invoke: t0, Complete: now, Token: w + "-0"})
		put(w, key, "", "*", w+"-0", t0)
		add(history.Event{Kind: history.RestoreRead, Writer: w, Term: term, Invoke: tick(), Complete: tick(),
			Ops: append([]int64(nil), rec...)})
		token := w + "-0"
		for seq := int64(1); len(ev) < untilEvents; seq++ {
			ops := make([]int64, 0, opsPerSync)
			for i := 0; i < opsPerSync; i++ {
				op++
				ops = append(ops, op)
				add(history.Event{Kind: history.Op, Writer: w, Invoke: tick(), Ops: []int64{op}})
			}
			s0 := tick()
			tl, md := fmt.Sprintf("t/%s/%d.tlog", w, seq), fmt.Sprintf("t/metadata__%s_%d", w, seq)
			add(history.Event{Kind: history.StorePut, Writer: w, Key: tl, Invoke: s0, Complete: tick(), Token: "x"})
			put(w, tl, "", "", "x", s0)
			m0 := tick()
			add(history.Event{Kind: history.StorePut, Writer: w, Key: md, Invoke: m0, Complete: tick(), Token: "y"})
			put(w, md, "", "", "y", m0)
			c0 := tick()
			next := fmt.Sprintf("%s-%d", w, seq)
			add(history.Event{Kind: history.StorePutIfMatch, Writer: w, Key: key, Invoke: c0, Complete: tick(), Token: next,
				Detail: "if-match " + token})
			put(w, key, token, "", next, c0)
			add(history.Event{Kind: history.CAS, Writer: w, Term: term, Key: key, Invoke: c0, Complete: now, Seq: seq, Token: next})
			token = next
			add(history.Event{Kind: history.Ack, Writer: w, Term: term, Key: key, Invoke: c0, Complete: tick(), Seq: seq, Ops: ops})
			add(history.Event{Kind: history.Sync, Writer: w, Term: term, Invoke: s0, Complete: now, Ops: ops})
			rec = append(rec, ops...)
		}
	}
	serve("a", 5, "p/fence__9223372036854775802", n/2)
	add(history.Event{Kind: history.StoreDeleteMany, Writer: "b", Key: "p/fence__9223372036854775802", Invoke: now,
		Complete: now + time.Millisecond})
	lid++
	led = append(led, history.LedgerEntry{ID: lid, Writer: "b", Method: "POST", Query: "delete=", Time: now,
		Done: now + time.Millisecond, Forwarded: true, Status: 200, Delivered: true})
	serve("b", 6, "p/fence__9223372036854775801", n-3)
	add(history.Event{Kind: history.CAS, Writer: "a", Term: 5, Key: "p/fence__9223372036854775802", Invoke: tick(),
		Complete: tick(), Outcome: history.FencedOut})
	add(history.Event{Kind: history.Fenced, Writer: "a", Term: 5, Invoke: tick(), Complete: now, Err: "superseded"})
	return Input{Events: ev, Ledger: led, Final: Final{Recovered: rec, AuditTerm: 7},
		Expect: Expect{Fenced: []string{"a"}, MinAcked: 1000}}
}

func TestSynthRunPasses(t *testing.T) {
	r := Check(synthRun(20_000))
	if r.Verdict != Pass {
		t.Fatalf("got %s: %s", r.Verdict, r.Narrative)
	}
}

// BenchmarkCheck judges runs of growing size; ns/event should stay flat (linear growth).
func BenchmarkCheck(b *testing.B) {
	for _, n := range []int{250_000, 500_000, 1_000_000} {
		in := synthRun(n)
		b.Run(fmt.Sprintf("events=%d", len(in.Events)), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := Check(in); r.Verdict != Pass {
					b.Fatalf("got %s: %s", r.Verdict, r.Narrative)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(len(in.Events)), "ns/event")
		})
	}
}
