package runner

import (
	"context"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// A primary paused by an event of its own initial promotion is resumed by a timed step of
// the plan: the plan runs while the promotion waits at the writer's gate, so the primary
// promotes once resumed and serves. (The initial promotions used to run before the plan
// started: such a schedule stood still until the cell's deadline, in real time even on the
// simulated stack, and its primary never served.)
func TestPauseDuringInitialPromotionLetsThePlanRun(t *testing.T) {
	const yaml = `name: paused-while-promoting
duration: 3s
writers:
  - {id: a, role: primary, term: 5}
  - {id: b, role: standby}
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 50ms}
steps:
  - after: {writer: a, event: claimed}
    pause: a
  - at: 1s
    resume: a
expect:
  verdict: pass
`
	sc, err := scenarios.Parse("paused-while-promoting.yaml", []byte(yaml), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	e := &exploration{o: ExploreOptions{Variant: "correct", Prefix: "x/"}, dir: t.TempDir()}
	start := time.Now()
	res := e.run(context.Background(), env.NewSim(0), sc, 1)
	took := time.Since(start)
	if res.Verdict != checker.Pass {
		t.Fatalf("verdict %s (%s), want pass", res.Verdict, res.Error)
	}
	var paused, resumed, promoted time.Duration = -1, -1, -1
	acks := 0
	for _, ev := range res.Events {
		if ev.Writer != "a" {
			continue
		}
		switch {
		case ev.Kind == history.Pause && paused < 0:
			paused = ev.Invoke
		case ev.Kind == history.Resume && resumed < 0:
			resumed = ev.Invoke
		case ev.Kind == history.Promote && ev.Outcome == history.OK && promoted < 0:
			promoted = ev.Complete
		case ev.Kind == history.Ack && resumed >= 0:
			acks++
		}
	}
	if paused < 0 || resumed < 900*time.Millisecond || promoted < resumed || acks == 0 {
		t.Fatalf("a paused at %v, resumed at %v, promoted at %v, %d acks after: want a pause, the resume at 1s, "+
			"the promotion ending after it and acks (real time %v)", paused, resumed, promoted, acks, took)
	}
	t.Logf("a paused at %v, resumed at %v, promoted at %v, %d acks; %v of real time", paused, resumed, promoted, acks, took)
}
