package explore

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

func TestGenerateParsesAndIsDeterministic(t *testing.T) {
	for seed := uint64(1); seed <= 5000; seed++ {
		o := GenOptions{Drives: seed%3 == 0}
		if seed%5 == 0 {
			o.Variant = unenforcedVariant
		}
		sc, err := Generate(seed, o)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		again, err := Generate(seed, o)
		if err != nil {
			t.Fatalf("seed %d, second draw: %v", seed, err)
		}
		if !bytes.Equal(sc.Raw, again.Raw) {
			t.Fatalf("seed %d drew two different schedules:\n%s\n---\n%s", seed, sc.Raw, again.Raw)
		}
		// The loaded scenario marshals back to the very text it was loaded from.
		if data, err := scenarios.Marshal(sc); err != nil || !bytes.Equal(data, sc.Raw) {
			t.Fatalf("seed %d: marshal of the loaded scenario differs (%v):\n%s\n---\n%s", seed, err, sc.Raw, data)
		}
		checkShape(t, seed, sc, o)
	}
}

// checkShape holds one generated scenario to what the generator promises.
func checkShape(t *testing.T, seed uint64, sc *scenarios.Scenario, o GenOptions) {
	t.Helper()
	fail := func(format string, a ...any) {
		t.Fatalf("seed %d: %s\n%s", seed, fmt.Sprintf(format, a...), sc.Raw)
	}
	if sc.Name != fmt.Sprintf("explore-%d", seed) || sc.Seed != seed {
		fail("name %q seed %d", sc.Name, sc.Seed)
	}
	if n := len(sc.Steps); n < 1 || n > maxSteps {
		fail("%d steps, want 1 to %d", n, maxSteps)
	}
	if n := len(sc.Writers); n < 1 || n > 4 {
		fail("%d writers, want 1 to 4", n)
	}
	if sc.Expect.Verdict != "pass" || sc.Expect.FaultsMustFire != "none" || sc.Expect.MinAcked != 0 {
		fail("expect %+v", sc.Expect)
	}
	for _, st := range sc.Steps {
		if st.Spec().Store && !o.Drives {
			fail("a store step without Drives: %s", st.Action)
		}
		if st.Params.Rule.Action == faults.StripConditions && (o.Variant != unenforcedVariant || !sc.Store.AllowUnenforced) {
			fail("strip-conditions for variant %q (allow_unenforced %v)", o.Variant, sc.Store.AllowUnenforced)
		}
		if st.At > sc.Duration || st.For > time.Second {
			fail("step %d at %v for %v outside the schedule", st.Index, st.At, st.For)
		}
		if st.After != nil && st.After.Delay > 2*time.Second {
			fail("step %d waits %v after its event", st.Index, st.After.Delay)
		}
	}
}

// stepKind names a step for the variety count: its fault kind, or its action.
func stepKind(st scenarios.Step) string {
	if st.Action == scenarios.HTTP {
		return httpKind(st.Params.Rule)
	}
	return string(st.Action)
}

func TestGenerateVariety(t *testing.T) {
	seen := map[string]int{}
	inline, after, at, twins, resumes := 0, 0, 0, 0, 0
	for seed := uint64(1); seed <= 2000; seed++ {
		o := GenOptions{Drives: seed%2 == 0}
		if seed%4 == 0 {
			o.Variant = unenforcedVariant
		}
		sc, err := Generate(seed, o)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, st := range sc.Steps {
			seen[stepKind(st)]++
			switch {
			case st.After != nil && st.After.Delay == 0 && st.Action == scenarios.HTTP:
				inline++
			case st.After != nil:
				after++
			default:
				at++
			}
			if st.Params.Twin {
				twins++
			}
			if st.Action == scenarios.Resume {
				resumes++
			}
		}
	}
	want := []string{"promote", "partition", "one-way", "latency", "reset", "flap", "pause", "resume", "crash",
		"restart", "relocate", "gc", "refresh", "recover", "drive-offline", "store-restart",
		"drop-response", "drop-request", "status-409", "status-500", "status-503", "delay", "duplicate",
		"fail-delete-keys", "strip-conditions"}
	for _, k := range want {
		if seen[k] == 0 {
			t.Errorf("no %s step over 2000 seeds (saw %v)", k, seen)
		}
	}
	if inline == 0 || twins == 0 || resumes == 0 {
		t.Errorf("inline rules %d, twin promotions %d, resumes %d: want each above 0", inline, twins, resumes)
	}
	if after <= at {
		t.Errorf("event triggers %d, time triggers %d: want mostly event triggers", after, at)
	}
}

