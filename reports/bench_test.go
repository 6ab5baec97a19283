package reports

import (
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

// bigCell is a 30-second run of three writers with n events: client ops, syncs with their
// store calls, CAS and acks, segment work, flapping faults, L7 rule firings, a takeover at
// 15s and a counterexample.
func bigCell(n int) *outcome.CellResult {
	rng := rand.New(rand.NewPCG(1, 2))
	var l eventLog
	var ledger []history.LedgerEntry
	const span = 30 * time.Second
	writers := []string{"a", "b", "c"}
	op := int64(0)
	pending := map[string][]int64{}
	seq := map[string]int64{}
	var ce []int64
	for step := 0; len(l.ev) < n; step++ {
		t := time.Duration(int64(len(l.ev)) * int64(span) / int64(n))
		w := writers[step%len(writers)]
		switch r := rng.IntN(100); {
		case r < 55:
			op++
			pending[w] = append(pending[w], op)
			l.add(history.Event{Invoke: t, Writer: w, Kind: history.Op, Ops: []int64{op}})
		case r < 85:
			kinds := []history.Kind{history.StoreGet, history.StorePut, history.StorePutIfMatch, history.StoreList, history.StoreDelete}
			e := history.Event{Invoke: t, Complete: t + time.Duration(rng.IntN(20))*time.Millisecond, Writer: w,
				Kind: kinds[rng.IntN(len(kinds))], Key: fmt.Sprintf("run/idx/0/translog/tlog-%d", step)}
			switch rng.IntN(50) {
			case 0:
				e.Outcome, e.Err = history.Ambiguous, "context deadline exceeded"
			case 1:
				e.Outcome, e.Status, e.Code = history.Fail, 412, "PreconditionFailed"
			}
			l.add(e)
			if rng.IntN(20) == 0 {
				ledger = append(ledger, history.LedgerEntry{ID: int64(len(ledger) + 1), Time: t, Done: t + time.Millisecond, Writer: w,
					Method: "PUT", Key: e.Key, Rule: "drop-some", Action: "drop-response", Forwarded: true, Status: 200})
			}
		case r < 95:
			seq[w]++
			oc := history.OK
			if rng.IntN(40) == 0 {
				oc = history.Ambiguous
			}
			l.add(history.Event{Invoke: t, Complete: t + 5*time.Millisecond, Writer: w, Kind: history.Sync, Ops: pending[w], Outcome: oc})
			l.add(history.Event{Invoke: t, Complete: t + 4*time.Millisecond, Writer: w, Kind: history.CAS, Key: fenceA, Term: 5, Seq: seq[w], Token: "x", Outcome: oc})
			if oc == history.OK && len(pending[w]) > 0 {
				id := l.add(history.Event{Invoke: t, Complete: t + 6*time.Millisecond, Writer: w, Kind: history.Ack, Key: fenceA, Term: 5, Seq: seq[w], Ops: pending[w]})
				if len(ce) < 3 && t > 15*time.Second {
					ce = append(ce, id)
				}
				pending[w] = nil
			}
		default:
			kinds := []history.Kind{history.Hydrate, history.Publish, history.Collect, history.Hydrate, history.Hydrate}
			l.add(history.Event{Invoke: t, Complete: t + 2*time.Millisecond, Writer: w, Kind: kinds[rng.IntN(len(kinds))], Key: fmt.Sprintf("run/idx/0/segments/seg-%d", step)})
		}
		if step%5000 == 0 {
			l.add(history.Event{Invoke: t, Writer: w, Kind: history.FaultStart, Detail: "flap-" + w})
			l.add(history.Event{Invoke: t + 700*time.Millisecond, Writer: w, Kind: history.FaultEnd, Detail: "flap-" + w})
		}
		if step == n/4 {
			l.add(history.Event{Invoke: t, Complete: t + 20*time.Millisecond, Writer: "b", Kind: history.Claim, Key: fenceB, Term: 6})
			l.add(history.Event{Invoke: t + 30*time.Millisecond, Writer: "a", Kind: history.Fenced, Term: 5})
		}
	}
	res := checker.Result{Verdict: checker.Fail, Raw: checker.Fail, Events: len(l.ev), Invariants: []checker.InvariantResult{
		{Name: checker.NoAckedWriteLoss, Status: checker.Fail, Counterexample: ce, Narrative: "lost"},
	}}
	return &outcome.CellResult{ID: "big", Scenario: "big", Variant: "correct", Verdict: checker.Fail, Result: res, Events: l.ev, Ledger: ledger}
}

func BenchmarkCellPage100k(b *testing.B) {
	c := bigCell(100_000)
	var size int
	b.ReportAllocs()
	for b.Loop() {
		page, err := renderCell("bench", c)
		if err != nil {
			b.Fatal(err)
		}
		size = len(page)
	}
	b.ReportMetric(float64(size), "bytes/page")
}
