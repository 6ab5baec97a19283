package reports

import (
	"fmt"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

const (
	fenceA = "run/idx/0/translog/metadata/fence__9223372036854775802"
	fenceB = "run/idx/0/translog/metadata/fence__9223372036854775801"
)

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// eventLog builds a history with increasing IDs.
type eventLog struct{ ev []history.Event }

func (l *eventLog) add(e history.Event) int64 {
	e.ID = int64(len(l.ev) + 1)
	if e.Complete < e.Invoke {
		e.Complete = e.Invoke
	}
	if e.Outcome == "" {
		e.Outcome = history.OK
	}
	l.ev = append(l.ev, e)
	return e.ID
}

// takeoverCell is a correct-protocol cell in which a is partitioned, b takes over at a higher
// term, and a zombie ack by a is lost: NoAckedWriteLoss and MutualExclusion fail.
func takeoverCell() *outcome.CellResult {
	var l eventLog
	op := int64(0)
	submit := func(w string, at time.Duration) int64 {
		op++
		l.add(history.Event{Invoke: at, Writer: w, Kind: history.Op, Ops: []int64{op}})
		return op
	}
	l.add(history.Event{Invoke: 0, Complete: ms(10), Writer: "a", Kind: history.Claim, Key: fenceA, Term: 5, Token: "a0", Detail: "seal"})
	l.add(history.Event{Invoke: ms(2), Complete: ms(8), Writer: "a", Kind: history.StorePutIfAbsent, Key: fenceA, Token: "a0"})
	seq := int64(0)
	for i := 0; i < 4; i++ {
		t := ms(15 + i*20)
		o1, o2 := submit("a", t), submit("a", t+ms(1))
		seq++
		l.add(history.Event{Invoke: t + ms(4), Complete: t + ms(6), Writer: "a", Kind: history.StorePut, Key: fmt.Sprintf("run/idx/0/translog/tlog-%d", seq)})
		l.add(history.Event{Invoke: t + ms(5), Complete: t + ms(9), Writer: "a", Kind: history.StorePutIfMatch, Key: fenceA, Token: fmt.Sprintf("a%d", seq)})
		l.add(history.Event{Invoke: t + ms(5), Complete: t + ms(9), Writer: "a", Kind: history.CAS, Key: fenceA, Term: 5, Seq: seq, Token: fmt.Sprintf("a%d", seq)})
		l.add(history.Event{Invoke: t + ms(5), Complete: t + ms(10), Writer: "a", Kind: history.Ack, Key: fenceA, Term: 5, Seq: seq, Ops: []int64{o1, o2}})
	}
	l.add(history.Event{Invoke: ms(90), Writer: "a", Kind: history.FaultStart, Detail: "partition-a"})
	l.add(history.Event{Invoke: ms(95), Complete: ms(98), Writer: "a", Kind: history.StoreGet, Key: "run/idx/0/segments/refs", Outcome: history.Ambiguous, Err: "context deadline exceeded"})
	l.add(history.Event{Invoke: ms(100), Complete: ms(140), Writer: "b", Kind: history.Promote, Term: 6})
	claimB := l.add(history.Event{Invoke: ms(100), Complete: ms(120), Writer: "b", Kind: history.Claim, Key: fenceB, Term: 6, Token: "b0", Detail: "seal"})
	l.add(history.Event{Invoke: ms(102), Complete: ms(104), Writer: "b", Kind: history.StorePutIfAbsent, Key: fenceB, Token: "b0"})
	l.add(history.Event{Invoke: ms(105), Complete: ms(107), Writer: "b", Kind: history.StorePutIfAbsent, Key: fenceB, Status: 412, Code: "PreconditionFailed", Outcome: history.Fail, Err: "precondition failed"})
	restore := l.add(history.Event{Invoke: ms(125), Complete: ms(130), Writer: "b", Kind: history.RestoreRead, Term: 6, Ops: []int64{1, 2, 3, 4, 5, 6, 7, 8}, Detail: "run/idx/0/translog/metadata/meta-4"})
	l.add(history.Event{Invoke: ms(131), Complete: ms(133), Writer: "b", Kind: history.Hydrate, Key: "run/idx/0/segments/seg-1", Term: 6})
	l.add(history.Event{Invoke: ms(134), Complete: ms(136), Writer: "b", Kind: history.Hydrate, Key: "run/idx/0/segments/seg-2", Term: 6, Outcome: history.Fail, Status: 404, Err: "listed file vanished"})
	zombieOp := submit("a", ms(132))
	zombieCAS := l.add(history.Event{Invoke: ms(140), Complete: ms(145), Writer: "a", Kind: history.CAS, Key: fenceA, Term: 5, Seq: 5, Token: "a5"})
	l.add(history.Event{Invoke: ms(141), Complete: ms(144), Writer: "a", Kind: history.StorePutIfMatch, Key: fenceA, Token: "a5"})
	zombieAck := l.add(history.Event{Invoke: ms(140), Complete: ms(147), Writer: "a", Kind: history.Ack, Key: fenceA, Term: 5, Seq: 5, Ops: []int64{zombieOp}})
	l.add(history.Event{Invoke: ms(150), Writer: "a", Kind: history.FaultEnd, Detail: "partition-a"})
	l.add(history.Event{Invoke: ms(155), Writer: "b", Kind: history.Pause})
	l.add(history.Event{Invoke: ms(175), Writer: "b", Kind: history.Resume})
	l.add(history.Event{Invoke: ms(160), Complete: ms(166), Writer: "a", Kind: history.CAS, Key: fenceA, Term: 5, Seq: 6, Token: "a5", Outcome: history.FencedOut})
	l.add(history.Event{Invoke: ms(167), Writer: "a", Kind: history.Fenced, Term: 5, Err: "fence key gone: superseded"})
	o := submit("b", ms(178))
	ambCAS := l.add(history.Event{Invoke: ms(180), Complete: ms(184), Writer: "b", Kind: history.CAS, Key: fenceB, Term: 6, Seq: 1, Token: "b1", Outcome: history.Ambiguous, Err: "connection reset"})
	l.add(history.Event{Invoke: ms(186), Complete: ms(190), Writer: "b", Kind: history.CAS, Key: fenceB, Term: 6, Seq: 1, Token: "b1"})
	l.add(history.Event{Invoke: ms(186), Complete: ms(192), Writer: "b", Kind: history.Ack, Key: fenceB, Term: 6, Seq: 1, Ops: []int64{o}})
	l.add(history.Event{Invoke: ms(195), Complete: ms(197), Writer: "b", Kind: history.Publish, Key: "run/idx/0/segments/refs"})
	l.add(history.Event{Invoke: ms(198), Complete: ms(199), Writer: "b", Kind: history.Collect, Key: "run/idx/0/segments/seg-0"})
	l.add(history.Event{Invoke: ms(300), Complete: ms(310), Writer: "auditor", Kind: history.Audit, Term: 7, Ops: []int64{1, 2, 3, 4, 5, 6, 7, 8, o}})

	ledger := []history.LedgerEntry{
		{ID: 1, Time: ms(2), Done: ms(8), Writer: "a", Method: "PUT", Key: fenceA, IfNoneMatch: "*", Forwarded: true, Status: 200, ETag: "a0", Delivered: true},
		{ID: 2, Time: ms(102), Done: ms(104), Writer: "b", Method: "PUT", Key: fenceB, IfNoneMatch: "*", Forwarded: true, Status: 200, ETag: "b0", Delivered: true},
		{ID: 3, Time: ms(106), Done: ms(108), Writer: "b", Method: "POST", Query: "delete=", Forwarded: true, Status: 200, Delivered: true},
		{ID: 4, Time: ms(141), Done: ms(144), Writer: "a", Method: "PUT", Key: fenceA, IfMatch: "a4", Forwarded: true, Status: 200, ETag: "a5", Delivered: true},
		{ID: 5, Time: ms(181), Done: ms(183), Writer: "b", Method: "PUT", Key: fenceB, IfMatch: "b0", Rule: "drop-cas-response", Action: "drop-response", Forwarded: true, Status: 200, ETag: "b1", Delivered: false},
		{ID: 6, Time: ms(187), Done: ms(189), Writer: "b", Method: "PUT", Key: fenceB, IfMatch: "b0", Rule: "drop-cas-response", Action: "drop-response", Forwarded: true, Status: 412, Code: "PreconditionFailed", Delivered: false},
		{ID: 7, Time: ms(196), Done: ms(196), Writer: "b", Method: "GET", Key: "run/idx/0/segments/refs", Rule: "slow-down", Action: "status", Delivered: true},
		{ID: 8, Time: ms(197), Done: ms(198), Writer: "b", Method: "GET", Query: "list-type=2&prefix=run%2F", Forwarded: true, Status: 200, Delivered: true},
	}

	res := checker.Result{
		Verdict: checker.Fail,
		Raw:     checker.Fail,
		Reasons: []string{
			"NoAckedWriteLoss failed: 1 op acknowledged but missing from the auditor's recovery (term 7)",
			"MutualExclusion failed: 1 ack by a writer that was no longer the owner",
		},
		Invariants: []checker.InvariantResult{
			{Name: checker.NoAckedWriteLoss, Status: checker.Fail, Guarantee: "every acknowledged op is in the auditor's recovered set",
				Explanation: "1 op acknowledged but missing from the auditor's recovery (term 7)", Violations: 1,
				Counterexample: []int64{zombieAck, claimB, restore, zombieCAS},
				Narrative:      fmt.Sprintf("op %d, acknowledged by a (term 5) at 0.147s, is missing from the auditor's recovery (term 7)", zombieOp)},
			{Name: checker.MutualExclusion, Status: checker.Fail, Guarantee: "one owner at a time",
				Explanation: "1 ack by a writer that was no longer the owner", Violations: 1,
				Counterexample: []int64{claimB, zombieCAS, zombieAck},
				Narrative:      "b (term 6) claimed at 0.120s; a (term 5) then invoked a CAS at 0.140s that was accepted"},
			{Name: checker.FencedTerminal, Status: checker.Pass, Guarantee: "a fenced writer stays fenced", Explanation: "1 writer fenced, none acted again"},
			{Name: checker.StoreLinearizable, Status: checker.Inconclusive, Guarantee: "the store is linearizable", Explanation: "search timed out", LedgerEntries: []int64{5, 6}},
		},
		Lost: []checker.LostWrite{{Op: zombieOp, Writer: "a", Term: 5, AckedAt: ms(147), AckEvent: zombieAck}},
		Liveness: checker.Liveness{
			Fenced:         []checker.FenceDelay{{Writer: "a", Term: 5, SupersededBy: "b", SupersededAt: ms(120), FencedAt: ms(167), Delay: ms(47)}},
			MaxTimeToFence: ms(47),
		},
		Attestation: []checker.FaultAttestation{
			{Name: "partition-a", Layer: "l4", Fired: true, Count: 1, First: ms(90)},
			{Name: "drop-cas-response", Layer: "l7", Fired: true, Count: 2, First: ms(181)},
		},
		Resolved:  checker.AmbiguityStats{Applied: 1, Events: []checker.Resolution{{Event: ambCAS, Outcome: checker.ResolvedApplied, Ledger: []int64{5}}}},
		Acked:     10,
		Events:    len(l.ev),
		Narrative: "a kept acknowledging after b claimed term 6; op 9 is lost",
	}
	return &outcome.CellResult{
		ID:          "partitioned-primary",
		Scenario:    "partitioned-primary",
		Description: "Primary a loses its path to the store while it keeps taking client writes; b is promoted at term 6.",
		Variant:     "correct",
		Seed:        42,
		Client:      "minio-go",
		Verdict:     checker.Fail,
		Result:      res,
		Duration:    1500 * time.Millisecond,
		Rerun:       "fencebench run --scenario partitioned-primary --variant correct --seed 42",
		Events:      l.ev,
		Ledger:      ledger,
		Files:       []string{"store.log", "result.json", "scenario.yaml", "history.jsonl", "ledger.jsonl"},
	}
}

// simpleCell is a cell with a short history and a hand-made result.
func simpleCell(id, scenario, variant string, kill bool, violates []string, verdict checker.Verdict, failed []string, reasons ...string) *outcome.CellResult {
	var l eventLog
	l.add(history.Event{Invoke: 0, Complete: ms(5), Writer: "a", Kind: history.Claim, Key: fenceA, Term: 1, Token: "t0"})
	l.add(history.Event{Invoke: ms(6), Writer: "a", Kind: history.Op, Ops: []int64{1}})
	l.add(history.Event{Invoke: ms(8), Complete: ms(12), Writer: "a", Kind: history.CAS, Key: fenceA, Term: 1, Seq: 1, Token: "t1"})
	l.add(history.Event{Invoke: ms(8), Complete: ms(13), Writer: "a", Kind: history.Ack, Key: fenceA, Term: 1, Seq: 1, Ops: []int64{1}})
	res := checker.Result{Verdict: verdict, Raw: checker.Pass, Reasons: reasons, Acked: 1, Events: len(l.ev)}
	for _, name := range checker.Invariants[:3] {
		st := checker.Pass
		for _, f := range failed {
			if f == name {
				st = checker.Fail
				res.Raw = checker.Fail
			}
		}
		ir := checker.InvariantResult{Name: name, Status: st, Explanation: "judged"}
		if st == checker.Fail {
			ir.Counterexample = []int64{4}
			ir.Narrative = name + " broke at the ack"
		}
		res.Invariants = append(res.Invariants, ir)
	}
	c := &outcome.CellResult{
		ID: id, Scenario: scenario, Variant: variant, Kill: kill, Violates: violates, Seed: 7, Client: "aws-sdk",
		Verdict: verdict, Result: res, Duration: 900 * time.Millisecond,
		Rerun:  fmt.Sprintf("fencebench run --scenario %s --variant %s --seed 7", scenario, variant),
		Events: l.ev, Files: []string{"scenario.yaml", "history.jsonl"},
	}
	if verdict == checker.Error {
		c.Error = "store died: connection refused"
		res.Error = ""
	}
	return c
}

// synthRun is a run with a failing correct cell (with takeover, fault window and
// counterexample), a killed and a surviving kill cell, a passing, an inconclusive and an
// errored cell.
func synthRun() *outcome.Summary {
	return &outcome.Summary{
		RunID:    "20260102-030405-abc",
		Started:  time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC),
		Duration: 42 * time.Second,
		Version:  "v0.1.0-test",
		Command:  "fencebench run --matrix --results results",
		Store:    store.Info{Endpoint: "http://127.0.0.1:9000", Server: "MinIO RELEASE.2025-01-01", Stack: "local", Bucket: "fencebench"},
		Prefix:   "run-abc/",
		Cells: []*outcome.CellResult{
			takeoverCell(),
			simpleCell("partitioned-primary--no-sweep", "partitioned-primary", "no-sweep", true, []string{checker.NoAckedWriteLoss},
				checker.Pass, []string{checker.NoAckedWriteLoss}),
			simpleCell("partitioned-primary--restore-before-claim", "partitioned-primary", "restore-before-claim", true, []string{checker.NoAckedWriteLoss},
				checker.Fail, nil, "variant survived: expected NoAckedWriteLoss to fail, it passed"),
			simpleCell("steady-state", "steady-state", "correct", false, nil, checker.Pass, nil),
			simpleCell("flaky-store", "flaky-store", "correct", false, nil, checker.Inconclusive, nil, "declared fault slow-down never fired"),
			simpleCell("lying-store", "lying-store", "correct", false, nil, checker.Error, nil),
		},
	}
}
