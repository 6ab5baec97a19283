package explore

import (
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/scenarios"
)

// weaker lists the one-change weakenings of a step, strongest simplification first: a
// fault becomes a milder one (a lost answer a short delay, a lost request a 503, a
// blackhole a refusal, a refusal added latency, a hold until an event a short hold), a rule
// fires fewer times and earlier, and windows, delays and times halve.
func weaker(st scenarios.Step) []scenarios.Step {
	var out []scenarios.Step
	add := func(f func(*scenarios.Step)) {
		c := st
		if st.After != nil {
			t := *st.After
			c.After = &t
		}
		if st.Params.Until != nil {
			u := *st.Params.Until
			c.Params.Until = &u
		}
		f(&c)
		out = append(out, c)
	}
	switch st.Action {
	case scenarios.HTTP:
		weakerRule(st.Params.Rule, func(f func(*faults.Rule)) { add(func(c *scenarios.Step) { f(&c.Params.Rule) }) })
		if u := st.Params.Until; u != nil {
			// A hold until an event becomes a short timed hold, or waits for an earlier one.
			add(func(c *scenarios.Step) {
				c.Params.Until = nil
				if c.Params.Rule.Action == faults.Delay && c.Params.Rule.Delay == 0 {
					c.Params.Rule.Delay = 50 * time.Millisecond
				}
			})
			if u.Count > 1 {
				add(func(c *scenarios.Step) { c.Params.Until.Count = u.Count / 2 })
			}
		}
	case scenarios.Partition:
		if st.Params.Mode == "blackhole" {
			add(func(c *scenarios.Step) { c.Params.Mode = "refuse" })
		} else {
			add(func(c *scenarios.Step) {
				c.Action, c.Params = scenarios.Latency, scenarios.Params{Writer: st.Params.Writer, Delay: 100 * time.Millisecond}
			})
		}
	case scenarios.Latency, scenarios.SlowClose:
		if st.Params.Delay >= 2*time.Millisecond {
			add(func(c *scenarios.Step) { c.Params.Delay = half(st.Params.Delay) })
		}
	}
	if st.For >= 20*time.Millisecond {
		add(func(c *scenarios.Step) { c.For = half(st.For) })
	}
	if st.After != nil && st.After.Count > 1 {
		add(func(c *scenarios.Step) { c.After.Count = st.After.Count / 2 })
	}
	if st.After != nil && st.After.Delay > 0 {
		add(func(c *scenarios.Step) { c.After.Delay = half(st.After.Delay) })
	}
	if st.Trigger == scenarios.TriggerAt && st.At >= 20*time.Millisecond {
		add(func(c *scenarios.Step) { c.At = (st.At / 2).Truncate(10 * time.Millisecond) })
	}
	return out
}

// weakerRule lists the weakenings of a request rule through add.
func weakerRule(r faults.Rule, add func(func(*faults.Rule))) {
	switch r.Action {
	case faults.DropResponse:
		add(func(c *faults.Rule) { c.Action, c.Delay = faults.Delay, 50*time.Millisecond })
	case faults.DropRequest:
		add(func(c *faults.Rule) { c.Action, c.Status, c.Code = faults.SyntheticStatus, 503, "" })
	case faults.Delay:
		if r.Delay >= 2*time.Millisecond {
			add(func(c *faults.Rule) { c.Delay = half(r.Delay) })
		}
	}
	if r.Action != faults.Delay && r.Delay > 0 {
		add(func(c *faults.Rule) { c.Delay = 0 })
	}
	if r.Count != 1 {
		add(func(c *faults.Rule) { c.Count = 1 })
	}
	if r.Nth > 1 {
		add(func(c *faults.Rule) { c.Nth = r.Nth / 2 })
	}
}

// half halves a duration to whole milliseconds (0 below 2ms).
func half(d time.Duration) time.Duration { return (d / 2).Truncate(time.Millisecond) }

// lower lowers the scenario's counts: writers no step names (the first stays), traffic
// clients and rate, and the duration down toward just past its last timed step.
func (s *shrinker) lower() bool {
	changed := false
	if idle := idleWriters(s.best); len(idle) > 0 {
		if s.try(withoutWriters(s.best, idle)) {
			changed = true
		} else {
			for _, id := range idle {
				changed = s.try(withoutWriters(s.best, []string{id})) || changed
			}
		}
	}
	for s.best.Traffic.Clients > 1 && s.try(withTraffic(s.best, s.best.Traffic.Clients/2, s.best.Traffic.Rate)) {
		changed = true
	}
	for s.best.Traffic.Rate >= 40 && s.try(withTraffic(s.best, s.best.Traffic.Clients, float64(int(s.best.Traffic.Rate/2)))) {
		changed = true
	}
	// A schedule whose steps wait for protocol events keeps its length: those events come as
	// the traffic allows, and a shorter run would only make the failure a matter of luck.
	if eventTriggered(s.best) {
		return changed
	}
	floor := lastTimed(s.best) + durationMargin
	for d := s.best.Duration; s.stop == nil; {
		next := max(floor, (d / 2).Truncate(100*time.Millisecond))
		if next >= d {
			break
		}
		c := clone(s.best)
		c.Duration = next
		if !s.try(c) {
			break
		}
		changed, d = true, next
	}
	return changed
}

// durationMargin is how long a shrunk scenario runs past its last timed step. Virtual time
// needs little, but the same scenario is confirmed on a real stack, where a writer's first
// requests (clients built, paths opened, a loaded machine, the race detector) can take a few
// hundred milliseconds: a 200 ms run once ended there before the violating read was made.
const durationMargin = time.Second

func eventTriggered(sc *scenarios.Scenario) bool {
	for _, st := range sc.Steps {
		if st.Trigger == scenarios.TriggerAfter {
			return true
		}
	}
	return false
}

// idleWriters are the declared writers after the first that nothing in the scenario names.
func idleWriters(sc *scenarios.Scenario) []string {
	named := map[string]bool{}
	for _, st := range sc.Steps {
		named[st.Params.Writer], named[st.Params.Target], named[st.Params.From] = true, true, true
		if st.After != nil {
			named[st.After.Writer] = true
		}
	}
	for _, w := range sc.Expect.Fenced {
		named[w] = true
	}
	named[sc.Expect.Serving] = true
	var out []string
	for i, w := range sc.Writers {
		if i > 0 && !named[w.ID] {
			out = append(out, w.ID)
		}
	}
	return out
}

func withoutWriters(sc *scenarios.Scenario, ids []string) *scenarios.Scenario {
	c := clone(sc)
	c.Writers = c.Writers[:0]
	for _, w := range sc.Writers {
		if !contains(ids, w.ID) {
			c.Writers = append(c.Writers, w)
		}
	}
	return c
}

func withTraffic(sc *scenarios.Scenario, clients int, rate float64) *scenarios.Scenario {
	c := clone(sc)
	c.Traffic.Clients, c.Traffic.Rate = clients, rate
	return c
}

// lastTimed is when the last time-triggered step's window ends.
func lastTimed(sc *scenarios.Scenario) time.Duration {
	var last time.Duration
	for _, st := range sc.Steps {
		if st.Trigger == scenarios.TriggerAt {
			last = max(last, st.At+st.For)
		}
	}
	return last
}
