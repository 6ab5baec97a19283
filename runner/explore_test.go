package runner

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/explore"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/reports"
	"github.com/fencebench/fencebench/scenarios"
)

// exploreSim explores on the simulated stack from seed 1 and returns the exploration's folder.
func exploreSim(t testing.TB, variant string, schedules int, first bool) string {
	t.Helper()
	out := t.TempDir()
	if _, err := Explore(context.Background(), ExploreOptions{Out: out, ID: "x", Env: env.NewSim(0), Variant: variant,
		Seed: 1, Schedules: schedules, StopAtFirst: first, Replays: 5, Shrink: 1}); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(out, "x")
}

// The correct protocol survives a few hundred generated schedules on the simulated stack,
// every one judged, and the exploration says what it exercised.
func TestExploreCorrectProtocol(t *testing.T) {
	t.Parallel() // beside the tests that wait on a real store
	dir := exploreSim(t, "", 300, false)
	x, err := reports.ReadExploration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if x.Schedules != 300 || x.Failed != 0 || x.Errors != 0 || x.Passed+x.Inconclusive != 300 {
		t.Fatalf("schedules %d: %d pass, %d fail, %d inconclusive, %d error (%v; %v)", x.Schedules, x.Passed, x.Failed,
			x.Inconclusive, x.Errors, x.ErrorSamples, x.Failures)
	}
	if x.Passed < 200 {
		t.Fatalf("only %d of 300 schedules passed: %v", x.Passed, x.InconclusiveWhy)
	}
	for _, phase := range []string{"claim", "seal", "sync", "cas", "transfer", "handoff", "gc"} {
		if x.Coverage.PhaseSeen[phase] == 0 {
			t.Errorf("no schedule reached phase %s: %v", phase, x.Coverage.PhaseSeen)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "explore.html")); err != nil {
		t.Fatal(err)
	}
}

// A broken variant falls to generated schedules alone; the failure is shrunk to a scenario
// the loader accepts, no longer than the schedule it came from, kept as found, and replayed.
func TestExploreKillsVariants(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	for _, v := range []string{"restore-before-claim", "no-sweep", "conflict-is-fenced", "no-seq", "revert-with-fresh-token"} {
		t.Run(v, func(t *testing.T) {
			dir := exploreSim(t, v, 600, true)
			x, err := reports.ReadExploration(dir)
			if err != nil {
				t.Fatal(err)
			}
			if x.Failed == 0 || len(x.Failures) == 0 {
				t.Fatalf("%s survived %d schedules", v, x.Schedules)
			}
			f := x.Failures[0]
			if f.Target == "" || !slices.Contains(f.Invariants, f.Target) || f.ShrunkSteps > f.Steps || f.Replays != 5 {
				t.Fatalf("failure %+v", f)
			}
			raw, err := os.ReadFile(filepath.Join(dir, f.Scenario))
			if err != nil {
				t.Fatal(err)
			}
			sc, err := scenarios.Parse(f.Scenario, raw, scenarios.Options{})
			if err != nil {
				t.Fatalf("the shrunk scenario does not load: %v\n%s", err, raw)
			}
			if sc.Expect.Verdict != "fail" || !slices.Contains(sc.Expect.Violated, f.Target) {
				t.Fatalf("the shrunk scenario does not state its violation: %+v", sc.Expect)
			}
			if _, err := os.Stat(filepath.Join(dir, f.FoundCell, "report.html")); err != nil {
				t.Fatalf("the failing run as found was not kept: %v", err)
			}
		})
	}
}

// Stopping at the first failure means the first one whose shrunk scenario replays: a race
// that replays now and then is kept and listed, and the exploration goes on from the next
// schedule (running again those the stop cut short) until a failure replays on every replay.
// cas-concurrent-with-metadata loses writes through an unpinned race, whose early finds often
// replay only sometimes.
func TestExploreFirstMeansFirstThatReplays(t *testing.T) {
	t.Parallel() // waits on scenario time more than it computes: beside the other such tests
	dir := exploreSim(t, "cas-concurrent-with-metadata", 2000, true)
	x, err := reports.ReadExploration(dir)
	if err != nil {
		t.Fatal(err)
	}
	var shrunk []int
	for i, f := range x.Failures {
		if f.Replays > 0 {
			shrunk = append(shrunk, i)
		}
	}
	if len(shrunk) == 0 {
		t.Fatalf("no failure shrunk and replayed in %d schedules: %+v", x.Schedules, x.Failures)
	}
	last := x.Failures[shrunk[len(shrunk)-1]]
	if last.ReplayHits != last.Replays || x.Stopped != "first failure" {
		t.Fatalf("stopped %q after a failure that replayed %d/%d", x.Stopped, last.ReplayHits, last.Replays)
	}
	for _, i := range shrunk[:len(shrunk)-1] {
		if f := x.Failures[i]; f.ReplayHits == f.Replays {
			t.Fatalf("went on past failure %d (schedule %d), which replayed %d/%d", i+1, f.Index, f.ReplayHits, f.Replays)
		}
	}
	if x.Resumed != len(shrunk)-1 || x.FirstFailure != x.Failures[0].Index {
		t.Fatalf("resumed %d times for %d shrunk failures; first failure %d, listed first %d", x.Resumed, len(shrunk),
			x.FirstFailure, x.Failures[0].Index)
	}
	t.Logf("first failure at schedule %d, first replaying one at %d after %d resumptions", x.FirstFailure, last.Index, x.Resumed)
}

