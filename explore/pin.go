package explore

import (
	"slices"
	"time"

	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
)

// Pin rewrites the timed steps of sc that ran in a traced run of it as steps after the
// protocol event that came last before each: an `at: 160ms` step that ran 8 ms after b's
// third ack becomes `after: {writer: b, event: acked, count: 3, delay: 8ms}`. A schedule found
// on a loaded machine (or on the simulated stack, whose scaled clock magnifies every stall)
// failed for the interleaving it met, not for its clock; pinned, it asks for that interleaving
// again however fast or slow the replaying machine is. Delays are kept to the millisecond, as
// a person writes them. Steps that ran before any event, never ran, or pace a rhythm (a flap)
// keep their time. Pin returns nil when it changed nothing or the pinned scenario does not load.
func Pin(sc *scenarios.Scenario, tr *outcome.Trace) *scenarios.Scenario {
	if tr == nil || len(tr.Signals) == 0 {
		return nil
	}
	out := clone(sc)
	changed := false
	for i, st := range out.Steps {
		ran, ok := tr.Steps[st.Index]
		if st.Trigger != scenarios.TriggerAt || !ok || st.Spec().Rhythm {
			continue
		}
		sig, ok := lastBefore(tr.Signals, ran)
		if !ok {
			continue
		}
		st.Trigger, st.At = scenarios.TriggerAfter, 0
		st.After = &scenarios.EventTrigger{Writer: sig.Writer, Event: sig.Event, Count: sig.N, Delay: (ran - sig.At).Round(time.Millisecond)}
		out.Steps[i] = st
		changed = true
	}
	if !changed {
		return nil
	}
	parsed, err := reparse(out)
	if err != nil {
		return nil
	}
	return parsed
}

// lastBefore is the last signal a step may wait for that came at or before t.
func lastBefore(sigs []outcome.TracedSignal, t time.Duration) (outcome.TracedSignal, bool) {
	for i := len(sigs) - 1; i >= 0; i-- {
		if s := sigs[i]; s.At <= t && s.N > 0 && slices.Contains(scenarios.Events, s.Event) {
			return s, true
		}
	}
	return outcome.TracedSignal{}, false
}
