package explore

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// systemEvents are the events a system's node reports (runner's list, repeated: this package
// must not import the runner).
var systemEvents = []history.SignalKind{history.SigClaimed, history.SigPromoted, history.SigAcked, history.SigFenced}

// allowedFor lists the actions a system with l's capabilities takes, written out by hand
// rather than derived from Limits, so a kind Limits lets through by mistake fails here.
func allowedFor(l Limits) []scenarios.Action {
	out := []scenarios.Action{scenarios.Partition, scenarios.OneWay, scenarios.Latency, scenarios.Reset,
		scenarios.Crash, scenarios.HTTP}
	if l.Promote {
		out = append(out, scenarios.Promote, scenarios.Restart)
	}
	if l.Pause {
		out = append(out, scenarios.Pause, scenarios.Resume)
	}
	if l.Relocate && l.Promote {
		out = append(out, scenarios.Relocate)
	}
	return out
}

func checkForSystem(l Limits, sc *scenarios.Scenario) error {
	allowed := allowedFor(l)
	if sc.Store.AllowUnenforced || sc.Store.Drives > 0 {
		return errors.New("store options")
	}
	for _, st := range sc.Steps {
		if !slices.Contains(allowed, st.Action) {
			return fmt.Errorf("steps[%d]: %s", st.Index, st.Action)
		}
		if pr := st.Params; st.Action == scenarios.Relocate && (pr.AbortAt != history.AbortNone || pr.LoseHandoff || pr.Prehydrate) {
			return fmt.Errorf("steps[%d]: a relocation with the simulated copies' handoff parameters", st.Index)
		}
		if st.Action == scenarios.Promote && st.Params.Twin && !l.Twin {
			return fmt.Errorf("steps[%d]: a twin promotion", st.Index)
		}
		if st.After != nil && !slices.Contains(systemEvents, st.After.Event) {
			return fmt.Errorf("steps[%d]: waits for %s", st.Index, st.After.Event)
		}
	}
	return nil
}

// TestGenerateForASystem: schedules drawn for a system take only the steps its capabilities
// allow and wait only for the events its nodes report, for a commanded system with every
// capability, one without takeover or pause, and one that elects itself; mutations too; and
// the kinds left still reach promotions, pauses, crashes with restarts and request rules.
func TestGenerateForASystem(t *testing.T) {
	cases := map[string]Limits{
		"commanded":   {Promote: true, Twin: true, Pause: true, Relocate: true},
		"no-takeover": {Promote: true},
		"self-elect":  {Pause: true},
	}
	for name, l := range cases {
		t.Run(name, func(t *testing.T) {
			l.Events = systemEvents
			checked := 0
			l.Check = func(sc *scenarios.Scenario) error { checked++; return nil }
			o := GenOptions{System: &l}
			seen := map[scenarios.Action]int{}
			twins := 0
			corpus := NewCorpus()
			for seed := uint64(1); seed <= 1500; seed++ {
				sc, err := Generate(seed, o)
				if err != nil {
					t.Fatalf("seed %d: %v", seed, err)
				}
				if err := checkForSystem(l, sc); err != nil {
					t.Fatalf("seed %d drew what the system cannot take: %v\n%s", seed, err, sc.Raw)
				}
				if sc.Expect.MaxTimeToAck != 0 {
					t.Fatalf("seed %d bounds a system's acknowledgements: %v", seed, sc.Expect.MaxTimeToAck)
				}
				for _, st := range sc.Steps {
					seen[st.Action]++
					if st.Params.Twin {
						twins++
					}
				}
				corpus.Add(sc, []string{fmt.Sprint("f", seed%40)})
				m, err := corpus.Next(seed+100000, o)
				if err != nil {
					t.Fatalf("seed %d, guided: %v", seed, err)
				}
				if err := checkForSystem(l, m); err != nil {
					t.Fatalf("seed %d: a mutation drew what the system cannot take: %v\n%s", seed, err, m.Raw)
				}
			}
			if checked < 1500 {
				t.Errorf("the system's own check saw %d schedules of 1500", checked)
			}
			for _, a := range allowedFor(l) {
				if seen[a] == 0 && a != scenarios.Resume {
					t.Errorf("no schedule of 1500 drew a %s step (drew %v)", a, seen)
				}
			}
			if l.Twin && twins == 0 {
				t.Errorf("no schedule drew a promotion at a held term")
			}
		})
	}
}

