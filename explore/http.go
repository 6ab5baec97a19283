package explore

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/scenarios"
)

// httpActions are the request actions every variant's schedules may draw; strip-conditions
// is added for the unenforced-store variant only.
var httpActions = []string{string(faults.DropResponse), string(faults.DropRequest), "status-409", "status-500",
	"status-503", string(faults.Delay), string(faults.Duplicate), string(faults.FailDeleteKeys)}

// family is a kind of object the writers store, with the key glob that matches it and the
// requests made on it.
type family struct {
	name, key string
	methods   []string // methods the writers use on it (POST: a DeleteObjects batch)
}

var families = []family{
	{"fence", "*fence__*", []string{"PUT", "PUT", "PUT", "GET", "POST"}},
	{"metadata", "*/translog/metadata/metadata__*", []string{"PUT", "PUT", "GET"}},
	{"tlog", "*.tlog", []string{"PUT", "PUT", "GET"}},
	{"segment", "*/segments/data/*", []string{"PUT", "GET", "GET", "POST"}},
	{"segment-metadata", "*/segments/metadata/metadata__*", []string{"PUT", "GET"}},
}

// http draws a request rule on one writer's path. A rule on the fence is often inline: set
// at a writer's protocol event with no delay, it catches that writer's next fence write: after
// a claim, sync or ack its next CAS, and after an event the schedule's earlier steps make it
// emit, the write that follows that event (after drained the transfer, after transferred the
// revert of an aborted handoff, after reverted the resumed source's first CAS).
func (g *gen) http(int) ([]scenarios.Step, bool) {
	act := g.pick(g.httpActs)
	var fam family
	if g.o.System != nil {
		fam = g.sysFamily(act)
	} else {
		fam = g.family(act)
	}
	w := g.target()
	g.rules++
	r := faults.Rule{Name: fmt.Sprintf("%s-%s-%d", act, fam.name, g.rules), Key: fam.key,
		Nth: 1 + g.r.IntN(5), Count: 1 + g.r.IntN(3)}
	g.shape(&r, act, fam)
	g.deny(&r)
	st := g.step(scenarios.HTTP, scenarios.Params{Writer: w, Rule: r})
	if r.Action == faults.Delay && g.chance(0.4) {
		st.Params.Until, st.Params.Rule.Delay = g.heldUntil(w), 0
	}
	if fam.name == "fence" && r.Method == "PUT" && len(g.c.active) > 0 && contains(g.c.active, w) && g.chance(0.4) {
		st.Trigger, st.At = scenarios.TriggerAfter, 0
		evs := g.baseEvents()
		if g.o.System == nil {
			for _, e := range g.c.events[w] {
				if !slices.Contains(evs, e) {
					evs = append(evs, e)
				}
			}
		}
		ev := draw(g.dice, evs)
		st.After = &scenarios.EventTrigger{Writer: w, Event: ev, Count: 1 + g.r.IntN(3)}
		if !slices.Contains(base, ev) {
			st.After.Count = 1 // a step's own event happens once
		}
		st.Params.Rule.Method, st.Params.Rule.Header = "PUT", "If-Match"
		st.Params.Rule.Nth, st.Params.Rule.Count = 1, 1
	}
	if g.chance(0.3) {
		st.For = g.window()
	}
	return []scenarios.Step{st}, true
}

// heldUntil draws the event that releases a hold on w's path: another writer's claim, sync or
// acknowledgement (its first or second), so the held request lands after that writer moved,
// whatever the hold's length would have been. A writer that never gets there leaves the request
// held until its caller gives up, and it lands when the schedule ends.
func (g *gen) heldUntil(w string) *scenarios.EventTrigger {
	others := remove(g.c.ids, w)
	if len(others) == 0 {
		others = []string{w}
	}
	return &scenarios.EventTrigger{Writer: g.oneOf(others), Event: draw(g.dice, g.baseEvents()), Count: 1 + g.r.IntN(2)}
}

// family picks the objects a rule hits: fence keys most often, and only the families an
// action can meet (a batch delete names fence and segment keys; conditions guard fences).
func (g *gen) family(act string) family {
	switch act {
	case string(faults.FailDeleteKeys):
		return families[[]int{0, 3}[g.r.IntN(2)]]
	case string(faults.StripConditions), "status-409", string(faults.Misdirect):
		return families[0]
	}
	if g.chance(0.5) {
		return families[0]
	}
	return families[g.r.IntN(len(families))]
}

// shape sets the method, header and action fields of a rule.
func (g *gen) shape(r *faults.Rule, act string, fam family) {
	r.Method = g.oneOf(fam.methods)
	switch act {
	case string(faults.FailDeleteKeys):
		r.Method = "POST"
	case string(faults.StripConditions), "status-409":
		r.Method = "PUT"
	case string(faults.Misdirect):
		r.Method = "GET"
	default:
		if r.Method == "POST" {
			r.Method = "PUT"
		}
	}
	if fam.name == "fence" && r.Method == "PUT" {
		r.Header = "If-Match"
		if g.chance(0.3) {
			r.Header = "If-None-Match"
		}
	}
	setAction(r, act, func() time.Duration { return g.ms(10, 1000) })
	g.strip = g.strip || r.Action == faults.StripConditions
}

// httpKind is the fault kind of a request rule: its action, a status with its code
// ("status-409").
func httpKind(r faults.Rule) string {
	if r.Action == faults.SyntheticStatus {
		return fmt.Sprintf("status-%d", r.Status)
	}
	return string(r.Action)
}

// setAction makes r do act, an action as the generator names it: "status-NNN" answers that
// status (a 403 with AccessDenied, as deny gives it), "delay" holds for delay(), drawn only
// then, and any other name is the action itself. The inverse of httpKind.
func setAction(r *faults.Rule, act string, delay func() time.Duration) {
	if code, ok := strings.CutPrefix(act, "status-"); ok {
		r.Action = faults.SyntheticStatus
		r.Status, _ = strconv.Atoi(code)
		if r.Status == 403 {
			r.Code = "AccessDenied"
		}
		return
	}
	r.Action = faults.Action(act)
	if r.Action == faults.Delay {
		r.Delay = delay()
	}
}

// deny turns a 5xx status rule, one time in five, into a 403 AccessDenied: a refusal that
// says nothing about the request's precondition and is not worth retrying (a credential
// rotated, a policy not yet propagated). The fence takes it for a configuration error, never
// a verdict; a promotion whose seal or restore read meets it gives up, and one that took it
// for an empty read would start its term without what its predecessor acknowledged.
func (g *gen) deny(r *faults.Rule) {
	if r.Action != faults.SyntheticStatus || r.Status < 500 || g.denials.IntN(5) != 0 {
		return
	}
	r.Name = strings.Replace(r.Name, fmt.Sprintf("status-%d", r.Status), "status-403", 1)
	r.Status, r.Code = 403, "AccessDenied"
}
