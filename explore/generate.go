package explore

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// GenOptions shape the schedules Generate draws.
type GenOptions struct {
	// Variant is the protocol variant being explored ("" is fence.Correct). Rules that strip
	// preconditions are drawn only for fence.AcceptUnenforcedStore, whose schedules then
	// allow an unenforcing store.
	Variant fence.Variant
	// Duration is the schedule's length; 0 means 3s.
	Duration time.Duration
	// MaxWriters bounds the declared writers, 1 to 4 (the auditor is implicit); 0 means 4.
	MaxWriters int
	// Drives allows store-layer steps (drive-offline, store-restart) on an erasure-coded
	// store; without it none is drawn.
	Drives bool
	// System, when set, draws schedules for a system under test instead of the simulated
	// copies: only the steps it can take (see Limits).
	System *Limits
	// Misdirect draws misdirected reads of the fence keys (faults.Misdirect) among the
	// request rules: the simulated stack carries them, a network stack does not.
	Misdirect bool
}

// unenforcedVariant is the one variant whose schedules may strip preconditions.
const unenforcedVariant = fence.AcceptUnenforcedStore

// Kinds a seed can enable; each draws a step of its own shape.
const (
	kPromote   = "promote"
	kPartition = "partition"
	kOneWay    = "one-way"
	kLatency   = "latency"
	kReset     = "reset"
	kFlap      = "flap"
	kPause     = "pause"
	kCrash     = "crash"
	kRelocate  = "relocate"
	kGC        = "gc"
	kRefresh   = "refresh"
	kRecover   = "recover"
	kHTTP      = "http"
	kDrive     = "drive-offline"
	kStoreRst  = "store-restart"
)

var baseKinds = []string{kPromote, kPartition, kOneWay, kLatency, kReset, kFlap, kPause, kCrash,
	kRelocate, kGC, kRefresh, kRecover, kHTTP}

// Generate draws the fault schedule of one seed. The same seed and options always give the
// same scenario. The scenario is built, marshalled and parsed back by the loader, so what
// it returns is exactly what `fencebench validate` accepts from its text (Raw).
func Generate(seed uint64, o GenOptions) (*scenarios.Scenario, error) {
	o = o.normalized()
	g := newGen(seed, o)
	sc := g.scenario()
	data, err := scenarios.Marshal(sc)
	if err != nil {
		return nil, err
	}
	parsed, err := scenarios.Parse(sc.Name+".yaml", data, scenarios.Options{Variants: variantNames()})
	if err != nil {
		return nil, err
	}
	if err := o.System.check(parsed); err != nil {
		return nil, fmt.Errorf("explore: seed %d drew a step the system cannot take (a generator bug): %w", seed, err)
	}
	return parsed, nil
}

func (o GenOptions) normalized() GenOptions {
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if o.MaxWriters <= 0 || o.MaxWriters > 4 {
		o.MaxWriters = 4
	}
	return o
}

func variantNames() []string {
	var out []string
	for _, v := range fence.Variants() {
		out = append(out, string(v.Name))
	}
	return out
}

// gen is the state of one draw: the swarm's weights, the steps drawn so far and what the
// shape asks of the schedule. The random streams are its dice (dice.go) and the writers, their
// terms and the events the steps make them emit are its cast (cast.go); gen's own methods are
// the kinds and shapes that draw steps.
type gen struct {
	*dice          // the random streams
	c        *cast // the writers, their terms and the events the steps make them emit
	o        GenOptions
	seed     uint64
	weights  map[string]int // enabled kinds and their weights
	httpActs map[string]int // enabled http actions and their weights
	steps    []scenarios.Step
	rules    int
	strip    bool
	shapeOf  string // the shape drawn first, "" for none
	quiet    bool   // the shape needs a schedule without client traffic
	clean    bool   // only protocol steps, no faults: the liveness bound is judged
	sole     bool   // the shape's steps are the whole schedule
	// minDuration is the shortest schedule the shape's steps can play out in, 0 for any.
	minDuration time.Duration
	serving     string         // the copy the schedule must end with serving, "" when it cannot say
	stopped     bool           // held-fence-read's overtaker stops after its sync (stopOvertaker)
	relocs      map[string]int // relocations drawn per source (relocationFault)
}