// TestGenerateForASystemRefusedByItsCheck: a drawn schedule the system's check refuses is an
// error naming the seed, not a schedule.
func TestGenerateForASystemRefusedByItsCheck(t *testing.T) {
	l := Limits{Promote: true, Twin: true, Pause: true, Events: systemEvents,
		Check: func(sc *scenarios.Scenario) error { return errors.New("refused by the system") }}
	_, err := Generate(7, GenOptions{System: &l})
	if err == nil || !strings.Contains(err.Error(), "seed 7") || !strings.Contains(err.Error(), "refused by the system") {
		t.Fatalf("want the refusal with the seed, got %v", err)
	}
}

// TestGenerateWithoutLimitsIsUnchanged: the limits' hooks leave the simulated copies'
// schedules exactly as they were drawn before them (their seeds are shared in bug reports):
// the digest of 400 seeds' YAML, taken before the hooks were added and taken again only when
// a change of the generator's own draws is meant (the held sweep listing of held-fence-read;
// a request rule's pair; the pending-publish shape; the overtaker's stop; longer histories
// before a same-term hydration; the overtaken seal and handoff shapes; the clean schedules'
// acknowledgement bound; holds until another writer's event; a lost revert answer in the
// handoff shape, and its early aborts drawn twice as often; inline fence rules at the events
// earlier steps make a writer emit; a status rule's 403 AccessDenied; first-read faults in three schedules in ten, on the segment kinds more often when the schedule refreshes; ServesAfterHeal asked of every schedule;
// a rule on a relocation's own requests; a quarter of the relocations prehydrating; half
// of the relocations with no abort point and no lost answer losing the handoff message; half
// the rules of a prehydrating relocation on its hydration; the twin-arbitration shape; scripts of request faults on one writer's fence requests; scripts armed at a relocation source's drain or transfer; a 404 for a promoted copy's first .tlog reads, whose pair on the upload fails with a 500; half the schedules that wait for no acknowledgement, sync or CAS without client traffic).
func TestGenerateWithoutLimitsIsUnchanged(t *testing.T) {
	const want = "c29c3c31551ed139e5d2259613b006744247eece4f8c17501dd5ba692ee75593"
	h := sha256.New()
	for seed := uint64(1); seed <= 400; seed++ {
		sc, err := Generate(seed, GenOptions{Drives: seed%3 == 0})
		if err != nil {
			t.Fatal(err)
		}
		h.Write(sc.Raw)
	}
	if got := fmt.Sprintf("%x", h.Sum(nil)); got != want {
		t.Fatalf("the schedules of seeds 1 to 400 changed: digest %s, want %s", got, want)
	}
}

// TestStalledWriteForASelfElectingSystem: a system that elects its owner itself and whose
// nodes pause draws the stalled-write shape in some of its schedules: the owner's next PUTs
// held after its k-th acknowledgement, and the owner paused a moment later for a shorter
// time than the hold, both pinned to that acknowledgement; a commanded system never draws it.
func TestStalledWriteForASelfElectingSystem(t *testing.T) {
	self := Limits{Pause: true, Events: systemEvents}
	drawn := 0
	for seed := uint64(1); seed <= 300; seed++ {
		sc, err := Generate(seed, GenOptions{System: &self})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(sc.Description, "Shape: "+sStalledWrite+".") {
			continue
		}
		drawn++
		hold, pause := sc.Steps[0], sc.Steps[1]
		if hold.Action != scenarios.HTTP || hold.Params.Rule.Method != "PUT" || pause.Action != scenarios.Pause ||
			hold.After == nil || pause.After == nil || hold.After.Event != history.SigAcked || pause.After.Count != hold.After.Count ||
			pause.After.Delay <= 0 || pause.Params.Writer != hold.Params.Writer {
			t.Fatalf("seed %d: not a hold then a pause after one acknowledgement:\n%s", seed, sc.Raw)
		}
		if hold.Params.Rule.Delay <= pause.For+pause.After.Delay {
			t.Fatalf("seed %d: the hold (%v) ends before the owner wakes (%v after the event)", seed,
				hold.Params.Rule.Delay, pause.After.Delay+pause.For)
		}
	}
	if drawn < 30 {
		t.Errorf("stalled-write drawn in %d of 300 schedules of a self-electing system, want at least 30", drawn)
	}
	commanded := Limits{Promote: true, Pause: true, Events: systemEvents}
	for seed := uint64(1); seed <= 300; seed++ {
		sc, err := Generate(seed, GenOptions{System: &commanded})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(sc.Description, sStalledWrite) {
			t.Fatalf("seed %d: a commanded system drew stalled-write", seed)
		}
	}
}