func TestGenerateSwarmVaries(t *testing.T) {
	mixes := map[string]bool{}
	for seed := uint64(1); seed <= 200; seed++ {
		g := newGen(seed, GenOptions{}.normalized())
		g.drawSwarm()
		mixes[fmt.Sprint(g.weights)] = true
	}
	if len(mixes) < 150 {
		t.Errorf("200 seeds drew only %d distinct kind mixes", len(mixes))
	}
}

func TestGenerateHonoursOptions(t *testing.T) {
	for seed := uint64(1); seed <= 300; seed++ {
		sc, err := Generate(seed, GenOptions{MaxWriters: 1, Duration: time.Second, Variant: "no-sweep"})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if len(sc.Writers) != 1 || sc.Duration != time.Second || sc.Protocol != "no-sweep" {
			t.Fatalf("seed %d: writers %d, duration %v, protocol %q", seed, len(sc.Writers), sc.Duration, sc.Protocol)
		}
	}
	sc, err := Generate(7, GenOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if sc.Protocol != "correct" || sc.Duration != 3*time.Second {
		t.Fatalf("defaults: protocol %q, duration %v", sc.Protocol, sc.Duration)
	}
}

// Every shape is drawn over a couple of thousand seeds, and the shapes that promise something
// about the whole schedule keep it: handoff-resolves is a lone relocation (its transfer answer
// lost in some seeds) and names the copy that must end serving (the source after an early
// abort, the target otherwise), over a schedule long enough for an abort's answer timeout;
// held-fence-read holds a fence read of the standby it promotes first and promotes a second
// standby while that read is held: timed from the reader's start when the read is the one
// that verifies its claim (its "promoted" comes only after the hold), after its promotion
// when the read is its first re-adoption's.
func TestGenerateShapes(t *testing.T) {
	seen := map[string]int{}
	listings := map[int]int{}                // the held listing's Nth: the final listing, the sweep's
	stops := map[scenarios.Action]int{}      // how held-fence-read's overtaker stops after its sync
	fails := map[faults.Action]int{}         // how held-fence-read's held verifying read, or overtaken-seal's check, fails
	overtakes := map[bool]int{}              // overtaken-seal's overtaker: a twin (true) or a higher term
	handoffs := map[history.SignalKind]int{} // the source's or target's event overtaken-handoff's overtaker follows
	arbitrations := map[string]int{}         // twin-arbitration's superseded twin, or its rule's method and kind
	for seed := uint64(1); seed <= 4000; seed++ {
		g := newGen(seed, GenOptions{}.normalized())
		sc := g.scenario()
		seen[g.shapeOf]++
		switch g.shapeOf {
		case sHandoffResolves:
			if len(sc.Steps) > 3 || sc.Steps[0].Action != scenarios.Relocate || sc.Duration < handoffDuration {
				t.Fatalf("seed %d: %d steps, duration %v", seed, len(sc.Steps), sc.Duration)
			}
			pr := sc.Steps[0].Params
			want := pr.Target
			if pr.AbortAt == "before-target-writes" {
				want = pr.Writer
			}
			if sc.Expect.Serving != want {
				t.Fatalf("seed %d: abort %q, serving %q, want %q", seed, pr.AbortAt, sc.Expect.Serving, want)
			}
		case sHeldFenceRead:
			hold, first, second := sc.Steps[0], sc.Steps[1], sc.Steps[2]
			held := hold.Params.Rule
			var overtakes bool
			// A held listing is part of the promotion, as the verifying read is.
			verifying := held.Nth == 1 || held.Key == "*fence__"
			if held.Key == "*fence__" {
				listings[held.Nth]++
				if held.Nth == sweepListing && second.Params.Twin {
					t.Fatalf("seed %d: a twin overtakes a held sweep listing: it sweeps nothing", seed)
				}
			}
			switch {
			case verifying && hold.After != nil: // the verifying read: timed from the reader's own start
				a, b := hold.After, second.After
				overtakes = b != nil && b.Writer == a.Writer && b.Event == a.Event && b.Count == a.Count &&
					b.Delay > a.Delay && b.Delay-a.Delay < held.Delay
			case verifying:
				overtakes = second.After == nil && second.At > hold.At && second.At-hold.At < held.Delay
			default: // the first re-adoption's read, after the reader's promotion
				overtakes = second.After != nil && second.After.Writer == first.Params.Writer &&
					second.After.Event == "promoted" && second.After.Delay < held.Delay
			}
			if g.stopped {
				stop := sc.Steps[3]
				if stop.After == nil || stop.After.Event != history.SigSynced || stop.After.Writer != second.Params.Writer || stop.After.Count > 2 ||
					!slices.Contains([]scenarios.Action{scenarios.Crash, scenarios.Pause, scenarios.Promote}, stop.Action) ||
					stop.Action == scenarios.Promote && stop.Params.Term <= second.Params.Term {
					t.Fatalf("seed %d: the overtaker's stop %+v", seed, stop)
				}
				stops[stop.Action]++
			}
			if held.Action != faults.Delay {
				// A held verifying read that then fails: held as long, and only the verifying read.
				if held.Key != "*fence__?*" || held.Nth != 1 || held.Delay <= 0 ||
					held.Action != faults.SyntheticStatus && held.Action != faults.DropResponse {
					t.Fatalf("seed %d: a failing held read %+v", seed, held)
				}
				fails[held.Action]++
				held.Action = faults.Delay // judged below as the hold it also is
			}
			if hold.Action != scenarios.HTTP || held.Action != faults.Delay ||
				first.Action != scenarios.Promote || first.Params.Writer != hold.Params.Writer ||
				second.Action != scenarios.Promote || !overtakes {
				t.Fatalf("seed %d: not a held read overtaken: %+v", seed, sc.Steps)
			}
		case sOvertakenSeal:
			first, hold, second := sc.Steps[0], sc.Steps[1], sc.Steps[2]
			r := hold.Params.Rule
			if first.Action != scenarios.Promote || hold.Action != scenarios.HTTP || hold.Params.Writer != first.Params.Writer ||
				r.Key != "*/translog/metadata/metadata__" || r.Action != faults.Delay || r.Nth != 1 ||
				second.Action != scenarios.Promote || second.After == nil || second.After.Writer != first.Params.Writer ||
				second.After.Event != history.SigClaimed || !overtakerFirst(hold, second) ||
				second.Params.Twin != (second.Params.Term == first.Params.Term) || second.Params.Term < first.Params.Term {
				t.Fatalf("seed %d: not a seal overtaken while its restore listing is held: %+v", seed, sc.Steps[:3])
			}
			overtakes[second.Params.Twin]++
			if g.stopped {
				stops[sc.Steps[3].Action]++
			} else if len(sc.Steps) > 3 && sc.Steps[3].Params.Rule.Key == "*fence__?*" {
				fails[sc.Steps[3].Params.Rule.Action]++
			}
		case sOvertakenHandoff:
			rel, over := sc.Steps[0], sc.Steps[1]
			if over.Action == scenarios.HTTP {
				over = sc.Steps[2] // after the held transfer
			}
			if rel.Action != scenarios.Relocate || over.Action != scenarios.Promote || over.After == nil ||
				over.Params.Writer == rel.Params.Target || over.Params.Twin != (over.Params.Term == sc.Writers[0].Term) {
				t.Fatalf("seed %d: not a relocation overtaken: %+v", seed, sc.Steps)
			}
			handoffs[over.After.Event]++
			fallthrough
		case sTwinArbitration:
			if g.shapeOf == sTwinArbitration {
				rule, twin := sc.Steps[0], sc.Steps[1]
				if rule.Action != scenarios.HTTP || twin.Action != scenarios.Promote || !twin.Params.Twin ||
					twin.Params.Term != sc.Writers[0].Term || rule.Params.Writer != twin.Params.Writer {
					t.Fatalf("seed %d: not a twin's arbitration faulted: %+v", seed, sc.Steps)
				}
				if strings.HasPrefix(rule.Params.Rule.Name, "hold-twin-relist-") {
					over := sc.Steps[2]
					if rule.Params.Until == nil || rule.Params.Until.Writer != over.Params.Writer || over.Params.Term <= twin.Params.Term ||
						rule.Params.Rule.Key != "*fence__" || rule.Params.Rule.Nth != 3 {
						t.Fatalf("seed %d: the twin's final listing is not held until a higher term claimed: %+v", seed, sc.Steps)
					}
					arbitrations["superseded"]++
				} else {
					if rule.Params.Rule.Key != "*fence__?*" || rule.Params.Rule.Nth != 1 {
						t.Fatalf("seed %d: the rule misses the twin's arbitration: %+v", seed, rule.Params.Rule)
					}
					arbitrations[rule.Params.Rule.Method+" "+httpKind(rule.Params.Rule)]++
				}
			}
			fallthrough
		case sPendingPublish:
			if g.shapeOf == sPendingPublish {
				checkPendingPublish(t, seed, sc)
			}
			fallthrough
		default:
			if sc.Expect.Serving != "" {
				t.Fatalf("seed %d (shape %q) names %s to end serving", seed, g.shapeOf, sc.Expect.Serving)
			}
		}
	}
	for _, s := range shapeNames {
		if seen[s] < 10 {
			t.Errorf("shape %s drawn %d times in 4000 seeds (%v)", s, seen[s], seen)
		}
	}
	if fails[faults.SyntheticStatus] < 1 || fails[faults.DropResponse] < 1 || fails[faults.SyntheticStatus]+fails[faults.DropResponse] < 5 {
		t.Errorf("held-fence-read's verifying read failed after its hold: %v", fails)
	}
	if stops[scenarios.Crash] < 5 || stops[scenarios.Pause] < 5 || stops[scenarios.Promote] < 5 {
		t.Errorf("held-fence-read's and overtaken-seal's overtaker stopped after its sync: %v", stops)
	}
	if overtakes[true] < 10 || overtakes[false] < 5 {
		t.Errorf("overtaken-seal's overtakers: %v", overtakes)
	}
	if handoffs[history.SigDrained] < 5 || handoffs[history.SigTransferred] < 5 || handoffs[history.SigAcked] < 5 {
		t.Errorf("overtaken-handoff's overtakers followed %v", handoffs)
	}
	if arbitrations["superseded"] < 10 || arbitrations["PUT status-403"] < 3 || arbitrations["PUT status-412"] < 3 ||
		arbitrations["GET status-403"] < 3 {
		t.Errorf("twin-arbitration's faults: %v", arbitrations)
	}
	if listings[claimListing] < 10 || listings[sweepListing] < 10 {
		t.Errorf("held-fence-read held a claim's final listing in %d and its sweep's listing in %d of %d schedules",
			listings[claimListing], listings[sweepListing], seen[sHeldFenceRead])
	}
}

// never is a random source whose IntN(n) is always n-1.
type never struct{}

func (never) Uint64() uint64 { return math.MaxUint64 }

// Holding a claim's final listing or its sweep's listing instead of its verifying read is drawn
// from a stream of its own: a schedule that holds a listing is, but for that rule, the one the
// seed drew before (a held sweep listing is overtaken by a higher term where the seed drew a
// twin, so there the terms after it may move).
func TestGenerateListingHoldLeavesTheRestOfTheSeed(t *testing.T) {
	held := 0
	for seed := uint64(1); seed <= 3000; seed++ {
		g := newGen(seed, GenOptions{}.normalized())
		g.pairs, g.fails = rand.New(never{}), rand.New(never{}) // a pair copies the rule it twins: TestGeneratePairs
		sc := g.scenario()
		was := newGen(seed, GenOptions{}.normalized())
		was.stalls, was.pairs, was.fails = rand.New(never{}), rand.New(never{}), rand.New(never{})
		before := was.scenario()
		if len(sc.Steps) != len(before.Steps) {
			t.Fatalf("seed %d: %d steps, %d without the listing hold", seed, len(sc.Steps), len(before.Steps))
		}
		for i := range sc.Steps {
			r, b := &sc.Steps[i].Params.Rule, before.Steps[i].Params.Rule
			if !strings.HasPrefix(r.Name, "hold-final-listing-") && !strings.HasPrefix(r.Name, "hold-sweep-listing-") {
				continue
			}
			held++
			if b.Key != "*fence__?*" || b.Nth != 1 || r.Nth != claimListing && r.Nth != sweepListing {
				t.Fatalf("seed %d: the listing hold %+v replaced %+v", seed, *r, b)
			}
			r.Name, r.Key, r.Nth = b.Name, b.Key, b.Nth
			if sc.Steps[2].Params.Twin != before.Steps[2].Params.Twin {
				sc = before // the overtaker's term changed; the rule was compared above
			}
		}
		got, err := scenarios.Marshal(sc)
		if err != nil {
			t.Fatal(err)
		}
		want, err := scenarios.Marshal(before)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(want) {
			t.Fatalf("seed %d: the schedule changed beyond the held rule:\n%s\nwas:\n%s", seed, got, want)
		}
	}
	if held == 0 {
		t.Fatal("no schedule held a claim's final listing")
	}
}

// Some schedules fault the first reads of a file kind on a standby they promote or recover,
// from the start; the rule names the files, or for a metadata kind sometimes its listing
// (the exact prefix), never both; a 404 only on the .tlog files of a copy the schedule
// promotes and does not expect to serve; the rest of such a schedule is what the seed drew
// without it.
func TestGenerateReadFaults(t *testing.T) {
	kinds, hidden := map[string]int{}, 0
	for seed := uint64(1); seed <= 2000; seed++ {
		sc, err := Generate(seed, GenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var rf *scenarios.Step
		for i, st := range sc.Steps {
			if st.Action == scenarios.HTTP && strings.Contains(st.Params.Rule.Name, "-first-") && !strings.Contains(st.Params.Rule.Name, "-pair") {
				rf = &sc.Steps[i]
			}
		}
		if rf == nil {
			continue
		}
		r := rf.Params.Rule
		kinds[r.Key]++
		if rf.Trigger != scenarios.TriggerAt || rf.At != 0 || r.Method != "GET" || r.Nth != 1 {
			t.Fatalf("seed %d: read fault %+v, want a GET rule from the start on the first read", seed, *rf)
		}
		if strings.HasSuffix(r.Key, "metadata__*") {
			t.Fatalf("seed %d: read fault key %q also matches the prefix's listing", seed, r.Key)
		}
		reached := false
		for _, st := range sc.Steps {
			reached = reached || (st.Action == scenarios.Promote || st.Action == scenarios.Recover) && st.Params.Writer == rf.Params.Writer
		}
		if !reached {
			t.Fatalf("seed %d: read fault on %s, which the schedule neither promotes nor recovers:\n%s", seed, rf.Params.Writer, sc.Raw)
		}
		if r.Status == 404 {
			hidden++
			promoted := false
			for _, st := range sc.Steps {
				promoted = promoted || st.Action == scenarios.Promote && st.Params.Writer == rf.Params.Writer
			}
			if !strings.HasSuffix(r.Key, ".tlog") || !promoted || sc.Expect.Serving == rf.Params.Writer {
				t.Fatalf("seed %d: a 404 on %s for %s (serving %q), want only a promoted copy's .tlog files, never the copy that must serve:\n%s",
					seed, r.Key, rf.Params.Writer, sc.Expect.Serving, sc.Raw)
			}
		}
	}
	if hidden < 10 {
		t.Errorf("only %d of 2000 schedules hide a .tlog from a promotion's restore read", hidden)
	}
	if len(kinds) != 6 {
		t.Fatalf("read faults by key %v, want all four kinds of file and the two metadata listings", kinds)
	}
	for k, n := range kinds {
		if n < 10 {
			t.Errorf("only %d of 2000 schedules fault the first reads of %s", n, k)
		}
	}
}

// One schedule in three with a request rule gets a second rule whose window meets it: the same
// writer and trigger, the other method on the same kind of file (a listing's twin writes into
// the prefix it lists), firing at the first request it matches; some of them crash the writer
// right after. The pair is drawn from a stream of its own: without it the schedule is the one
// the seed drew before, step for step.
func TestGeneratePairs(t *testing.T) {
	pairs, crashes := 0, 0
	for seed := uint64(1); seed <= 2000; seed++ {
		now := newGen(seed, GenOptions{}.normalized())
		now.scripts = rand.New(never{})
		sc := now.scenario()
		was := newGen(seed, GenOptions{}.normalized())
		was.pairs, was.scripts = rand.New(never{}), rand.New(never{})
		before := was.scenario()
		if len(sc.Steps) == len(before.Steps) {
			continue
		}
		pairs++
		if n := len(sc.Steps) - len(before.Steps); n > 2 {
			t.Fatalf("seed %d: a pair added %d steps", seed, n)
		}
		for i := range before.Steps {
			if !reflect.DeepEqual(sc.Steps[i], before.Steps[i]) {
				t.Fatalf("seed %d: step %d changed with the pair:\n%+v\nwas\n%+v", seed, i, sc.Steps[i], before.Steps[i])
			}
		}
		p := sc.Steps[len(before.Steps)]
		r := p.Params.Rule
		if p.Action != scenarios.HTTP || !strings.Contains(r.Name, "-pair") || r.Nth != 1 || r.Count < 1 || r.Count > 2 {
			t.Fatalf("seed %d: the pair is %+v", seed, p)
		}
		twinned := slices.ContainsFunc(before.Steps, func(o scenarios.Step) bool {
			or := o.Params.Rule
			return o.Action == scenarios.HTTP && o.Params.Writer == p.Params.Writer && o.Trigger == p.Trigger &&
				o.At == p.At && reflect.DeepEqual(o.After, p.After) && !strings.EqualFold(or.Method, r.Method) &&
				strings.HasPrefix(r.Name, or.Name+"-pair") && strings.HasPrefix(r.Key, or.Key)
		})
		if !twinned {
			t.Fatalf("seed %d: the pair %+v twins no rule of the schedule:\n%s", seed, r, sc.Raw)
		}
		if len(sc.Steps) == len(before.Steps)+2 {
			c := sc.Steps[len(sc.Steps)-1]
			if c.Action != scenarios.Crash || c.Params.Writer != p.Params.Writer {
				t.Fatalf("seed %d: after the pair %+v", seed, c)
			}
			crashes++
		}
		if _, err := scenarios.Parse("pair.yaml", mustMarshal(t, sc), scenarios.Options{Variants: variantNames()}); err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
	}
	if pairs < 150 || crashes < pairs/5 {
		t.Fatalf("%d of 2000 schedules drew a pair, %d of them with a crash after", pairs, crashes)
	}
	t.Logf("%d of 2000 schedules drew a pair, %d with a crash after", pairs, crashes)
}

func mustMarshal(t *testing.T, sc *scenarios.Scenario) []byte {
	t.Helper()
	data, err := scenarios.Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// checkPendingPublish holds a pending-publish schedule to its shape: without clients, a
// recovery whose file fetches are held from its start, and, once it is hydrating, the
// primary's publication faulted for the refreshes that follow (500 for each of them, or one
// held or answer-lost publication) and a collection while the fetches are still held.
func checkPendingPublish(t *testing.T, seed uint64, sc *scenarios.Scenario) {
	t.Helper()
	var hold, fault *faults.Rule
	var holdAt, recoverAt *scenarios.EventTrigger
	var gc *scenarios.Step
	refreshes, reader := 0, ""
	for i, st := range sc.Steps {
		switch {
		case st.Action == scenarios.Recover && reader == "": // the shape's steps come first
			reader, recoverAt = st.Params.Writer, st.After
		case st.Action == scenarios.HTTP && strings.Contains(st.Params.Rule.Name, "-pair"): // a pair's twin (TestGeneratePairs)
		case st.Action == scenarios.HTTP && strings.HasPrefix(st.Params.Rule.Name, "hold-fetches-"):
			hold, holdAt = &sc.Steps[i].Params.Rule, st.After
		case st.Action == scenarios.HTTP && strings.HasPrefix(st.Params.Rule.Name, "pending-publish-"):
			fault = &sc.Steps[i].Params.Rule
		case st.Action == scenarios.Refresh && st.After != nil && st.After.Event == history.SigHydrating:
			refreshes++
		case st.Action == scenarios.GC && st.After != nil && st.After.Event == history.SigHydrating:
			gc = &sc.Steps[i]
		}
	}
	if sc.Traffic.Clients != 0 || hold == nil || fault == nil || gc == nil || reader == "" || refreshes == 0 ||
		recoverAt == nil || holdAt == nil || *recoverAt != *holdAt {
		t.Fatalf("seed %d: not a pending publication: %s", seed, sc.Raw)
	}
	if hold.Method != "GET" || hold.Key != "*/segments/data/*" || hold.Action != faults.Delay || gc.After.Delay >= hold.Delay ||
		gc.After.Writer != reader || gc.Params.Writer != "a" {
		t.Fatalf("seed %d: the collection at %v is not within the fetches' hold %+v", seed, gc.After.Delay, *hold)
	}
	switch fault.Action {
	case faults.SyntheticStatus:
		if fault.Status != 500 || fault.Count != refreshes {
			t.Fatalf("seed %d: publication fault %+v for %d refreshes", seed, *fault, refreshes)
		}
	case faults.Delay, faults.DropResponse:
		if fault.Count != 1 || refreshes != 1 {
			t.Fatalf("seed %d: %d publications may land while the fetches are held: %+v", seed, refreshes, *fault)
		}
	default:
		t.Fatalf("seed %d: publication fault %+v", seed, *fault)
	}
}

// TestCleanSchedulesJudgeBothBounds: a clean schedule (protocol steps only) is judged by the
// liveness bound and the acknowledgement bound; any other leaves both unchecked, since a
// fault may rightly slow a fence or an acknowledgement.
func TestCleanSchedulesJudgeBothBounds(t *testing.T) {
	clean := 0
	for seed := uint64(1); seed <= 300; seed++ {
		g := newGen(seed, GenOptions{}.normalized())
		sc := g.scenario()
		want := scenarios.Expect{}
		if g.clean {
			clean++
			want.MaxTimeToFence, want.MaxTimeToAck = cleanTimeToFence, cleanTimeToAck
		}
		if sc.Expect.MaxTimeToFence != want.MaxTimeToFence || sc.Expect.MaxTimeToAck != want.MaxTimeToAck {
			t.Fatalf("seed %d (clean %v): bounds %v and %v", seed, g.clean, sc.Expect.MaxTimeToFence, sc.Expect.MaxTimeToAck)
		}
	}
	if clean < 30 {
		t.Errorf("%d clean schedules in 300", clean)
	}
}

// overtakerFirst: a held restore listing lands after the overtaker moved: held past the
// overtake's delay, or until the overtaker's first sync.
func overtakerFirst(hold, overtake scenarios.Step) bool {
	if u := hold.Params.Until; u != nil {
		return u.Writer == overtake.Params.Writer && u.Event == history.SigSynced && u.Count == 1
	}
	return overtake.After.Delay < hold.Params.Rule.Delay
}

// Holds until another writer's protocol event are drawn, each on a writer's path waiting for a
// different writer, and survive the schedule's YAML (the replay reads what was drawn).
func TestGenerateHoldsUntilAnEvent(t *testing.T) {
	held := 0
	for seed := uint64(1); seed <= 300; seed++ {
		sc, err := Generate(seed, GenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		back, err := scenarios.Parse("replay.yaml", sc.Raw, scenarios.Options{Variants: variantNames()})
		if err != nil {
			t.Fatalf("seed %d: the schedule does not load back: %v", seed, err)
		}
		for i, st := range sc.Steps {
			u := st.Params.Until
			if u == nil {
				continue
			}
			held++
			if st.Action != scenarios.HTTP || u.Writer == st.Params.Writer || u.Count < 1 ||
				!slices.Contains(scenarios.Events, u.Event) {
				t.Fatalf("seed %d: step %d holds %+v until %+v", seed, i, st.Params.Rule, *u)
			}
			if b := back.Steps[i].Params.Until; b == nil || *b != *u {
				t.Fatalf("seed %d: step %d's until %+v came back as %+v", seed, i, *u, b)
			}
		}
	}
	if held < 5 {
		t.Fatalf("%d holds until an event in 300 schedules, want at least 5", held)
	}
}

// A relocation aborted before the target writes draws, in some schedules, a lost answer for
// the source's revert (a rule armed once the transfer landed) with the revert's read-back
// failing too: the retried revert is refused by the source's own landed write.
func TestGenerateLosesARevertAnswerWithItsReadBack(t *testing.T) {
	lost, paired := 0, 0
	for seed := uint64(1); seed <= 3000; seed++ {
		sc, err := Generate(seed, GenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		drop, read := false, false
		for _, st := range sc.Steps {
			if st.Action != scenarios.HTTP || st.After == nil || st.After.Event != history.SigTransferred {
				continue
			}
			r := st.Params.Rule
			switch {
			case r.Action == faults.DropResponse && r.Method == "PUT" && r.Header == "If-Match":
				drop = true
			case r.Action == faults.SyntheticStatus && r.Method == "GET":
				read = true
			}
		}
		if drop {
			lost++
			if read {
				paired++
			}
		}
	}
	if lost < 3 || paired < 1 {
		t.Fatalf("in 3000 schedules, %d lose a revert's answer and %d also fail its read-back; want at least 3 and 1", lost, paired)
	}
	t.Logf("%d lost revert answers, %d with the read-back failing", lost, paired)
}

// An inline fence rule (armed at a writer's event, catching its next fence write) may wait
// for an event one of the schedule's earlier steps makes the writer emit: after a relocation's
// drain or transfer it catches the transfer or the revert. Such an event happens once, so
// the rule waits for its first.
func TestGenerateArmsInlineFenceRulesAtStepEvents(t *testing.T) {
	stepEvents := 0
	for seed := uint64(1); seed <= 3000; seed++ {
		sc, err := Generate(seed, GenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		relocated := map[string]bool{}
		for _, st := range sc.Steps {
			if st.Action == scenarios.Relocate {
				relocated[st.Params.Writer] = true
			}
			r := st.Params.Rule
			if st.Action != scenarios.HTTP || st.After == nil || r.Method != "PUT" || r.Header != "If-Match" ||
				r.Nth != 1 || r.Count != 1 || slices.Contains(base, st.After.Event) {
				continue
			}
			switch st.After.Event {
			case history.SigDrained, history.SigTransferred, history.SigReverted, history.SigHandedOff:
				if !relocated[st.After.Writer] {
					t.Fatalf("seed %d: an inline rule waits for %s of %s, which no earlier step relocates",
						seed, st.After.Event, st.After.Writer)
				}
			}
			if st.After.Count != 1 {
				t.Fatalf("seed %d: an inline rule waits for the %s %d of %s; a step's own event happens once",
					seed, st.After.Event, st.After.Count, st.After.Writer)
			}
			stepEvents++
		}
	}
	if stepEvents < 20 {
		t.Fatalf("in 3000 schedules, %d inline fence rules wait for an event a step makes; want at least 20", stepEvents)
	}
	t.Logf("%d inline fence rules at events the schedule's own steps make", stepEvents)
}

// Relocations drawn by the relocate kind get, in some schedules, a rule on one of their own
// requests, armed at the source's event just before that request (the transfer and the
// target's hydration or, prehydrating, at the relocation's own trigger; the revert, only
// when the relocation aborts, and the target's adoption once the source transferred) and on
// the path of the copy that makes it; some relocations prehydrate. Every such rule fits one
// relocation of its schedule, and each of the four requests is drawn.
func TestGenerateFaultsARelocationsOwnRequests(t *testing.T) {
	seen := map[string]int{}
	prehydrated, lostMessages := 0, 0
	fits := func(st scenarios.Step, what string, reloc scenarios.Step) bool {
		pr := reloc.Params
		path, on := pr.Writer, history.SigDrained
		switch what {
		case "revert":
			if pr.AbortAt == history.AbortNone && !pr.LoseHandoff && !pr.LoseMessage {
				return false
			}
			on = history.SigTransferred
		case "target-hydration":
			path = pr.Target
			if pr.Prehydrate && reflect.DeepEqual(st.After, reloc.After) && st.At == reloc.At && st.Params.Writer == path {
				return true
			}
		case "target-adoption":
			path, on = pr.Target, history.SigTransferred
		}
		return st.Params.Writer == path && st.After != nil && *st.After == (scenarios.EventTrigger{Writer: pr.Writer, Event: on, Count: 1})
	}
	for seed := uint64(1); seed <= 3000; seed++ {
		sc, err := Generate(seed, GenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var relocs []scenarios.Step
		for _, st := range sc.Steps {
			if st.Action == scenarios.Relocate {
				relocs = append(relocs, st)
				if st.Params.Prehydrate {
					prehydrated++
				}
				if st.Params.LoseMessage {
					if st.Params.AbortAt != history.AbortNone || st.Params.LoseHandoff {
						t.Fatalf("seed %d: a relocation loses its message beside an abort point or a lost answer: %+v", seed, st.Params)
					}
					lostMessages++
				}
			}
			name := st.Params.Rule.Name
			if st.Action != scenarios.HTTP || !strings.HasPrefix(name, "status-") && !strings.HasPrefix(name, "drop-response-") &&
				!strings.HasPrefix(name, "delay-") {
				continue
			}
			for _, what := range []string{"target-hydration", "target-adoption", "transfer", "revert"} {
				if !strings.HasSuffix(strings.TrimRight(name, "0123456789"), "-"+what+"-") {
					continue
				}
				if !slices.ContainsFunc(relocs, func(r scenarios.Step) bool { return fits(st, what, r) }) {
					t.Fatalf("seed %d: the rule %s (on %s, at %+v) fits none of the relocations before it", seed, name,
						st.Params.Writer, st.After)
				}
				seen[what]++
			}
		}
	}
	for _, w := range []string{"transfer", "revert", "target-hydration", "target-adoption"} {
		if seen[w] < 3 {
			t.Fatalf("in 3000 schedules, %d rules on a relocation's %s; want at least 3 (%v)", seen[w], w, seen)
		}
	}
	if prehydrated < 10 {
		t.Fatalf("in 3000 schedules, %d relocations prehydrate; want at least 10", prehydrated)
	}
	if lostMessages < 10 {
		t.Fatalf("in 3000 schedules, %d relocations lose their handoff message; want at least 10", lostMessages)
	}
	t.Logf("rules on a relocation's own requests: %v; %d relocations prehydrate, %d lose the message", seen, prehydrated, lostMessages)
}

// Every schedule drawn for the simulated copies asks for ServesAfterHeal, in its YAML too (a
// shrunk or saved schedule replays with it); one drawn for a system, whose nodes' state the
// bench cannot see, does not.
func TestGeneratedSchedulesAskForServesAfterHeal(t *testing.T) {
	l := Limits{Promote: true, Twin: true, Pause: true, Relocate: true, Events: systemEvents,
		Check: func(*scenarios.Scenario) error { return nil }}
	for seed := uint64(1); seed <= 200; seed++ {
		sc, err := Generate(seed, GenOptions{})
		if err != nil {
			t.Fatal(err)
		}
		back, err := scenarios.Parse("explore.yaml", sc.Raw, scenarios.Options{Variants: variantNames()})
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		if !sc.Expect.ServesAfterHeal || !back.Expect.ServesAfterHeal {
			t.Fatalf("seed %d does not ask for ServesAfterHeal (drawn %v, in its YAML %v)", seed,
				sc.Expect.ServesAfterHeal, back.Expect.ServesAfterHeal)
		}
		sys, err := Generate(seed, GenOptions{System: &l})
		if err != nil {
			t.Fatal(err)
		}
		if sys.Expect.ServesAfterHeal {
			t.Fatalf("seed %d asks a system for ServesAfterHeal", seed)
		}
	}
}

// About one schedule in twenty-five runs without client traffic (besides the shapes that need none), never
// one whose steps wait for an event only ops make a copy emit, nor a clean one.
func TestGenerateSilentSchedules(t *testing.T) {
	silent := 0
	for seed := uint64(1); seed <= 1000; seed++ {
		g := newGen(seed, GenOptions{}.normalized())
		sc := g.scenario()
		if sc.Traffic.Clients != 0 || g.quiet {
			continue // traffic, or a shape of its own without it
		}
		silent++
		if sc.Expect.MaxTimeToAck != 0 {
			t.Fatalf("seed %d: a clean schedule without traffic:\n%s", seed, sc.Raw)
		}
		for _, st := range sc.Steps {
			for _, tr := range []*scenarios.EventTrigger{st.After, st.Params.Until} {
				if tr != nil && (needsOps[tr.Event] || needsOps[tr.Or]) {
					t.Fatalf("seed %d: no traffic, yet step %d waits for %s:\n%s", seed, st.Index, tr.Event, sc.Raw)
				}
			}
		}
	}
	if silent < 20 || silent > 80 {
		t.Errorf("%d of 1000 schedules without traffic, want about one in twenty-five", silent)
	}
}