func newGen(seed uint64, o GenOptions) *gen {
	return &gen{dice: newDice(seed), c: newCast(), o: o, seed: seed}
}

// scenario draws the whole schedule: the swarm first, then writers, traffic and steps.
func (g *gen) scenario() *scenarios.Scenario {
	g.drawSwarm()
	writers := g.drawWriters()
	g.drawClean()
	g.steps = g.drawShape()
	sc := &scenarios.Scenario{
		Name:     fmt.Sprintf("explore-%d", g.seed),
		Seed:     g.seed,
		Duration: g.o.Duration,
		Protocol: string(g.o.Variant),
		Writers:  writers,
		Traffic:  g.drawTraffic(),
		Expect:   scenarios.Expect{Verdict: "pass", FaultsMustFire: "none"},
	}
	if sc.Protocol == "" {
		sc.Protocol = string(fence.Correct)
	}
	if g.quiet {
		sc.Traffic.Clients = 0
	}
	if g.clean {
		sc.Expect.MaxTimeToFence = cleanTimeToFence
		if g.o.System == nil {
			// A system's nodes acknowledge at their own pace, in real time: only the
			// simulated copies' is the bench's to bound.
			sc.Expect.MaxTimeToAck = cleanTimeToAck
		}
	}
	n := 1 + g.r.IntN(8)
	if len(g.steps) > 0 {
		n = min(len(g.steps)+g.r.IntN(4), maxSteps)
	}
	if g.sole {
		n = len(g.steps)
	}
	sc.Expect.Serving = g.serving
	// Once the schedule's faults heal, the simulated copies must settle and serve; a
	// system's nodes have no state the bench can look at.
	sc.Expect.ServesAfterHeal = g.o.System == nil
	sc.Duration = max(sc.Duration, g.minDuration)
	for tries := 0; len(g.steps) < n && tries < 4*n; tries++ {
		g.drawStep(n - len(g.steps))
	}
	if len(g.steps) == 0 {
		g.steps = append(g.steps, g.latencyFallback())
	}
	if rf, ok := g.readFault(g.steps); ok && len(g.steps) < maxSteps {
		g.steps = append(g.steps, rf)
	}
	sc.Steps = g.steps
	g.pair(sc)
	g.script(sc)
	g.silence(sc)
	g.steps = sc.Steps
	for i := range g.steps {
		g.steps[i].Index = i
	}
	for _, st := range g.steps {
		if st.Spec().Store {
			sc.Store.Drives = 4
		}
	}
	sc.Store.AllowUnenforced = g.strip
	sc.Description = g.describe()
	return sc
}

// pair gives one schedule in three with a request rule a second rule whose window meets the
// first: the same trigger on the other side of the same kind of file (an upload and its
// read-back, a listing and the writes into what it lists), half the time with a crash of the
// writer before its next sync (pairRule). Two coordinated faults are a draw of their own, not
// only something guided exploration may stumble on. A shape that is the whole schedule and a
// system's schedule (whose capabilities a crash may exceed) are left as drawn.
func (g *gen) pair(sc *scenarios.Scenario) {
	if g.sole || g.o.System != nil || g.pairs.IntN(3) != 0 {
		return
	}
	pairRule(sc, g.pairs, g.seed, g.o)
}

// cleanKinds are the kinds a clean schedule draws: protocol steps only, no fault on a path.
var cleanKinds = []string{kPromote, kRefresh, kGC, kRecover}

// cleanTimeToFence is the liveness bound of a clean schedule: with no fault on any path a
// superseded writer meets its fate at its next fence write, one sync interval (at most
// 100ms) after its successor's sweep.
const cleanTimeToFence = time.Second

// cleanTimeToAck is the acknowledgement bound of a clean schedule: a writer serving with no
// fault and no rival syncs every sync interval (at most 100ms) or sooner, so an op it is
// given is acknowledged well within a second; one it refuses, or buffers and never
// acknowledges, fails TimeToAck.
const cleanTimeToAck = time.Second

