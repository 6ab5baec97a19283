package runner

import (
	"context"
	"slices"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// The scheduled end falls while the source waits for the answer to a handoff that was lost
// (the answer timeout, 2 s, is longer than the whole schedule): the traffic runs on until the
// source has reverted and acknowledged again, so expect.serving is shown (pass), where stopping
// the clients on time would leave a revert after the traffic and nothing to judge
// (inconclusive). The same schedule with a source that never lifts its block fails; with a
// target that adopts the late handoff message blindly, the traffic runs on until the source,
// whose chain was taken, has written its fence again and been fenced (NoSpuriousFencing),
// rather than stopping on an ack the source made before the target took the chain.
func TestTrafficRunsUntilTheExpectedCopyServes(t *testing.T) {
	const yaml = `name: overtime
duration: 1s
writers:
  - {id: a, role: primary, term: 3}
  - {id: t, role: standby}
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 40ms}
steps:
  - after: {writer: a, event: acked, count: 2}
    relocate: {writer: a, target: t, abort: before-target-writes, lose_handoff: true}
expect:
  verdict: pass
  serving: a
`
	sc, err := scenarios.Parse("overtime.yaml", []byte(yaml), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		variant string
		want    checker.Verdict
		failed  string
	}{{"correct", checker.Pass, ""}, {"resume-stays-blocked", checker.Fail, checker.HandoffResolves},
		{"target-claims-blindly", checker.Fail, checker.NoSpuriousFencing}} {
		t.Run(c.variant, func(t *testing.T) {
			e := &exploration{o: ExploreOptions{Variant: c.variant, Prefix: "x/"}, dir: t.TempDir()}
			res := e.run(context.Background(), env.NewSim(0), sc, 3)
			if res.Verdict != c.want || c.failed != "" && !slices.Contains(violatedBy(res), c.failed) {
				t.Fatalf("verdict %s, want %s with %q failed: %v", res.Verdict, c.want, c.failed, res.Result.Reasons)
			}
			var revert, ackAfter, end = int64(-1), false, res.Input.Expect.TrafficEnd
			for _, ev := range res.Events {
				switch {
				case ev.Writer == "a" && ev.Kind == history.Revert && ev.Outcome == history.OK:
					revert = int64(ev.Complete)
				case ev.Writer == "a" && ev.Kind == history.Ack && revert >= 0 && int64(ev.Complete) > revert:
					ackAfter = true
				}
			}
			if revert < 0 || int64(end) <= revert || int64(end) < int64(sc.Duration) {
				t.Fatalf("revert at %d, traffic end %d: the source must revert before the traffic ends, past the scheduled %s",
					revert, end, sc.Duration)
			}
			if c.variant != "target-claims-blindly" && ackAfter != (c.variant == "correct") {
				t.Fatalf("%s: acknowledged after its revert: %v", c.variant, ackAfter)
			}
		})
	}
}
