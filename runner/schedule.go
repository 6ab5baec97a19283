package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/writers"
)

// follow executes the time-triggered plan against the cell's clock and returns when the
// scenario's duration has elapsed (or ctx ended). Event-triggered steps run from onSignal.
func (cr *cellRun) follow(ctx context.Context, plan []Planned) {
	sc := cr.c.Scenario
	for _, p := range plan {
		if p.At < 0 || p.Action == planDone {
			continue
		}
		if !cr.sleepUntil(ctx, p.At) {
			return
		}
		st := sc.Steps[p.Step]
		switch p.Action {
		case planWindowEnd:
			cr.endWindow(st)
		case planFlapOn:
			cr.open(st, st.Fault())
		case planFlapOff:
			cr.endWindow(st)
		default:
			cr.exec(ctx, st)
		}
	}
	cr.sleepUntil(ctx, sc.Duration)
}

// sleepUntil waits until the cell's clock reads at; false when ctx ended first.
func (cr *cellRun) sleepUntil(ctx context.Context, at time.Duration) bool {
	d := at - cr.rec.Now()
	if d <= 0 {
		return ctx.Err() == nil
	}
	return cr.clock.For(ctx, d)
}

// onSignal fires the event-triggered steps waiting for s. It runs on the emitting writer's
// goroutine before that writer's next store call, so an inline action (a request-level rule,
// a pause) takes effect exactly at the event; anything slower runs in the background.
func (cr *cellRun) onSignal(ctx context.Context, s writers.Signal) {
	cr.mu.Lock()
	stopping := cr.stopping || cr.overtime
	if !cr.stopping && cr.r.ephemeral { // the trace is read by an exploration's failures only
		cr.trace.Signals = append(cr.trace.Signals, outcome.TracedSignal{At: cr.rec.Now(), Writer: s.Writer, Event: s.Kind, N: s.N})
	}
	cr.mu.Unlock()
	cr.gates.signal(s.Writer, s.Kind, s.N)
	if stopping {
		return
	}
	for _, st := range cr.c.Scenario.Steps {
		a := st.After
		if st.Trigger != scenarios.TriggerAfter || a.Writer != s.Writer || a.Event != s.Kind || a.Count != s.N {
			continue
		}
		st := st
		cr.mu.Lock()
		if cr.arrived == nil {
			cr.arrived = map[int]bool{}
		}
		cr.arrived[st.Index] = true
		cr.mu.Unlock()
		if a.Delay == 0 && st.Spec().Inline {
			cr.exec(ctx, st)
			cr.windowLater(ctx, st)
			continue
		}
		delay := a.Delay
		if delay == 0 && cr.clock.IsVirtual() {
			// On virtual time the step starts once every goroutine has done what it could at
			// this instant: the emitting writer has reached its next wait (a pause fired by the
			// same event holds it there), not whichever of the two the Go scheduler ran first.
			delay = time.Nanosecond
		}
		cr.background(func() {
			if delay > 0 && !cr.clock.For(ctx, delay) {
				return
			}
			cr.exec(ctx, st)
			cr.windowLater(ctx, st)
		})
	}
}

// windowLater ends an event-triggered step's `for` window after its length.
func (cr *cellRun) windowLater(ctx context.Context, st scenarios.Step) {
	if st.For <= 0 {
		return
	}
	cr.background(func() {
		if cr.clock.For(ctx, st.For) {
			cr.endWindow(st)
		}
	})
}

func (cr *cellRun) background(fn func()) {
	cr.bg.Add(1)
	cr.guard.Go("a scenario step", fn, cr.bg.Done)
}

// exec performs one step: a step whose action injects a network or request fault opens it
// on the writer's path (a flap's toggles come from the plan), any other runs its handler.
// Fault installation failures are harness problems; protocol outcomes (a promotion refused
// because a higher term exists) are data for the checker.
func (cr *cellRun) exec(ctx context.Context, st scenarios.Step) {
	cr.log.Debug("step", "step", st.Index, "action", st.Action, "writer", st.Params.Writer)
	cr.traceStep(st)
	spec := st.Spec()
	switch {
	case spec.Rhythm:
		// Driven by the plan's flap-on/flap-off toggles; nothing to do at the step itself.
	case spec.Build != nil:
		if u := st.Params.Until; u != nil {
			st.Params.Rule.Until = cr.gates.hold(*u)
		}
		cr.open(st, st.Fault())
	default:
		h, ok := handlers[st.Action]
		if !ok {
			cr.fail(fmt.Errorf("step %d: action %q is not implemented by the runner", st.Index, st.Action))
			return
		}
		h(ctx, cr, st)
	}
}