// Replay on the simulated stack: the seed fixes the schedule, the traffic's choices and the
// fault plan, not the goroutines' interleaving. So a replay is judged by what it shows: the
// verdict and the violated invariants are identical, and so is the protocol's story, the
// sequence of each writer's protocol steps and their outcomes (promote, claim, restore-read,
// fenced, crash, restart, transfer, handoff, adopt, revert, stand-down). What may differ:
// every time (Invoke, Complete, ledger Time and Done), event and ledger IDs, how many ops the
// traffic submitted and acknowledged (a slot the CPU missed is skipped) and therefore the
// syncs, CAS steps, acks, store calls and the tokens and seqs that count them.
//
// One more thing may differ in a generated schedule that mixes timed steps with event
// triggers: which of two racing triggers fires first, since the scaled clock is the part of
// the run the seed does not fix (seed 7 promotes c after a's eighth ack and d at 630 ms; on a
// loaded machine d's takeover sometimes fences a before that ack, and c is never promoted).
// For it the verdict and the violated invariants must be identical, and the story is compared
// only for the catalogue's scenarios, whose triggers do not race.
func TestReplayOnSimIsJudgedTheSame(t *testing.T) {
	sc, err := explore.Generate(7, explore.GenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		sc      *scenarios.Scenario
		variant string
	}{{sc, ""}}
	for _, name := range []string{"partitioned-primary", "relocation-aborted-late"} {
		cat, err := scenarios.Resolve([]string{name}, scenarios.Options{Variants: variants()})
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, struct {
			sc      *scenarios.Scenario
			variant string
		}{cat[0], ""})
	}
	cases = append(cases, struct {
		sc      *scenarios.Scenario
		variant string
	}{cases[1].sc, "no-sweep"})
	for _, c := range cases {
		t.Run(c.sc.Name+"/"+firstNonEmpty(c.variant, "correct"), func(t *testing.T) {
			var want string
			for i := range 10 {
				e := &exploration{o: ExploreOptions{Variant: firstNonEmpty(c.variant, "correct"), Prefix: "x/"}, dir: t.TempDir()}
				res := e.run(context.Background(), env.NewSim(0), c.sc, 42)
				if res.Verdict == checker.Error {
					t.Fatalf("replay %d: %s", i, res.Error)
				}
				got := string(res.Verdict) + " " + strings.Join(violatedBy(res), ",") + "\n"
				if c.sc.Name != sc.Name {
					got += story(res.Events)
				}
				if i == 0 {
					want = got
					continue
				}
				if got != want {
					t.Fatalf("replay %d differs:\n%s\nfirst:\n%s\nscenario:\n%s", i, got, want, c.sc.Raw)
				}
			}
		})
	}
}

// story is the protocol steps of a history, per writer, in order, with their outcomes.
func story(evs []history.Event) string {
	keep := map[history.Kind]bool{history.Promote: true, history.Claim: true, history.RestoreRead: true,
		history.Fenced: true, history.Crash: true, history.Restart: true, history.Transfer: true, history.Handoff: true,
		history.Adopt: true, history.Revert: true, history.StandDown: true}
	per := map[string]string{}
	var writers []string
	for _, e := range evs {
		if !keep[e.Kind] || e.Writer == "auditor" {
			continue
		}
		if _, ok := per[e.Writer]; !ok {
			writers = append(writers, e.Writer)
		}
		per[e.Writer] += string(e.Kind) + ":" + string(e.Outcome) + " "
	}
	slices.Sort(writers)
	out := ""
	for _, w := range writers {
		out += w + ": " + per[w] + "\n"
	}
	return out
}

// BenchmarkExploreSim measures the simulated stack's throughput, checker included: schedules
// per second of wall time (the target is 100/s on two cores).
func BenchmarkExploreSim(b *testing.B) {
	start := time.Now()
	exploreSim(b, "", b.N, false)
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "schedules/s")
}