// drawClean makes one seed in five clean: only protocol steps (promotions, segment work,
// recoveries; no crash, whose in-flight requests still land) and the liveness bound, so a superseded writer that
// keeps retrying instead of standing down is caught.
func (g *gen) drawClean() {
	if !g.chance(0.2) {
		return
	}
	if l := g.o.System; l != nil && !l.Promote {
		return // a system that elects itself has no protocol step to take
	}
	g.clean = true
	w := map[string]int{}
	for _, k := range cleanKinds {
		if n, ok := g.weights[k]; ok {
			w[k] = n
		}
	}
	if len(w) == 0 {
		w[kPromote] = 1
	}
	g.weights = w
}

// drawSwarm enables each fault kind with probability one half, at a weight of 1 to 4, and
// likewise each http action (swarm testing: many seeds reach rare combinations).
func (g *gen) drawSwarm() {
	kinds := slices.Clone(baseKinds)
	if l := g.o.System; l != nil {
		kinds = l.kinds()
	} else if g.o.Drives {
		kinds = append(kinds, kDrive, kStoreRst)
	}
	g.weights = g.enable(kinds)
	acts := slices.Clone(httpActions)
	if g.o.Variant == unenforcedVariant {
		acts = append(acts, "strip-conditions")
	}
	if g.o.Misdirect && g.o.System == nil {
		acts = append(acts, "misdirect")
	}
	g.httpActs = g.enable(acts)
}

// drawWriters declares the writers: a primary "a" at a drawn first term and up to
// MaxWriters-1 standbys.
func (g *gen) drawWriters() []scenarios.Writer { return g.c.draw(g.dice, g.o.MaxWriters) }

// silence runs half the schedules that can do without client traffic without it (about one
// in twenty-five of all): a copy that is given no op syncs
// nothing, so its fence stays where a relocation, a claim or a script left it until the copy
// next writes (the heal probe's op at the latest), and the requests a rule counts are the
// protocol's own. A schedule whose steps wait for an acknowledgement, a sync or a CAS, a clean
// one (whose acknowledgement bound wants ops) and a system's keep their traffic. Drawn from a
// stream of its own, so every other draw of a seed stays as it was.
func (g *gen) silence(sc *scenarios.Scenario) {
	if g.quiet || g.clean || g.o.System != nil || g.silent.IntN(2) != 0 {
		return
	}
	for _, st := range sc.Steps {
		for _, t := range []*scenarios.EventTrigger{st.After, st.Params.Until} {
			if t != nil && (needsOps[t.Event] || needsOps[t.Or]) {
				return
			}
		}
	}
	sc.Traffic.Clients = 0
}

// needsOps are the events a copy emits only when it is given ops.
var needsOps = map[history.SignalKind]bool{history.SigAcked: true, history.SigSynced: true, history.SigCAS: true}

func (g *gen) drawTraffic() scenarios.Traffic {
	return scenarios.Traffic{
		Clients:      1 + g.r.IntN(4),
		Rate:         float64(50 + 10*g.r.IntN(26)),
		SyncEvery:    5 + g.r.IntN(36),
		SyncInterval: g.ms(20, 100),
	}
}

func (g *gen) describe() string {
	kinds := make([]string, 0, len(g.weights))
	for k := range g.weights {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	acts := make([]string, 0, len(g.httpActs))
	for k := range g.httpActs {
		acts = append(acts, k)
	}
	slices.Sort(acts)
	variant := g.o.Variant
	if variant == "" {
		variant = fence.Correct
	}
	extra := ""
	if g.shapeOf != "" {
		extra += " Shape: " + g.shapeOf + "."
	}
	if g.clean {
		extra += " Clean: no faults, the liveness bound is judged."
	}
	subject := "the " + string(variant) + " protocol"
	if g.o.System != nil {
		subject = "a system under test"
	}
	return fmt.Sprintf("Generated from seed %d for %s. Enabled kinds: %s; http actions: %s.%s",
		g.seed, subject, strings.Join(kinds, ", "), strings.Join(acts, ", "), extra)
}

func remove(xs []string, x string) []string {
	return slices.DeleteFunc(slices.Clone(xs), func(y string) bool { return y == x })
}
