package explore

import (
	"fmt"
	"slices"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// Limits restrict the schedules drawn to the steps a system under test can take (a system
// driven through package system, whose nodes declare capabilities): only those kinds are
// drawn, only those events wait for, and only the request rules that mean something for a
// key layout the bench does not know (its fence objects' and any key) are drawn. A nil
// *Limits draws for the bench's own simulated copies, every kind, unchanged.
type Limits struct {
	// Promote allows promote steps and crash restarts (a restart promotes the new
	// incarnation); Twin a promotion at a term another copy holds; Pause pause steps.
	Promote, Twin, Pause bool
	// Relocate allows relocation steps (relocate to the source, then promote of the target),
	// without the simulated copies' own handoff parameters.
	Relocate bool
	// Events are the events a step may wait for.
	Events []history.SignalKind
	// Check refuses a scenario the system cannot run (the runner's validation for the
	// system, naming the step and the capability): a drawn schedule it refuses is an error
	// of the generator, a mutation it refuses is not drawn.
	Check func(*scenarios.Scenario) error
}

// systemKinds are the kinds a system may take: network and request faults on its path, its
// process's pause and crash, and promotions when it is commanded.
func (l *Limits) kinds() []string {
	out := []string{kPartition, kOneWay, kLatency, kReset, kCrash, kHTTP}
	if l.Promote {
		out = append(out, kPromote)
	}
	if l.Pause {
		out = append(out, kPause)
	}
	if l.Relocate && l.Promote {
		out = append(out, kRelocate)
	}
	return out
}

// shapes are the shapes whose steps a system takes: the fence objects' request rules with
// promotions, or for a self-electing system whose nodes pause, its owner's stalled writes.
func (l *Limits) shapes() []string {
	switch {
	case l.Promote && l.Twin:
		return []string{sFailedSweep, sTwinContest, sHeldFenceRead}
	case l.Promote:
		return []string{sFailedSweep}
	case l.Pause:
		return []string{sStalledWrite} // a self-electing system: its own lease or election decides
	}
	return nil
}

func (l *Limits) event(e history.SignalKind) bool { return slices.Contains(l.Events, e) }

// check refuses sc when it has a step the limits do not allow.
func (l *Limits) check(sc *scenarios.Scenario) error {
	if l == nil {
		return nil
	}
	for _, st := range sc.Steps {
		if st.After != nil && !l.event(st.After.Event) {
			return fmt.Errorf("explore: %s: steps[%d] (%s) waits for %s, which the system does not report", sc.Name, st.Index, st.Action, st.After.Event)
		}
		if why := l.refuses(st); why != "" {
			return fmt.Errorf("explore: %s: steps[%d] (%s): %s", sc.Name, st.Index, st.Action, why)
		}
	}
	if l.Check != nil {
		return l.Check(sc)
	}
	return nil
}

// refuses says why a system with these limits cannot take st, "" when it can.
func (l *Limits) refuses(st scenarios.Step) string {
	spec := st.Spec()
	switch st.Action {
	case scenarios.Promote, scenarios.Restart:
		if !l.Promote {
			return "the system is not commanded"
		}
		if st.Params.Twin && !l.Twin {
			return "the system takes no promotion at a held term"
		}
	case scenarios.Relocate:
		pr := st.Params
		if !l.Relocate || !l.Promote {
			return "the system takes no relocation"
		}
		if pr.AbortAt != history.AbortNone || pr.LoseHandoff || pr.LoseMessage || pr.Prehydrate {
			return "a system's relocation has no abort, lost handoff or prehydration"
		}
	case scenarios.Pause, scenarios.Resume:
		if !l.Pause {
			return "the system's nodes cannot be paused"
		}
	case scenarios.Crash, scenarios.Heal:
	default:
		if spec.Build == nil || spec.Rhythm || spec.Store {
			return "not a fault of a system's path or process"
		}
	}
	return ""
}

// sysFamilies are the objects a request rule on a system's path hits: the fence objects,
// named as the bench's own protocol names them (the layout a system most often shares), or
// any key of the node's.
var sysFamilies = []family{families[0], {"any", "*", []string{"PUT", "PUT", "GET", "POST"}}}

// sysFamily is family for a system's keys.
func (g *gen) sysFamily(act string) family {
	switch act {
	case "strip-conditions", "status-409":
		return sysFamilies[0]
	}
	return sysFamilies[g.r.IntN(len(sysFamilies))]
}

// baseEvents are the events every writer holding a term emits, as far as the schedule's
// nodes report them.
func (g *gen) baseEvents() []history.SignalKind {
	if l := g.o.System; l != nil {
		return slices.DeleteFunc(slices.Clone(base), func(e history.SignalKind) bool { return !l.event(e) })
	}
	return base
}
