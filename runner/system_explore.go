package runner

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/explore"
	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/system"
)

// sysExplore is what an exploration of a system under test holds: the system, its
// handshake, and the limits its capabilities put on the schedules drawn.
type sysExplore struct {
	so     SystemOptions
	hello  system.Hello
	limits *explore.Limits
}

// systemShrinkRuns bounds a shrink against a system: each of its runs takes the schedule's
// real seconds, where a simulated run takes milliseconds.
const systemShrinkRuns = 60

// probeForExplore starts one node of the system to learn its capabilities, and derives the
// schedules' limits from them: the kinds it can take, the events it reports, and the
// validation that refuses what it cannot run (ValidateForSystem, the check `run --system`
// makes).
func (e *exploration) probeForExplore(ctx context.Context) error {
	so := e.o.System
	if so.Launcher == nil {
		return outcome.BadInput(fmt.Errorf("explore: no system to explore"))
	}
	if so.Kill {
		return outcome.BadInput(fmt.Errorf("explore: a system is explored as it is: every schedule expects it to pass"))
	}
	if err := systemStack(e.o.Env, so.Launcher); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	r := &runner{opts: Options{Prefix: e.o.Prefix}, env: e.o.Env, dir: e.dir, log: e.log, down: &downState{}}
	hello, err := r.probeSystem(ctx, so.Launcher)
	if err != nil {
		return err
	}
	pausable := so.Launcher.Pausable()
	if msg := readRefusal(hello); msg != "" {
		return outcome.BadInput(fmt.Errorf("explore: %s", msg))
	}
	e.sys = &sysExplore{so: *so, hello: hello, limits: &explore.Limits{
		Promote: hello.Has(system.CapPromote), Twin: hello.Has(system.CapPromote) && hello.Has(system.CapTakeover),
		Pause: pausable, Events: systemEvents, Relocate: hello.Has(system.CapRelocate),
		Check: func(sc *scenarios.Scenario) error { return ValidateForSystem(sc, hello, pausable) },
	}}
	if !e.sys.limits.Promote && !hello.Has(system.CapSelfElect) {
		return outcome.BadInput(fmt.Errorf("explore: system %s declares neither %q nor %q: nothing makes one of its nodes the owner (it declares %s)",
			hello.Name, system.CapPromote, system.CapSelfElect, capList(hello)))
	}
	e.x.Variant = e.subject()
	return nil
}

// subject names what the exploration tests, for its report and the shrunk scenarios.
func (e *exploration) subject() string {
	if e.sys == nil {
		return "variant " + e.o.Variant
	}
	return fmt.Sprintf("system %s %s (%s)", e.sys.hello.Name, e.sys.hello.Version, e.sys.so.Launcher.Describe())
}

// cellVariant is the variant an exploration's cells carry: none for a system, whose
// variant is its command's business.
func (e *exploration) cellVariant() string {
	if e.sys != nil {
		return ""
	}
	return e.o.Variant
}

// gen is the generator's options for the exploration's schedules.
func (e *exploration) gen() explore.GenOptions {
	o := explore.GenOptions{Variant: fence.Variant(e.o.Variant)}
	if e.sys != nil {
		o.System = e.sys.limits
	}
	_, o.Misdirect = e.o.Env.(*env.Sim)
	return o
}

// shrinkRuns is the judge runs one shrink may spend (0: the shrinker's default).
func (e *exploration) shrinkRuns() int {
	if e.o.ShrinkRuns == 0 && e.sys != nil {
		return systemShrinkRuns
	}
	return e.o.ShrinkRuns
}

// systemRun runs one schedule against the system, unpersisted, under prefix.
func (e *exploration) systemRun(ctx context.Context, stack env.Env, sc *scenarios.Scenario, seed uint64, prefix string) *outcome.CellResult {
	r := &runner{opts: Options{Prefix: prefix}, env: stack, down: &downState{},
		dir: filepath.Join(e.dir, "scratch"), log: slog.New(slog.DiscardHandler), ephemeral: true}
	return r.systemCell(ctx, Cell{Scenario: sc, Seed: seed}, e.sys.so, e.sys.hello)
}

// systemRerun is the command that runs a shrunk failure of a system again.
func (e *exploration) systemRerun(seed uint64, file string) string {
	return strings.Join([]string{"fencebench", "run", "--system", strconv.Quote(e.sys.so.Launcher.Describe()),
		"--seed", strconv.FormatUint(seed, 10), file}, " ")
}