// N shards with one seed and budget run the schedules of one exploration between them, each
// once: shard K takes the indices i with i mod N = K.
func TestExploreShardsSplitTheSchedules(t *testing.T) {
	total := 0
	for k := 0; k < 3; k++ {
		out := t.TempDir()
		x, err := Explore(context.Background(), ExploreOptions{Out: out, ID: "x", Env: env.NewSim(0), Seed: 1,
			Schedules: 31, Shard: &ShardSpec{K: k, N: 3}, Shrink: -1, Variant: "restore-before-claim"})
		if err != nil {
			t.Fatal(err)
		}
		want := 10
		if k == 0 {
			want = 11
		}
		if x.Schedules != want {
			t.Fatalf("shard %d/3 ran %d schedules, want %d", k, x.Schedules, want)
		}
		if x.FirstFailure == 0 || (x.FirstFailure-1)%3 != k {
			t.Fatalf("shard %d/3: first failing schedule %d is not one of its own", k, x.FirstFailure)
		}
		total += x.Schedules
	}
	if total != 31 {
		t.Fatalf("the shards ran %d schedules, want 31", total)
	}
	if _, err := Explore(context.Background(), ExploreOptions{Out: t.TempDir(), Env: env.NewSim(0), Schedules: 3, Shard: &ShardSpec{K: 3, N: 3}}); err == nil {
		t.Fatal("shard 4/3 accepted")
	}
}

// A failure found on the simulated stack is shrunk and confirmed on a real MinIO through
// Toxiproxy and the HTTP fault proxy.
func TestExploreConfirmsOnMinIO(t *testing.T) {
	srv := testenv.MinIO(t)
	out := t.TempDir()
	x, err := Explore(context.Background(), ExploreOptions{Out: out, ID: "x", Env: env.NewSim(0), Variant: "restore-before-claim",
		Seed: 1, Schedules: 300, StopAtFirst: true, Replays: 3, Shrink: 1, Prefix: testenv.Prefix(t),
		ConfirmStack: "local", Confirm: func(context.Context) (env.Env, func(), error) { return env.Local{Local: srv}, func() {}, nil }})
	if err != nil {
		t.Fatal(err)
	}
	if len(x.Failures) == 0 {
		t.Fatalf("restore-before-claim survived %d schedules", x.Schedules)
	}
	f := x.Failures[0]
	if f.Confirmed != "reproduced" || f.ConfirmCell == "" {
		res, _ := os.ReadFile(filepath.Join(out, "x", f.ConfirmCell, "result.json"))
		t.Fatalf("confirmation on MinIO: %q (%s)\nshrunk scenario:\n%s\nlast confirming run:\n%s", f.Confirmed, f.ConfirmCell, f.YAML, res)
	}
	if _, err := os.Stat(filepath.Join(out, "x", f.ConfirmCell, "report.html")); err != nil {
		t.Fatal(err)
	}
}

// stalledClaims are claims held in their final listing, after their verifying read, while a
// twin at the same term acts; each names the writers whose history shows the stall happened
// as scripted, or the test would prove nothing.
var stalledClaims = []struct {
	file  string
	shows func(evs []history.Event) bool
}{
	// The stalled claim (d) completes after its twin (c) took the object over and re-adopted
	// it; c acknowledges after that, and d, whose restore point is then c's lineage, is fenced
	// when its promotion verifies the seal (had it served, its re-adoption would be refused).
	{"testdata/twin-stalled-claim.yaml", func(evs []history.Event) bool {
		dSeal, cReadopt, cLastAck := at(evs, "d", history.Claim, "seal", history.OK), at(evs, "c", history.Claim, "readopt", history.OK), time.Duration(0)
		for _, ev := range evs {
			if ev.Kind == history.Ack && ev.Writer == "c" {
				cLastAck = max(cLastAck, ev.Invoke)
			}
		}
		dOut := max(at(evs, "d", history.Promote, "", history.FencedOut), at(evs, "d", history.Claim, "readopt", history.FencedOut))
		return dSeal > 0 && cReadopt > 0 && cReadopt < dSeal && cLastAck > dSeal && dOut > dSeal
	}},
	// The stalled claim (c) took b's object over by arbitration and then found term 9 in its
	// listing; b's re-adoption was refused before d claimed term 9.
	{"testdata/twin-overtaken-then-superseded.yaml", func(evs []history.Event) bool {
		bFenced, cGaveUp, dSeal := at(evs, "b", history.Claim, "readopt", history.FencedOut), at(evs, "c", history.Claim, "seal", history.FencedOut),
			at(evs, "d", history.Claim, "seal", history.OK)
		return bFenced > 0 && dSeal > bFenced && cGaveUp > dSeal
	}},
	// The stalled claim (b) completes after its twin (c) took the object over and
	// acknowledged; b's promotion, its restore point c's lineage, is fenced at its verify,
	// and c crashes after acknowledging.
	{"testdata/twin-crash-after-overtake.yaml", func(evs []history.Event) bool {
		bSeal, cReadopt, bOut := at(evs, "b", history.Claim, "seal", history.OK), at(evs, "c", history.Claim, "readopt", history.OK),
			at(evs, "b", history.Promote, "", history.FencedOut)
		cAcked, cCrash := false, time.Duration(0)
		for _, ev := range evs {
			cAcked = cAcked || ev.Kind == history.Ack && ev.Writer == "c" && ev.Invoke < bSeal
			if ev.Kind == history.Crash && ev.Writer == "c" {
				cCrash = ev.Invoke
			}
		}
		return bSeal > 0 && cReadopt > 0 && cReadopt < bSeal && cAcked && bOut > bSeal && cCrash > 0
	}},
}

