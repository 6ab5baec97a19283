package runner

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/outcome"
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
	sc, e := simCell(t, "paused-while-promoting.yaml", yaml)
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

// A primary whose claim never succeeds (every listing of the fence keys answered 500 for the
// whole run) retries its promotion on the clock. On the virtual clock the cell ends at its
// bound in scenario time, the scenario's duration and a minute: before, its retries drove
// scenario time on for hours until the real deadline a minute and a half later, and a
// mutant of the protocol that never claims cost every schedule that long.
func TestEndlessPromotionEndsOnScenarioTime(t *testing.T) {
	const yaml = `name: never-claims
duration: 2s
writers:
  - {id: a, role: primary, term: 5}
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 50ms}
steps:
  - at: 0s
    http:
      writer: a
      name: fence-listing-fails
      match: {method: GET, key: "*fence__"}
      action: status
      status: 500
`
	sc, e := simCell(t, "never-claims.yaml", yaml)
	res := e.run(context.Background(), env.NewSim(0), sc, 1)
	if res.Verdict == checker.Fail {
		t.Fatalf("verdict %s (%s), want no failure: nothing was acknowledged", res.Verdict, res.Error)
	}
	claims := 0
	var last time.Duration
	for _, ev := range res.Events {
		if ev.Writer == "a" && ev.Kind == history.Claim {
			claims++
		}
		last = max(last, ev.Complete)
	}
	if bound := sc.Duration + time.Minute + settleTimeout; claims < 10 || last > bound {
		t.Fatalf("%d claims, the last event at %v of scenario time: want the claim retried until the cell's bound, "+
			"and nothing after %v", claims, last, bound)
	}
	t.Logf("verdict %s; %d claims; the last event at %v of scenario time", res.Verdict, claims, last)
}

// A panic in the initial promotions ends the cell as a harness error naming it, at once: the
// cell does not wait for promotions that will never report (it used to stand still until
// the exploration abandoned the schedule, three minutes later).
func TestPanicInInitialPromotionsEndsTheCell(t *testing.T) {
	defer guard.SetTestHook(func(name string) {
		if name == "the initial promotions" {
			panic("injected into the initial promotions")
		}
	})()
	const yaml = `name: steady
duration: 2s
writers:
  - {id: a, role: primary, term: 5}
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 50ms}
`
	sc, e := simCell(t, "steady.yaml", yaml)
	ended := make(chan *outcome.CellResult, 1)
	go func() { ended <- e.run(context.Background(), env.NewSim(0), sc, 1) }()
	select {
	case res := <-ended:
		if res.Verdict != checker.Error || !strings.Contains(res.Error, "injected into the initial promotions") {
			t.Fatalf("verdict %s (%s), want a harness error naming the panic", res.Verdict, res.Error)
		}
	case <-time.After(time.Minute):
		t.Fatal("the cell did not end after its initial promotions panicked")
	}
}

// An initial promotion failed by a request rule that answered in the store's place (here a
// misdirected read-back after the create's answer was lost) is an outcome the checker judges, not a harness error: the fault is the schedule's, and the
// protocol must come through it (here by failing the promotion, so nothing is acknowledged).
// The rules are a later incarnation's (a2 restarts a on its node), armed from the start: a's
// own requests meet them.
func TestInitialPromotionFailedByARuleIsJudged(t *testing.T) {
	const yaml = `name: claim-answered-by-a-rule
duration: 1s
writers:
  - {id: a, role: primary, term: 5}
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 50ms}
steps:
  - at: 500ms
    crash: a
  - at: 600ms
    restart: {writer: a, as: a2, term: 6}
  - at: 0s
    http:
      writer: a2
      name: loses-the-create
      match: {key: "*fence__?*", nth: 1, count: 1}
      action: drop-response
  - at: 0s
    http:
      writer: a2
      name: misdirects-the-read-back
      match: {method: GET, key: "*fence__?*", nth: 1, count: 1}
      action: misdirect
`
	sc, e := simCell(t, "claim-answered-by-a-rule.yaml", yaml)
	res := e.run(context.Background(), env.NewSim(0), sc, 1)
	failed := false
	for _, ev := range res.Events {
		failed = failed || ev.Writer == "a" && ev.Kind == history.Promote && ev.Outcome != history.OK
	}
	if res.Verdict == checker.Error || res.Verdict == checker.Fail || !failed {
		t.Fatalf("verdict %s (%s), a's promotion failed: %v; want the failed promotion judged, not failed",
			res.Verdict, res.Error, failed)
	}
}

// simCell parses the scenario yaml (named name) and an exploration of the correct protocol
// to run it in, on the simulated stack.
func simCell(t *testing.T, name, yaml string) (*scenarios.Scenario, *exploration) {
	t.Helper()
	sc, err := scenarios.Parse(name, []byte(yaml), scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	return sc, &exploration{o: ExploreOptions{Variant: "correct", Prefix: "x/"}, dir: t.TempDir()}
}
