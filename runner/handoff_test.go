package runner

import (
	"context"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// A relocation with lose_handoff and no abort point loses the target's answer through the
// one fault model: the handoff fault is open on the source's link for the relocation, its
// start and end are in the history by the source and named after the step, the run attests
// that it fired, the handoff fails for the lost answer, and the protocol still passes (the target took over; the source's
// revert is refused and it stands down).
func TestLoseHandoffIsRecordedLikeEveryFault(t *testing.T) {
	const yaml = `name: lost-answer
duration: 3s
writers:
  - {id: a, role: primary, term: 3}
  - {id: t, role: standby}
traffic: {clients: 2, rate: 100/s, sync_every: 10ops, sync_interval: 40ms}
steps:
  - after: {writer: a, event: acked, count: 2}
    relocate: {writer: a, target: t, lose_handoff: true}
expect:
  verdict: pass
`
	sc, err := scenarios.Parse("lost-answer.yaml", []byte(yaml), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	name := sc.Steps[0].FaultName()
	e := &exploration{o: ExploreOptions{Variant: "correct", Prefix: "x/"}, dir: t.TempDir()}
	res := e.run(context.Background(), env.NewSim(0), sc, 3)
	if res.Verdict != checker.Pass {
		t.Fatalf("verdict %s, want pass: %v", res.Verdict, res.Result.Reasons)
	}
	var start, handoff, end int64 = -1, -1, -1
	for _, ev := range res.Events {
		switch {
		case ev.Kind == history.FaultStart && ev.Detail == name && ev.Writer == "a":
			start = ev.ID
		case ev.Kind == history.Handoff && ev.Writer == "a":
			if ev.Outcome != history.Fail || !strings.Contains(ev.Err, "handoff answer lost") {
				t.Fatalf("handoff %+v, want it failed for the lost answer", ev)
			}
			handoff = ev.ID
		case ev.Kind == history.FaultEnd && ev.Detail == name && ev.Writer == "a":
			end = ev.ID
		}
	}
	if start < 0 || handoff < 0 || end < 0 {
		t.Fatalf("fault start %d, handoff %d, fault end %d: want all three in the history", start, handoff, end)
	}
	if !(start < handoff && handoff < end) {
		t.Fatalf("fault start %d, handoff %d, fault end %d: want the handoff inside the fault's window", start, handoff, end)
	}
	// It is declared and attested like every fault.
	att := res.Result.Attestation
	if len(att) != 1 || att[0].Name != name || att[0].Layer != "protocol" || !att[0].Fired {
		t.Fatalf("attestation %+v, want %s (protocol) fired", att, name)
	}
}
