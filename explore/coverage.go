package explore

import (
	"slices"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
)

var phases = []string{"claim", "seal", "sync", "cas", "transfer", "handoff", "revert", "gc", "hydrate", "recover"}

var kinds = []string{
	// request rules
	"drop-response", "drop-request", "status-403", "status-404", "status-409", "status-412", "status-500", "status-503", "delay", "duplicate",
	"fail-delete-keys", "strip-conditions", "misdirect",
	// network faults
	"partition-refuse", "partition-blackhole", "one-way", "latency", "reset", "flap",
	// protocol faults
	"pause", "crash",
	// store faults
	"drive-offline", "store-restart",
}

// Phases are the protocol phases coverage counts, in display order.
func Phases() []string { return slices.Clone(phases) }

// Kinds are the fault kinds Generate can draw, in display order: the coverage rows.
func Kinds() []string { return slices.Clone(kinds) }

// FaultKind is the coverage row of a step's fault: the rule's action for a request rule
// ("status-409" for a status), the mode of a partition ("partition-blackhole"), the action
// otherwise; "" for a step that injects no fault (promote, relocate, ...).
func FaultKind(st scenarios.Step) string {
	switch {
	case !st.Spec().Fault:
		return ""
	case st.Action == scenarios.HTTP:
		return httpKind(st.Params.Rule)
	case st.Action == scenarios.Partition:
		mode := st.Params.Mode
		if mode == "" {
			mode = "refuse"
		}
		return "partition-" + mode
	}
	return string(st.Action)
}

// span is one writer's stay in one phase.
type span struct {
	writer, phase string
	from, to      time.Duration
}

// phaseOf is the phase an event puts its writer in, "" for none.
func phaseOf(e history.Event) string {
	switch e.Kind {
	case history.Claim:
		if e.Detail == "seal" {
			return "seal"
		}
		return "claim"
	case history.Sync:
		return "sync"
	case history.CAS:
		return "cas"
	case history.Transfer:
		return "transfer"
	case history.Handoff:
		return "handoff"
	case history.Revert:
		return "revert"
	case history.Collect:
		return "gc"
	case history.Hydrate:
		if e.Detail == "recovery" {
			return "recover"
		}
		return "hydrate"
	case history.RestoreRead:
		if e.Term == 0 {
			return "recover"
		}
	}
	return ""
}

// CoverageOf counts which of the scenario's fault kinds met which protocol phases in one
// recorded run. A request rule meets a phase when a ledger entry it fired on arrived while
// that writer was in the phase; a window fault (from its fault-start to its fault-end, or
// the end of the history) meets every phase span of its writer it overlaps, a store fault
// those of every writer; a crash meets the spans open at its instant. PhaseSeen is 1 for
// every phase the history reached.
func CoverageOf(sc *scenarios.Scenario, events []history.Event, ledger []history.LedgerEntry) outcome.Coverage {
	cov := outcome.Coverage{Faults: Kinds(), Phases: Phases(), Hits: map[string]map[string]int{}, PhaseSeen: map[string]int{}}
	var spans []span
	var end time.Duration
	for _, e := range events {
		end = max(end, e.Complete, e.Invoke)
		if p := phaseOf(e); p != "" {
			spans = append(spans, span{e.Writer, p, e.Invoke, max(e.Complete, e.Invoke)})
			cov.PhaseSeen[p] = 1
		}
	}
	rules, opened := map[string]string{}, map[string]string{}
	for _, st := range sc.Steps {
		switch k := FaultKind(st); {
		case k == "":
		case st.Action == scenarios.HTTP:
			rules[st.FaultName()] = k
		default:
			opened[st.FaultName()] = k
		}
	}
	for _, l := range ledger {
		if k, ok := rules[l.Rule]; ok && l.Rule != "" {
			met := map[string]bool{}
			for _, s := range spans {
				if s.writer == l.Writer && s.from <= l.Time && l.Time <= s.to && !met[s.phase] {
					met[s.phase] = true
					cov.Add(k, s.phase, 1)
				}
			}
		}
	}
	for _, w := range windows(events, opened, end) {
		for _, s := range spans {
			if w.writer != "" && s.writer != w.writer {
				continue
			}
			if s.from <= w.to && w.from <= s.to {
				cov.Add(w.phase, s.phase, 1)
			}
		}
	}
	return cov
}

// windows pairs each fault-start of a network, protocol or store fault with its fault-end (the end of the
// history when it has none). A window's phase field holds the fault kind; a crash's window
// is its instant.
func windows(events []history.Event, kindOf map[string]string, end time.Duration) []span {
	var out []span
	open := map[[2]string]int{} // (fault, writer) -> index in out of the window still open
	for _, e := range events {
		k, ok := kindOf[e.Detail]
		if !ok {
			continue
		}
		key := [2]string{e.Detail, e.Writer}
		switch e.Kind {
		case history.FaultStart:
			if k == "crash" {
				out = append(out, span{e.Writer, k, e.Invoke, e.Invoke})
				continue
			}
			open[key] = len(out)
			out = append(out, span{e.Writer, k, e.Invoke, end})
		case history.FaultEnd:
			if i, ok := open[key]; ok {
				out[i].to = e.Invoke
				delete(open, key)
			}
		}
	}
	return out
}
