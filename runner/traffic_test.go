package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
)

// A cell with traffic reports what its clients did, and the counts agree with its history.
func TestCellCountsItsTraffic(t *testing.T) {
	const yaml = `name: counted-traffic
duration: 1s
writers:
  - {id: a, role: primary, term: 1}
  - {id: b, role: standby}
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 50ms}
steps:
  - at: 400ms
    crash: a
  - at: 500ms
    promote: {writer: b, term: 2}
`
	sc, e := simCell(t, "counted-traffic.yaml", yaml)
	res := e.run(context.Background(), env.NewSim(0), sc, 1)
	if res.Verdict != checker.Pass {
		t.Fatalf("verdict %s: %s %v", res.Verdict, res.Error, res.Result.Reasons)
	}
	tr := res.Traffic
	if tr == nil || tr.Accepted == 0 || tr.Sent != tr.Accepted+tr.Refused {
		t.Fatalf("traffic %+v: want ops accepted and sent = accepted + refused", tr)
	}
	var ok int64
	for _, ev := range res.Events {
		if ev.Kind == history.Op && ev.Outcome == history.OK {
			ok++
		}
	}
	if ok != tr.Accepted {
		t.Fatalf("the history holds %d accepted submissions, the clients counted %d", ok, tr.Accepted)
	}
}

// The runner refuses to judge a history that disagrees with the clients' counts.
func TestTrafficAgrees(t *testing.T) {
	evs := []history.Event{
		{Kind: history.Op, Outcome: history.OK, Ops: []int64{1}},
		{Kind: history.Op, Outcome: history.Fail, Ops: []int64{2}},
		{Kind: history.Sync, Outcome: history.OK},
		{Kind: history.Op, Outcome: history.OK, Ops: []int64{3}},
		{Kind: history.Heal},
		{Kind: history.Op, Outcome: history.OK, Ops: []int64{4}}, // the heal probe's own op
	}
	good := outcome.Traffic{Sent: 3, Accepted: 2, Refused: 1}
	if err := trafficAgrees(&good, evs); err != nil {
		t.Fatalf("agreeing counts refused: %v", err)
	}
	for name, bad := range map[string]outcome.Traffic{
		"an accepted op missing from the history": {Sent: 4, Accepted: 3, Refused: 1},
		"a refused op counted as accepted":        {Sent: 3, Accepted: 3, Refused: 0},
		"sent is not accepted plus refused":       {Sent: 4, Accepted: 2, Refused: 1},
		"the heal probe's op counted":             {Sent: 4, Accepted: 3, Refused: 1},
	} {
		err := trafficAgrees(&bad, evs)
		if err == nil || !strings.Contains(err.Error(), "the history holds 2 accepted and 1 refused") {
			t.Errorf("%s: %v", name, err)
		}
	}
}
