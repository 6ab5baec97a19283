package explore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/scenarios"
)

const target = "NoAckedWriteLoss"

// tenSteps is a loadable scenario with ten steps, two of which (a promote and a lost answer
// on a fence write) make up the failure the fake judges look for.
func tenSteps(t *testing.T) *scenarios.Scenario {
	t.Helper()
	at := func(ms int) (string, time.Duration) { return scenarios.TriggerAt, time.Duration(ms) * time.Millisecond }
	mk := func(ms int, a scenarios.Action, pr scenarios.Params, window time.Duration) scenarios.Step {
		st := scenarios.Step{Action: a, Params: pr, For: window}
		st.Trigger, st.At = at(ms)
		return st
	}
	rule := func(name, key string, act faults.Action, status int) faults.Rule {
		return faults.Rule{Name: name, Method: "PUT", Key: key, Nth: 3, Count: 2, Action: act, Status: status}
	}
	steps := []scenarios.Step{
		mk(200, scenarios.Latency, scenarios.Params{Writer: "a", Delay: 80 * time.Millisecond}, 300*time.Millisecond),
		mk(300, scenarios.Partition, scenarios.Params{Writer: "a", Mode: "blackhole"}, 400*time.Millisecond),
		mk(500, scenarios.Reset, scenarios.Params{Writer: "a"}, 100*time.Millisecond),
		mk(700, scenarios.HTTP, scenarios.Params{Writer: "a", Rule: rule("tlog-503", "*.tlog", faults.SyntheticStatus, 503)}, 0),
		mk(900, scenarios.Refresh, scenarios.Params{Writer: "a"}, 0),
		mk(1000, scenarios.HTTP, scenarios.Params{Writer: "a", Rule: rule("lost-cas", "*fence__*", faults.DropResponse, 0)}, 0),
		mk(1100, scenarios.Pause, scenarios.Params{Writer: "a"}, 200*time.Millisecond),
		mk(1300, scenarios.GC, scenarios.Params{Writer: "a"}, 0),
		mk(1500, scenarios.OneWay, scenarios.Params{Writer: "a"}, 100*time.Millisecond),
	}
	promote := scenarios.Step{Trigger: scenarios.TriggerAfter, Action: scenarios.Promote,
		After:  &scenarios.EventTrigger{Writer: "a", Event: "acked", Count: 4, Delay: 30 * time.Millisecond},
		Params: scenarios.Params{Writer: "b", Term: 6}}
	steps = append(steps[:4], append([]scenarios.Step{promote}, steps[4:]...)...)
	sc := &scenarios.Scenario{Name: "explore-99", Seed: 99, Duration: 3 * time.Second, Protocol: "correct",
		Writers: []scenarios.Writer{{ID: "a", Role: "primary", Term: 5}, {ID: "b", Role: "standby"}, {ID: "c", Role: "standby"}},
		Traffic: scenarios.Traffic{Clients: 4, Rate: 300, SyncEvery: 20, SyncInterval: 50 * time.Millisecond},
		Steps:   steps, Expect: scenarios.Expect{Verdict: "pass", FaultsMustFire: "none", MaxTimeToFence: time.Second,
			MaxTimeToAck: time.Second}}
	parsed, err := reparse(sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(parsed.Steps) != 10 {
		t.Fatalf("want 10 steps, got %d", len(parsed.Steps))
	}
	return parsed
}

// bug is the fake failure: a lost answer on a fence write and a promotion, both present.
func bug(sc *scenarios.Scenario) bool {
	lost, promoted := false, false
	for _, st := range sc.Steps {
		r := st.Params.Rule
		lost = lost || (st.Action == scenarios.HTTP && r.Action == faults.DropResponse && strings.Contains(r.Key, "fence__"))
		promoted = promoted || st.Action == scenarios.Promote
	}
	return lost && promoted
}

func deterministic(calls *int) Judge {
	return func(_ context.Context, sc *scenarios.Scenario) ([]string, error) {
		*calls++
		if bug(sc) {
			return []string{"FencedTerminal", target}, nil
		}
		return []string{"FencedTerminal"}, nil
	}
}

func TestShrinkKeepsExactlyTheFailingSteps(t *testing.T) {
	calls := 0
	out, stats, err := Shrink(context.Background(), tenSteps(t), target, deterministic(&calls), ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 2 || !bug(out) {
		t.Fatalf("want the promote and the lost fence answer, got %d steps:\n%s", len(out.Steps), out.Raw)
	}
	if stats.StepsBefore != 10 || stats.StepsAfter != 2 || stats.Runs != calls || calls > 400 {
		t.Fatalf("stats %+v, judge calls %d", stats, calls)
	}
	if len(out.Writers) != 2 || out.Traffic.Clients != 1 || out.Traffic.Rate >= 300 {
		t.Errorf("counts not lowered: writers %v, traffic %+v", out.Writers, out.Traffic)
	}
	if r := out.Steps[1].Params.Rule; out.Steps[1].Action != scenarios.HTTP || r.Count != 1 || r.Nth != 1 {
		t.Errorf("rule not weakened to its first match once: %+v", r)
	}
	if !strings.HasPrefix(out.Description, "Found by exploration (seed 99, variant correct): ") {
		t.Errorf("description %q", out.Description)
	}
	if out.Expect.Verdict != "fail" || len(out.Expect.Violated) != 1 || out.Expect.Violated[0] != target ||
		out.Expect.MaxTimeToFence != time.Second || out.Expect.MaxTimeToAck != time.Second {
		t.Errorf("expect %+v: want the violation and the bound it was judged by", out.Expect)
	}
	if _, err := scenarios.Parse("regression.yaml", out.Raw, scenarios.Options{Variants: variantNames()}); err != nil {
		t.Fatalf("the shrunk scenario does not load: %v\n%s", err, out.Raw)
	}
}

func TestShrinkWeakensWhatRemains(t *testing.T) {
	sc := tenSteps(t)
	needsWindow := func(_ context.Context, sc *scenarios.Scenario) ([]string, error) {
		for _, st := range sc.Steps {
			if st.Action == scenarios.Partition && st.For >= 100*time.Millisecond {
				return []string{target}, nil
			}
		}
		return nil, nil
	}
	out, _, err := Shrink(context.Background(), sc, target, needsWindow, ShrinkOptions{Tries: 1,
		Describe: func(*scenarios.Scenario) string { return "a refused path for 100ms loses writes." }})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 1 {
		t.Fatalf("want one step, got:\n%s", out.Raw)
	}
	st := out.Steps[0]
	if st.Action != scenarios.Partition || st.Params.Mode != "refuse" || st.For != 100*time.Millisecond || st.At != 10*time.Millisecond {
		t.Errorf("want a refusing partition for 100ms at 10ms, got %s %s for %v at %v", st.Action, st.Params.Mode, st.For, st.At)
	}
	if out.Duration != 1110*time.Millisecond {
		t.Errorf("duration %v, want a second past the last step (1.11s)", out.Duration)
	}
	if !strings.HasSuffix(out.Description, ": a refused path for 100ms loses writes.") {
		t.Errorf("description %q", out.Description)
	}
}

func TestShrinkWithAFlakyJudge(t *testing.T) {
	calls := 0
	// The failure shows on three runs of four, and a harness error on every seventh run.
	flaky := func(_ context.Context, sc *scenarios.Scenario) ([]string, error) {
		calls++
		if calls%7 == 0 {
			return nil, errors.New("store died")
		}
		if bug(sc) && calls%4 != 0 {
			return []string{target}, nil
		}
		return nil, nil
	}
	out, stats, err := Shrink(context.Background(), tenSteps(t), target, flaky, ShrinkOptions{Tries: 3})
	if err != nil {
		t.Fatal(err)
	}
	if !bug(out) || len(out.Steps) >= 10 {
		t.Fatalf("flaky shrink lost the failure or kept everything (%d steps):\n%s", len(out.Steps), out.Raw)
	}
	if stats.Runs != calls {
		t.Fatalf("stats say %d runs, the judge ran %d times", stats.Runs, calls)
	}
}

func TestShrinkRespectsItsBudget(t *testing.T) {
	calls := 0
	out, stats, err := Shrink(context.Background(), tenSteps(t), target, deterministic(&calls), ShrinkOptions{MaxRuns: 9})
	if err != nil {
		t.Fatal(err)
	}
	if calls > 9 || stats.Runs != calls {
		t.Fatalf("budget 9, judge ran %d times (stats %d)", calls, stats.Runs)
	}
	if !bug(out) || out.Expect.Verdict != "fail" {
		t.Fatalf("result lost the failure:\n%s", out.Raw)
	}
}

func TestShrinkHonoursCancellation(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	judge := func(ctx context.Context, sc *scenarios.Scenario) ([]string, error) {
		calls++
		if calls == 5 {
			cancel()
		}
		return []string{target}, nil
	}
	out, stats, err := Shrink(ctx, tenSteps(t), target, judge, ShrinkOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	if calls != 5 || stats.Runs != 5 || out == nil {
		t.Fatalf("judge ran %d times after the cancel at 5 (stats %d, result %v)", calls, stats.Runs, out != nil)
	}
}

func TestShrinkCountsJudgeErrorsAsNotFailing(t *testing.T) {
	broken := func(context.Context, *scenarios.Scenario) ([]string, error) {
		return []string{target}, errors.New("port taken")
	}
	out, stats, err := Shrink(context.Background(), tenSteps(t), target, broken, ShrinkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Steps) != 10 || stats.Runs == 0 {
		t.Fatalf("a judge that only errs shrank the scenario to %d steps in %d runs", len(out.Steps), stats.Runs)
	}
}

// TestShrinkSettlesOnAReliableCandidate: the failure shows every time while a's pause pins the
// race and every other time without it. A shrink judging each candidate once drops the pause
// by luck; settling replays the smallest candidate, sees it miss, and walks back to the
// smallest kept one that fails 20 runs in a row, which still holds the pause.
func TestShrinkSettlesOnAReliableCandidate(t *testing.T) {
	calls := 0
	pinned := func(_ context.Context, sc *scenarios.Scenario) ([]string, error) {
		calls++
		if !bug(sc) {
			return nil, nil
		}
		for _, st := range sc.Steps {
			if st.Action == scenarios.Pause {
				return []string{target}, nil
			}
		}
		if calls%2 == 1 {
			return []string{target}, nil
		}
		return nil, nil
	}
	loose, _, err := Shrink(context.Background(), tenSteps(t), target, pinned, ShrinkOptions{Tries: 1})
	if err != nil {
		t.Fatal(err)
	}
	hasPause := func(sc *scenarios.Scenario) bool {
		for _, st := range sc.Steps {
			if st.Action == scenarios.Pause {
				return true
			}
		}
		return false
	}
	if hasPause(loose) {
		t.Fatalf("the unsettled shrink was meant to drop the pause by luck:\n%s", loose.Raw)
	}
	calls = 0
	out, stats, err := Shrink(context.Background(), tenSteps(t), target, pinned, ShrinkOptions{Tries: 1, Settle: 20})
	if err != nil {
		t.Fatal(err)
	}
	if !bug(out) || !hasPause(out) {
		t.Fatalf("settled shrink is not the pinned failure:\n%s", out.Raw)
	}
	if stats.SettleHits != 20 || stats.Backtracked == 0 || stats.SettleRuns > 200 || stats.StepsAfter != len(out.Steps) {
		t.Fatalf("stats %+v", stats)
	}
}
