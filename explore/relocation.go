package explore

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// relocationFault gives three relocations in five (a relocation kind's, a source's first) a
// request rule on one of the relocation's own requests, set inline at the source's protocol
// event so it meets that request and no other: the source's transfer (its first fence write
// after it drained), its revert (the first after it transferred, when the relocation aborts),
// the target's hydration (its first reads of one kind of segment file, or of the reference
// set's listing, once the source drained, or as the relocation starts when the target
// hydrates while the source still serves) or the target's adoption (its first fence write
// once the source transferred). The action is a 500 or 503, a lost answer, a hold, or (a
// third of the time) a 403 AccessDenied, which neither a transfer nor a hydration retries:
// the relocation then fails part way, and what its source and target do next is what the
// rule is for. Rules spread over every request meet these few too seldom. Drawn from a
// stream of its own.
func (g *gen) relocationFault(reloc scenarios.Step) (scenarios.Step, bool) {
	d, pr := g.handoffs, reloc.Params
	src, dst := pr.Writer, pr.Target
	if g.relocs == nil {
		g.relocs = map[string]int{}
	}
	g.relocs[src]++
	if g.o.System != nil || d.IntN(5) >= 3 || g.relocs[src] > 1 {
		return scenarios.Step{}, false
	}
	aborts := pr.AbortAt != history.AbortNone || pr.LoseHandoff || pr.LoseMessage
	what := []string{"transfer", "revert", "target-hydration", "target-adoption"}[d.IntN(4)]
	if what == "revert" && !aborts {
		what = "transfer"
	}
	if pr.Prehydrate && what != "target-hydration" && d.IntN(2) == 0 {
		// A prehydration's failure must leave both copies as they were: half the rules of a
		// prehydrating relocation meet its hydration.
		what = "target-hydration"
	}
	g.rules++
	r := faults.Rule{Method: "PUT", Key: "*fence__*", Header: "If-Match", Nth: 1, Count: 1 + d.IntN(3)}
	on, path := history.SigDrained, src
	switch what {
	case "revert":
		on = history.SigTransferred
	case "target-hydration":
		path = dst
		r.Method, r.Header = "GET", ""
		r.Key = []string{"*/segments/metadata/metadata__?*", "*/segments/metadata/metadata__", "*/segments/data/*"}[d.IntN(3)]
	case "target-adoption":
		on, path = history.SigTransferred, dst
	}
	// A 403 a third of the time: the transfer retries every other answer, so only a refusal
	// makes it fail, and a hydration gives up on one at once.
	act := []string{"status-500", "status-503", "status-403", "status-403", string(faults.DropResponse), string(faults.Delay)}[d.IntN(6)]
	setAction(&r, act, func() time.Duration { return time.Duration(10+d.IntN(60)) * 10 * time.Millisecond })
	r.Name = fmt.Sprintf("%s-%s-%d", act, what, g.rules)
	if what == "target-hydration" && pr.Prehydrate {
		// The target hydrates as the relocation starts, before the source drains: the rule
		// is set by the relocation's own trigger, inline, before the target's first read.
		return g.later(reloc, scenarios.HTTP, scenarios.Params{Writer: path, Rule: r}, 0), true
	}
	return scenarios.Step{Action: scenarios.HTTP, Trigger: scenarios.TriggerAfter,
		After:  &scenarios.EventTrigger{Writer: src, Event: on, Count: 1},
		Params: scenarios.Params{Writer: path, Rule: r}}, true
}