// faultsOf is the set a step's fault lives in: the writer's path for network and request
// faults, the writer's own set for protocol faults. nil when there is none.
func (cr *cellRun) faultsOf(st scenarios.Step) *faults.Set {
	id := st.Params.Writer
	if st.Spec().Layer == scenarios.StoreLayer {
		return cr.storeSet()
	}
	if st.Spec().Layer == faults.Protocol {
		cr.mu.Lock()
		defer cr.mu.Unlock()
		if cr.held[id] == nil {
			cr.held[id] = faults.NewSet(id, nil, cr.record)
		}
		return cr.held[id]
	}
	if p := cr.path(id); p != nil {
		return p.Faults()
	}
	cr.fail(fmt.Errorf("no fault path for writer %q", id))
	return nil
}

// open puts a step's fault in place.
func (cr *cellRun) open(st scenarios.Step, f faults.Fault) {
	if set := cr.faultsOf(st); set != nil {
		if err := set.Open(f); err != nil {
			cr.fail(err)
		}
	}
}

// endWindow heals the fault of a step whose `for` window (or flap phase) elapsed; the other
// faults of the writer stay in place.
func (cr *cellRun) endWindow(st scenarios.Step) {
	if set := cr.faultsOf(st); set != nil {
		if err := set.Close(st.FaultName()); err != nil {
			cr.fail(err)
		}
	}
}

// protocol logs the outcome of a protocol action. Fencing, refusals and retryable failures
// are what scenarios provoke; they are in the history and the checker judges them.
func (cr *cellRun) protocol(st scenarios.Step, err error) {
	if err == nil {
		return
	}
	level := "outcome"
	if fence.IsFenced(err) || fence.IsRetryable(err) {
		level = "fenced-or-retryable"
	}
	cr.log.Debug("protocol step ended with an error", "step", st.Index, "action", st.Action, "kind", level, "err", err)
}

func (cr *cellRun) writer(id string) *writers.Writer {
	w := cr.cluster.Writer(id)
	if w == nil {
		// Restart incarnations appear only once their restart ran.
		cr.log.Warn("step names a writer that does not exist (yet)", "writer", id)
	}
	return w
}

func (cr *cellRun) path(id string) route {
	if p, ok := cr.paths[id]; ok {
		return p
	}
	// A restart incarnation shares its predecessor's node and path.
	for _, st := range cr.c.Scenario.Steps {
		if st.Action == scenarios.Restart && st.Params.As == id {
			return cr.path(st.Params.Writer)
		}
	}
	return nil
}

// healAll ends every fault at the end of the schedule: rules removed, paths healed, paused
// writers resumed, so in-flight work can finish and the auditor sees a quiet store. Only
// paths that still carry a network fault are healed: healing replaces the path's proxy and
// cuts the connections on it, which would hit a healthy writer mid-request.
func (cr *cellRun) healAll() {
	cr.healStore()
	ids := sortedKeys(cr.paths)
	for _, layer := range []faults.Layer{faults.L7, faults.L4} {
		for _, id := range ids {
			if err := cr.paths[id].Faults().CloseLayer(layer); err != nil {
				cr.fail(err)
			}
		}
	}
	for _, w := range cr.cluster.Writers() {
		cr.mu.Lock()
		set := cr.held[w.ID()]
		cr.mu.Unlock()
		if set != nil {
			if err := set.CloseLayer(faults.Protocol); err != nil {
				cr.fail(err)
			}
		}
		if w.Paused() {
			w.Resume()
		}
	}
}

// record is where the fault sets of the cell record: its history.
func (cr *cellRun) record(e history.Event) { cr.rec.Record(e) }

// missed says why an event-triggered step never ran: its writer never reached the event it
// waited for (the race went the other way). "" for a step whose event came, or a timed one.
func (cr *cellRun) missed(st scenarios.Step) string {
	if st.Trigger != scenarios.TriggerAfter || st.After == nil {
		return ""
	}
	cr.mu.Lock()
	came := cr.arrived[st.Index]
	cr.mu.Unlock()
	if came {
		return ""
	}
	a := st.After
	if a.Count > 1 {
		return fmt.Sprintf("%s never reached its %s event #%d", a.Writer, a.Event, a.Count)
	}
	return fmt.Sprintf("%s never reached its %s event", a.Writer, a.Event)
}

// traceStep notes when st first ran, for an exploration's failures (explore.Pin); other runs
// keep no trace.
func (cr *cellRun) traceStep(st scenarios.Step) {
	if !cr.r.ephemeral {
		return
	}
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.trace.Steps == nil {
		cr.trace.Steps = map[int]time.Duration{}
	}
	if _, ok := cr.trace.Steps[st.Index]; !ok {
		cr.trace.Steps[st.Index] = cr.rec.Now()
	}
}