// at is the completion of w's first event of kind k with detail d and outcome o, 0 if none.
func at(evs []history.Event, w string, k history.Kind, d string, o history.Outcome) time.Duration {
	for _, ev := range evs {
		if ev.Writer == w && ev.Kind == k && ev.Detail == d && ev.Outcome == o {
			return ev.Complete
		}
	}
	return 0
}

// A claim that stalls in its final listing while its twin acts is judged by what the store
// did, not by when the claim returned: a twin that took the object over and acknowledges is
// the only owner though the stalled claim returned after its re-adoption, and a twin whose
// arbitration took a copy's object justifies that copy's fence though its own claim then
// gave way to a higher term. On the simulated stack and on MinIO alike.
func TestStalledTwinClaims(t *testing.T) {
	srv := testenv.MinIO(t)
	for _, c := range stalledClaims {
		sc, err := scenarios.LoadFile(c.file, scenarios.Options{Variants: variants()})
		if err != nil {
			t.Fatal(err)
		}
		for _, stack := range []struct {
			name string
			env.Env
		}{{"sim", env.NewSim(0)}, {"local", env.Local{Local: srv}}} {
			t.Run(sc.Name+"/"+stack.name, func(t *testing.T) {
				e := &exploration{o: ExploreOptions{Variant: "correct", Prefix: testenv.Prefix(t)}, dir: t.TempDir()}
				res := e.run(context.Background(), stack.Env, sc, 1)
				if res.Verdict != checker.Pass {
					t.Fatalf("verdict %s: %s %s", res.Verdict, res.Error, res.Result.Narrative)
				}
				if !c.shows(res.Events) {
					t.Fatalf("the stall did not happen as scripted:\n%s", story(res.Events))
				}
			})
		}
	}
}

// A recovery refuses a source that an equal-term twin superseded, even once the twin crashed:
// the twin's acknowledged ops are not in that source's snapshot. Before, c recovered from a
// after b (a's twin) had acknowledged and crashed, and RecoverySeesAcked failed (found by
// exploration: a guided schedule stopping the twin right after its sync). On the simulated
// stack, where the schedule plays out as scripted: c's recovery from a is refused.
func TestRecoveryRefusesAnOvertakenSource(t *testing.T) {
	sc, err := scenarios.LoadFile("testdata/recovery-from-overtaken-source.yaml", scenarios.Options{Variants: variants()})
	if err != nil {
		t.Fatal(err)
	}
	e := &exploration{o: ExploreOptions{Variant: "correct", Prefix: testenv.Prefix(t)}, dir: t.TempDir()}
	res := e.run(context.Background(), env.NewSim(0), sc, 1)
	if res.Verdict != checker.Pass {
		t.Fatalf("verdict %s: %s %s", res.Verdict, res.Error, res.Result.Narrative)
	}
	refused, bAcked := false, false
	for _, ev := range res.Events {
		refused = refused || ev.Writer == "c" && ev.Kind == history.RestoreRead && ev.Outcome == history.Fail &&
			strings.Contains(ev.Err, "b was promoted after a")
		bAcked = bAcked || ev.Writer == "b" && ev.Kind == history.Ack
	}
	if !refused || !bAcked {
		t.Fatalf("the schedule did not play out as scripted (b acked: %v, c's recovery from a refused: %v):\n%s", bAcked, refused, story(res.Events))
	}
}

// An exploration whose first hopelessErrors schedules all end in harness errors is hopeless
// and stops; one schedule judged before that keeps it going, as errors among judged schedules
// are the exception its report lists.
func TestExplorationOfHarnessErrorsAloneStops(t *testing.T) {
	for _, judged := range []bool{false, true} {
		e := &exploration{x: &outcome.Exploration{}}
		if judged {
			e.x.Inconclusive = 1
		}
		for i := range hopelessErrors {
			if e.isHopeless() {
				t.Fatalf("judged %v: hopeless after %d errors, want %d", judged, i, hopelessErrors)
			}
			e.note(i, uint64(i), "harness: auditor: the claim never succeeds")
		}
		if e.isHopeless() == judged {
			t.Errorf("judged %v: hopeless %v after %d errors", judged, e.isHopeless(), hopelessErrors)
		}
	}
}
