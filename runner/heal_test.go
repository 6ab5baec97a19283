package runner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// Once every fault healed the copies must settle and serve (expect.serves_after_heal): the
// bench gives each active copy an op and waits. A source whose revert succeeded but that
// never lifts its block stays relocating for good and fails ServesAfterHeal, where the correct
// source acknowledges the op it was given. A source whose handoff answer is lost after the
// target served must not wait for good on a target that crashed before it could: it gives up,
// reverts and serves again.
func TestServesAfterHealOnTheSimulatedStack(t *testing.T) {
	// The two schedules share their cast, traffic and expectation; only the steps differ.
	schedule := func(name, steps string) string {
		return "name: " + name + `
duration: 1s
writers:
  - {id: a, role: primary, term: 3}
  - {id: t, role: standby}
traffic: {clients: 2, rate: 200/s, sync_every: 10ops, sync_interval: 40ms}
steps:
` + steps + `expect:
  verdict: pass
  serves_after_heal: true
`
	}
	blocked := schedule("heal-blocked", `  - after: {writer: a, event: acked, count: 2}
    relocate: {writer: a, target: t, abort: before-target-writes, lose_handoff: true}
`)
	crashed := schedule("heal-target-crashed", `  - after: {writer: a, event: acked, count: 2}
    relocate: {writer: a, target: t, abort: after-target-acks}
  - after: {writer: t, event: hydrated}
    crash: t
`)
	// A copy recovering (frozen once its engine opened) while its source relocates and then
	// crashes: the recovery starts over from the target, and the source's grant at the term
	// passed to the target with the chain, so the crashed source does not count as promoted
	// after the target, and the recovery finishes.
	recovery := strings.Replace(schedule("heal-recovery-from-target", `  - after: {writer: a, event: acked, count: 2}
    recover: {writer: c, from: a}
  - after: {writer: c, event: engine-opened}
    pause: c
  - after: {writer: c, event: engine-opened}
    relocate: {writer: a, target: t}
  - after: {writer: t, event: acked, count: 2}
    crash: a
  - after: {writer: t, event: acked, count: 4}
    resume: c
`), "  - {id: t, role: standby}\n", "  - {id: t, role: standby}\n  - {id: c, role: standby}\n", 1)
	for _, c := range []struct {
		yaml, variant string
		want          checker.Verdict
		stuck, state  string // the writer recorded stuck ("" for none) and the state it is in
	}{
		{blocked, "correct", checker.Pass, "", ""},
		{blocked, "resume-stays-blocked", checker.Fail, "a", "relocating"},
		{crashed, "correct", checker.Pass, "", ""},
		{recovery, "correct", checker.Pass, "", ""},
	} {
		sc, err := scenarios.Parse("heal.yaml", []byte(c.yaml), scenarios.Options{Variants: variants()})
		if err != nil {
			t.Fatal(err)
		}
		t.Run(sc.Name+"/"+c.variant, func(t *testing.T) {
			e := &exploration{o: ExploreOptions{Variant: c.variant, Prefix: "x/"}, dir: t.TempDir()}
			res := e.run(context.Background(), env.NewSim(0), sc, 3)
			if res.Verdict != c.want {
				t.Fatalf("verdict %s, want %s: %v", res.Verdict, c.want, res.Result.Reasons)
			}
			if c.want == checker.Fail && !slices.Contains(violatedBy(res), checker.ServesAfterHeal) {
				t.Fatalf("ServesAfterHeal not among the failed invariants %v", violatedBy(res))
			}
			var heal, probedAndAcked bool
			acked := map[int64]bool{}
			for _, ev := range res.Events {
				if ev.Kind == history.Ack {
					for _, op := range ev.Ops {
						acked[op] = true
					}
				}
			}
			stuck := ""
			for _, ev := range res.Events {
				switch {
				case ev.Kind == history.Heal:
					heal = true
				case heal && ev.Kind == history.Op && ev.Outcome != history.Fail:
					probedAndAcked = probedAndAcked || acked[ev.Ops[0]]
				case ev.Kind == history.Stuck:
					stuck = ev.Writer
					if !strings.Contains(ev.Detail, c.state) {
						t.Errorf("stuck in %q, want %s", ev.Detail, c.state)
					}
				}
			}
			if !heal || stuck != c.stuck {
				t.Fatalf("heal recorded: %v; stuck: %q, want %q", heal, stuck, c.stuck)
			}
			if c.want == checker.Pass && !probedAndAcked {
				t.Fatalf("no copy was given an op after the heal and acknowledged it")
			}
		})
	}
}

// A copy recovering from an equal-term twin that took the chain back from a copy granted
// after it (found by exploration, seed 9508): the copy it took the chain from synced and was
// fenced, but the source synced past it on the term's key, so the recovery finishes.
func TestARecoveryFromATwinThatTookTheChainBackFinishes(t *testing.T) {
	sc, err := scenarios.LoadFile("testdata/twin-recovery-after-takeback.yaml", scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	e := &exploration{o: ExploreOptions{Prefix: "x/"}, dir: t.TempDir()}
	res := e.run(context.Background(), env.NewSim(0), sc, sc.Seed)
	if res.Verdict != checker.Pass {
		t.Fatalf("verdict %s, want pass: %v", res.Verdict, res.Result.Reasons)
	}
	recovered := false
	for _, ev := range res.Events {
		recovered = recovered || ev.Writer == "c" && ev.Kind == history.RestoreRead && ev.Outcome == history.OK
	}
	if !recovered {
		t.Fatal("c never finished its recovery")
	}
}

// A relocation whose handoff message is never sent (held for an abort, or lost, and its source
// crashed while it waited for the answer) returns its target to standby: ServesAfterHeal
// waits for targets, and a target left reserved would be Stuck.
func TestATargetWhoseMessageNeverComesStandsBy(t *testing.T) {
	for _, file := range []string{"held-handoff-source-crash.yaml", "lost-handoff-message-source-crash.yaml"} {
		sc, err := scenarios.LoadFile("testdata/"+file, scenarios.Options{Variants: variants()})
		if err != nil {
			t.Fatal(err)
		}
		e := &exploration{o: ExploreOptions{Prefix: "x/"}, dir: t.TempDir()}
		res := e.run(context.Background(), env.NewSim(0), sc, sc.Seed)
		if res.Verdict != checker.Pass {
			t.Fatalf("%s: verdict %s, want pass: %v", file, res.Verdict, res.Result.Reasons)
		}
		crashed, heal := false, false
		for _, ev := range res.Events {
			crashed = crashed || ev.Writer == "a" && ev.Kind == history.Crash
			heal = heal || ev.Kind == history.Heal
		}
		if !crashed || !heal {
			t.Fatalf("%s: the source crashed: %v, the heal recorded: %v; want both", file, crashed, heal)
		}
	}
}
