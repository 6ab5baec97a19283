package explore

import (
	"testing"
	"time"

	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
)

// TestPinTiesTimedStepsToTheEventBeforeThem: of the ten steps, the ones that ran after some
// protocol event are tied to the last such event with the delay they saw; a step that ran
// before any event, one that never ran, and an event-triggered one keep their trigger.
func TestPinTiesTimedStepsToTheEventBeforeThem(t *testing.T) {
	sc := tenSteps(t)
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	tr := &outcome.Trace{
		Signals: []outcome.TracedSignal{
			{At: ms(250), Writer: "a", Event: "acked", N: 1},
			{At: ms(400), Writer: "a", Event: "acked", N: 2},
			{At: ms(420), Writer: "a", Event: "paused", N: 1}, // not an event a step may wait for
			{At: ms(980), Writer: "b", Event: "claimed", N: 1},
		},
		// step 0 (latency) ran before any event; 1 ran late, after a's first ack; 2 after the
		// second ack; 4 is the event-triggered promote; 9 never ran.
		Steps: map[int]time.Duration{0: ms(200), 1: ms(390), 2: ms(430), 3: ms(700), 4: ms(700), 5: ms(985),
			6: ms(1000), 7: ms(1100), 8: ms(1300)},
	}
	out := Pin(sc, tr)
	if out == nil {
		t.Fatal("nothing pinned")
	}
	want := map[int]*scenarios.EventTrigger{
		1: {Writer: "a", Event: "acked", Count: 1, Delay: ms(140)},
		2: {Writer: "a", Event: "acked", Count: 2, Delay: ms(30)},
		3: {Writer: "a", Event: "acked", Count: 2, Delay: ms(300)},
		5: {Writer: "b", Event: "claimed", Count: 1, Delay: ms(5)},
	}
	for i, st := range out.Steps {
		w, pinned := want[i]
		switch {
		case i == 4:
			if st.Trigger != scenarios.TriggerAfter || st.After.Event != "acked" || st.After.Count != 4 {
				t.Errorf("step 4 (event-triggered) changed: %+v", st.After)
			}
		case pinned:
			if st.Trigger != scenarios.TriggerAfter || *st.After != *w {
				t.Errorf("step %d: %s %+v, want after %+v", i, st.Trigger, st.After, *w)
			}
		case i == 0 || i == 9:
			if st.Trigger != scenarios.TriggerAt || st.At != sc.Steps[i].At {
				t.Errorf("step %d: %s at %v, want its time kept", i, st.Trigger, st.At)
			}
		}
	}
	if _, err := scenarios.Parse("pinned.yaml", out.Raw, scenarios.Options{Variants: variantNames()}); err != nil {
		t.Fatalf("the pinned scenario does not load: %v\n%s", err, out.Raw)
	}
	if Pin(sc, &outcome.Trace{Steps: tr.Steps}) != nil || Pin(sc, nil) != nil {
		t.Error("a run without events pinned something")
	}
}
