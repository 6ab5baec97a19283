package runner

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/writers"
)

// follow executes the time-triggered plan against the cell's clock and returns when the
// scenario's duration has elapsed (or ctx ended). Event-triggered steps run from onSignal.
func (cr *cellRun) follow(ctx context.Context, plan []Planned) {
	sc := cr.c.Scenario
	for _, p := range plan {
		if p.At < 0 || p.Action == "done" {
			continue
		}
		if !cr.sleepUntil(ctx, p.At) {
			return
		}
		st := sc.Steps[p.Step]
		switch p.Action {
		case "heal-window":
			cr.endWindow(st)
		case "flap-on":
			cr.l4(st.Params.Writer, st.FaultName(), func(path *faults.Path) error { return path.Partition(faults.Refuse) })
		case "flap-off":
			cr.unflap(st.Params.Writer, st.FaultName())
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
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// onSignal fires the event-triggered steps waiting for s. It runs on the emitting writer's
// goroutine before that writer's next store call, so a request-level rule or a pause takes
// effect exactly at the event; anything slower runs in the background.
func (cr *cellRun) onSignal(ctx context.Context, s writers.Signal) {
	cr.mu.Lock()
	stopping := cr.stopping
	cr.mu.Unlock()
	if stopping {
		return
	}
	for _, st := range cr.c.Scenario.Steps {
		a := st.After
		if st.Trigger != scenarios.TriggerAfter || a.Writer != s.Writer || a.Event != string(s.Kind) || a.Count != s.N {
			continue
		}
		st := st
		if a.Delay == 0 && (st.Action == "http" || st.Action == "pause") {
			cr.exec(ctx, st)
			cr.windowLater(ctx, st)
			continue
		}
		cr.background(func() {
			if a.Delay > 0 && !sleepCtx(ctx, a.Delay) {
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
		if sleepCtx(ctx, st.For) {
			cr.endWindow(st)
		}
	})
}

func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func (cr *cellRun) background(fn func()) {
	cr.bg.Add(1)
	cr.guard.Go("a scenario step", fn, cr.bg.Done)
}

// exec performs one step. Fault installation failures are harness problems; protocol
// outcomes (a promotion refused because a higher term exists) are data for the checker.
func (cr *cellRun) exec(ctx context.Context, st scenarios.Step) {
	pr := st.Params
	name := st.FaultName()
	cr.log.Debug("step", "step", st.Index, "action", st.Action, "writer", pr.Writer)
	switch st.Action {
	case "partition":
		mode := faults.Refuse
		if pr.Mode == "blackhole" {
			mode = faults.Blackhole
		}
		cr.l4(pr.Writer, name, func(p *faults.Path) error { return p.Partition(mode) })
	case "heal":
		cr.healPath(pr.Writer)
	case "latency":
		cr.l4(pr.Writer, name, func(p *faults.Path) error { return p.Latency(pr.Delay) })
	case "bandwidth":
		cr.l4(pr.Writer, name, func(p *faults.Path) error { return p.Bandwidth(pr.KBps) })
	case "reset":
		cr.l4(pr.Writer, name, func(p *faults.Path) error { return p.Reset() })
	case "slow-close":
		cr.l4(pr.Writer, name, func(p *faults.Path) error { return p.SlowClose(pr.Delay) })
	case "flap":
		// Driven by the plan's flap-on/flap-off toggles; nothing to do at the step itself.
	case "http":
		cr.addRule(pr.Writer, pr.Rule)
	case "pause":
		if w := cr.writer(pr.Writer); w != nil {
			cr.rec.Record(history.Event{Kind: history.FaultStart, Writer: pr.Writer, Detail: name})
			w.Pause()
		}
	case "resume":
		if w := cr.writer(pr.Writer); w != nil {
			w.Resume()
		}
	case "crash":
		if w := cr.writer(pr.Writer); w != nil {
			cr.rec.Record(history.Event{Kind: history.FaultStart, Writer: pr.Writer, Detail: name})
			w.Crash()
		}
	case "promote":
		if w := cr.writer(pr.Writer); w != nil {
			cr.background(func() { cr.protocol(st, w.Promote(ctx, pr.Term)) })
		}
	case "restart":
		if w := cr.writer(pr.Writer); w != nil {
			cr.background(func() {
				_, err := w.Restart(ctx, pr.As, pr.Term)
				cr.protocol(st, err)
			})
		}
	case "relocate":
		src, dst := cr.writer(pr.Writer), cr.writer(pr.Target)
		if src != nil && dst != nil {
			opts := writers.RelocateOptions{Abort: writers.AbortPoint(pr.AbortAt)}
			if pr.LoseHandoff && pr.AbortAt == "" {
				opts.LoseAnswer = true
			}
			cr.background(func() {
				_, err := src.Relocate(ctx, dst, opts)
				cr.protocol(st, err)
			})
		}
	case "refresh":
		if w := cr.writer(pr.Writer); w != nil {
			cr.background(func() { _, err := w.Refresh(ctx); cr.protocol(st, err) })
		}
	case "gc":
		if w := cr.writer(pr.Writer); w != nil {
			cr.background(func() { _, err := w.GC(ctx); cr.protocol(st, err) })
		}
	case "recover":
		if w := cr.writer(pr.Writer); w != nil {
			cr.background(func() { _, err := w.Recover(ctx); cr.protocol(st, err) })
		}
	default:
		cr.fail(fmt.Errorf("step %d: action %q is not implemented by the runner", st.Index, st.Action))
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

func (cr *cellRun) path(id string) *faults.Path {
	if p, ok := cr.paths[id]; ok {
		return p
	}
	// A restart incarnation shares its predecessor's node and path.
	for _, st := range cr.c.Scenario.Steps {
		if st.Action == "restart" && st.Params.As == id {
			return cr.path(st.Params.Writer)
		}
	}
	return nil
}

func (cr *cellRun) l4(writer, name string, apply func(*faults.Path) error) {
	p := cr.path(writer)
	if p == nil {
		cr.fail(fmt.Errorf("no fault path for writer %q", writer))
		return
	}
	if err := apply(p); err != nil {
		cr.fail(fmt.Errorf("%s on %s: %w", name, writer, err))
		return
	}
	cr.mu.Lock()
	first := !slices.Contains(cr.l4open[writer], name)
	if first {
		cr.l4open[writer] = append(cr.l4open[writer], name)
	}
	if cr.l4apply[writer] == nil {
		cr.l4apply[writer] = map[string]func(*faults.Path) error{}
	}
	cr.l4apply[writer][name] = apply
	cr.mu.Unlock()
	if first {
		cr.rec.Record(history.Event{Kind: history.FaultStart, Writer: writer, Detail: name})
	}
}

// unflap ends one "on" phase of a flap: the path is healed (the only way to lift a
// partition) and every other network fault still open on it is put back, unchanged.
func (cr *cellRun) unflap(writer, name string) {
	p := cr.path(writer)
	if p == nil {
		return
	}
	if err := p.Heal(); err != nil {
		cr.fail(fmt.Errorf("heal %s: %w", writer, err))
	}
	cr.mu.Lock()
	var keep []string
	var again []func(*faults.Path) error
	for _, n := range cr.l4open[writer] {
		if n == name {
			continue
		}
		keep = append(keep, n)
		again = append(again, cr.l4apply[writer][n])
	}
	cr.l4open[writer] = keep
	delete(cr.l4apply[writer], name)
	cr.mu.Unlock()
	for _, apply := range again {
		if err := apply(p); err != nil {
			cr.fail(fmt.Errorf("restore a fault on %s after a flap: %w", writer, err))
		}
	}
	cr.rec.Record(history.Event{Kind: history.FaultEnd, Writer: writer, Detail: name})
}

func (cr *cellRun) healPath(writer string) {
	p := cr.path(writer)
	if p == nil {
		return
	}
	if err := p.Heal(); err != nil {
		cr.fail(fmt.Errorf("heal %s: %w", writer, err))
	}
	cr.mu.Lock()
	open := cr.l4open[writer]
	delete(cr.l4open, writer)
	delete(cr.l4apply, writer)
	cr.mu.Unlock()
	for _, name := range open {
		cr.rec.Record(history.Event{Kind: history.FaultEnd, Writer: writer, Detail: name})
	}
}

func (cr *cellRun) addRule(writer string, r scenarios.HTTPRule) {
	p := cr.path(writer)
	if p == nil {
		cr.fail(fmt.Errorf("no fault path for writer %q", writer))
		return
	}
	rule := faults.Rule{Name: r.Name, Method: r.Method, Key: r.Key, Header: r.Header, Value: r.Value,
		Nth: r.Nth, Count: r.Count, Action: faults.Action(r.Action), Status: r.Status, Code: r.Code, Delay: r.Delay}
	if err := p.AddRule(rule); err != nil {
		cr.fail(fmt.Errorf("http rule %s on %s: %w", r.Name, writer, err))
		return
	}
	cr.mu.Lock()
	cr.rules[writer] = append(cr.rules[writer], r.Name)
	cr.mu.Unlock()
	cr.rec.Record(history.Event{Kind: history.FaultStart, Writer: writer, Detail: r.Name})
}

func (cr *cellRun) removeRule(writer, name string) {
	cr.mu.Lock()
	var keep []string
	found := false
	for _, n := range cr.rules[writer] {
		if n == name {
			found = true
			continue
		}
		keep = append(keep, n)
	}
	cr.rules[writer] = keep
	cr.mu.Unlock()
	if !found {
		return
	}
	if p := cr.path(writer); p != nil {
		if err := p.RemoveRule(name); err != nil {
			cr.fail(fmt.Errorf("remove http rule %s on %s: %w", name, writer, err))
		}
	}
	cr.rec.Record(history.Event{Kind: history.FaultEnd, Writer: writer, Detail: name})
}

// endWindow undoes a step whose `for` window elapsed.
func (cr *cellRun) endWindow(st scenarios.Step) {
	switch st.Action {
	case "http":
		cr.removeRule(st.Params.Writer, st.Params.Rule.Name)
	case "pause":
		if w := cr.cluster.Writer(st.Params.Writer); w != nil {
			w.Resume()
			cr.rec.Record(history.Event{Kind: history.FaultEnd, Writer: st.Params.Writer, Detail: st.FaultName()})
		}
	case "flap":
		cr.mu.Lock()
		on := slices.Contains(cr.l4open[st.Params.Writer], st.FaultName())
		cr.mu.Unlock()
		if on {
			cr.unflap(st.Params.Writer, st.FaultName())
		}
	default:
		cr.healPath(st.Params.Writer)
	}
}

// healAll ends every fault at the end of the schedule: rules removed, paths healed, paused
// writers resumed, so in-flight work can finish and the auditor sees a quiet store.
func (cr *cellRun) healAll() {
	cr.mu.Lock()
	rules := map[string][]string{}
	for w, rs := range cr.rules {
		rules[w] = append([]string(nil), rs...)
	}
	cr.mu.Unlock()
	for _, w := range sortedKeys(rules) {
		for _, name := range rules[w] {
			cr.removeRule(w, name)
		}
	}
	// Only paths that still carry a network fault are healed: healing replaces the path's
	// proxy and cuts the connections on it, which would hit a healthy writer mid-request.
	cr.mu.Lock()
	faulty := sortedKeys(cr.l4open)
	cr.mu.Unlock()
	for _, id := range faulty {
		cr.healPath(id)
	}
	for _, w := range cr.cluster.Writers() {
		if w.Paused() {
			w.Resume()
			for _, st := range cr.c.Scenario.Steps {
				if st.Action == "pause" && st.Params.Writer == w.ID() {
					cr.rec.Record(history.Event{Kind: history.FaultEnd, Writer: w.ID(), Detail: st.FaultName()})
					break
				}
			}
		}
	}
}
