package explore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// A script is several request rules on one writer's requests on one kind of file (its fence
// objects most often, else its metadata files, its .tlog files or its segment files), armed
// together and each firing once, at consecutive places in the run of that writer's requests
// on those files (any method: creates, CASes, uploads, reads, read-backs, deletes): the second
// request after the arming lost, the third refused, the fifth failed. One fault is what the
// kinds draw; a step's recovery path (a read-back after a lost answer, a retry after a failed
// read-back, the next read of a restore after a failed one) meets a second and a third fault
// only in a script. The correct protocol must come through any script: each answer is one a
// store or the network can give any request.

// scriptActs are the answers a script's places draw from: failures, lost requests and
// answers, holds, and on the fence objects of the simulated stack misdirected reads (another
// object of the folder, or a garbled body, in answer to a read: the protocol must take it for
// unrecognized, never for a verdict). Never an answer that states something false about the key (a 404 for a key
// that stands, a 412 for a CAS that held): the protocol rightly believes those and stands
// down, and a refused create or CAS is what two places of a script produce on their own (a
// lost answer, then the retry meeting its own write).
var scriptActs = []string{string(faults.DropResponse), string(faults.DropRequest), "status-500", "status-503",
	"status-403", string(faults.Delay)}

// scriptKey matches a writer's requests on fence objects, and not the listings of the fence
// prefix (which end at "fence__").
const scriptKey = "*fence__?*"

// scriptFamilies are the kinds of file a script faults, the fence three times in six.
var scriptFamilies = []family{
	{"fence", scriptKey, nil}, {"fence", scriptKey, nil}, {"fence", scriptKey, nil},
	{"metadata", families[1].key, nil}, {"tlog", families[2].key, nil}, {"segment", families[3].key, nil},
}

// script gives one schedule in four a script (scriptRules): its own stream, so every other
// draw of a seed stays as it was. A shape that is the whole schedule, a clean schedule (no
// fault, the liveness bound judged) and a system's schedule are left as drawn.
func (g *gen) script(sc *scenarios.Scenario) {
	if g.sole || g.clean || g.o.System != nil || g.scripts.IntN(4) != 0 {
		return
	}
	scriptRules(sc, g.scripts, g.seed, g.o)
}

// scriptRules adds a script of two to four faults on one kind of file of one writer that
// holds or will hold a term (or, for a kind other than the fence, recovers). It is armed
// from the start for a copy that is not primary then (its first requests are its claim when
// a step promotes it, its reads when it recovers), else at one of its claims, syncs or
// acknowledgements (a declared primary's syncs or acknowledgements: its first claim is the
// run's set-up). The first fault is at the first or second request after the arming, each
// next one right after the previous or one request later.
func scriptRules(m *scenarios.Scenario, r *rand.Rand, _ uint64, o GenOptions) bool {
	n := 2 + r.IntN(3)
	fam := scriptFamilies[r.IntN(len(scriptFamilies))]
	terms := syncers(m)
	ws := slices.Clone(terms)
	if fam.name != "fence" {
		// A recovering copy reads the .tlog and segment files too (it holds no term).
		for _, st := range m.Steps {
			if st.Action == scenarios.Recover && !slices.Contains(ws, st.Params.Writer) {
				ws = append(ws, st.Params.Writer)
			}
		}
	}
	if o.System != nil || len(ws) == 0 || len(m.Steps)+n > maxSteps {
		return false
	}
	w := ws[r.IntN(len(ws))]
	arm := scenarios.Step{Trigger: scenarios.TriggerAt, Action: scenarios.HTTP}
	declared := slices.ContainsFunc(m.Writers, func(d scenarios.Writer) bool { return d.ID == w && d.Role == "primary" })
	if declared || slices.Contains(terms, w) && r.IntN(5) >= 2 {
		ev := base[r.IntN(len(base))]
		if declared && ev == history.SigClaimed {
			// A declared primary claims while the run sets up: a fault then is the
			// harness's, not the protocol's to come through.
			ev = history.SigSynced
		}
		arm.Trigger, arm.After = scenarios.TriggerAfter, &scenarios.EventTrigger{Writer: w, Event: ev, Count: 1}
		if ev != history.SigClaimed {
			arm.After.Count = 1 + r.IntN(6)
		}
	}
	if fam.name == "fence" && slices.ContainsFunc(m.Steps, func(st scenarios.Step) bool {
		return st.Action == scenarios.Relocate && st.Params.Writer == w
	}) && r.IntN(2) == 0 {
		// A relocation source's last fence steps: its transfer (armed at its drain) or its
		// revert (armed at its transfer), with their read-backs and retries.
		ev := []history.SignalKind{history.SigDrained, history.SigTransferred}[r.IntN(2)]
		arm.Trigger, arm.After = scenarios.TriggerAfter, &scenarios.EventTrigger{Writer: w, Event: ev, Count: 1}
	}
	acts := scriptActs
	if fam.name == "fence" && o.Misdirect {
		acts = append(slices.Clone(scriptActs), string(faults.Misdirect))
	}
	id := 1
	for slices.ContainsFunc(m.Steps, func(st scenarios.Step) bool {
		return st.Action == scenarios.HTTP && strings.HasPrefix(st.Params.Rule.Name, fmt.Sprintf("script%d-", id))
	}) {
		id++
	}
	at := 1 + r.IntN(2)
	for range n {
		act := acts[r.IntN(len(acts))]
		st := arm
		if arm.After != nil {
			t := *arm.After
			st.After = &t
		}
		rule := faults.Rule{Name: fmt.Sprintf("script%d-%s-%s-%d", id, fam.name, act, at), Key: fam.key, Nth: at, Count: 1}
		if act == string(faults.Misdirect) {
			// Misdirection answers reads only: the first or second read after the arming,
			// most often the read-back of a write a place before lost its answer.
			rule.Method, rule.Nth = "GET", 1+r.IntN(2)
		}
		setAction(&rule, act, func() time.Duration { return time.Duration(10+r.IntN(30)) * 10 * time.Millisecond })
		st.Params = scenarios.Params{Writer: w, Rule: rule}
		m.Steps = append(m.Steps, st)
		at++
		if r.IntN(3) == 0 {
			at++
		}
	}
	return true
}
