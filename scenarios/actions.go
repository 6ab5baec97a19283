package scenarios

import (
	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

// Action names a step action. The names are the keys of a step in a scenario file.
type Action string

// Every step action. Spec describes each one.
const (
	Partition Action = "partition"
	Heal      Action = "heal"
	Latency   Action = "latency"
	Bandwidth Action = "bandwidth"
	Reset     Action = "reset"
	SlowClose Action = "slow-close"
	Flap      Action = "flap"
	HTTP      Action = "http"
	Promote   Action = "promote"
	Relocate  Action = "relocate"
	Crash     Action = "crash"
	Restart   Action = "restart"
	Pause     Action = "pause"
	Resume    Action = "resume"
	Refresh   Action = "refresh"
	GC        Action = "gc"
	Recover   Action = "recover"
	OneWay    Action = "one-way"

	DriveOffline Action = "drive-offline"
	DriveOnline  Action = "drive-online"
	DriveSlow    Action = "drive-slow"
	StoreRestart Action = "store-restart"
)

// StoreLayer is where the store steps act: on the store itself (its drives, its process), not
// on a writer's path. They need a store the bench runs (the local stack).
const StoreLayer faults.Layer = "store"

// Spec is everything the bench knows about one step action: the parser reads its
// parameters, validation its checks, the runner its plan and its fault, the reports its
// layer. Adding a network fault kind is one entry here and one fault in package faults.
type Spec struct {
	Name        Action
	Layer       faults.Layer
	Description string
	// Params are the fields of the action's mapping form besides writer; Short also accepts
	// the short form `crash: a`.
	Params []string
	Short  bool
	// Fault: the action injects a fault that the checker attests (declared faults must
	// fire), named by Step.FaultName.
	Fault bool
	// Window: a `for` window applies, after which the fault heals.
	Window bool
	// Rhythm: the fault toggles on and off (phases Params.On, Params.Off) through its window,
	// on a rhythm the runner plans from the seed.
	Rhythm bool
	// Inline: triggered by an event with no delay, it runs on the emitting writer's
	// goroutine, so it takes effect exactly at the event.
	Inline bool
	// Store: the action acts on the store itself and names no writer.
	Store bool
	// Moves: the action can change which copy holds the chain or serves it (a promotion, a
	// relocation, a crash, a restart, a resume). What `expect.serving` says assumes every
	// such step ran; one whose event never came leaves that expectation unshown.
	Moves bool
	// Build makes the network or request fault a step injects, named by Step.FaultName; nil
	// for the actions the runner carries out on writers.
	Build func(name string, pr Params) faults.Fault

	decode func(d *decoder, pr *Params)  // the action's parameters
	check  func(v *validation, st *Step) // the checks that need the whole scenario
}

// Actions lists every step action, in reference order.
var Actions = []Spec{
	{Name: Partition, Layer: faults.L4, Fault: true, Window: true, Params: []string{"mode"},
		Description: "cut the writer's path to the store: mode refuse (connections refused) or blackhole (requests hang until the client's deadline)",
		decode:      decodePartition,
		Build: func(name string, pr Params) faults.Fault {
			mode := faults.Refuse
			if pr.Mode == "blackhole" {
				mode = faults.Blackhole
			}
			return faults.PartitionFault(name, mode)
		}},
	{Name: Heal, Layer: faults.L4, Window: true, Short: true,
		Description: "remove every network fault from the writer's path"},
	{Name: Latency, Layer: faults.L4, Fault: true, Window: true, Params: []string{"delay"},
		Description: "add a fixed delay to every response on the writer's path",
		decode:      decodeDelay,
		Build:       func(name string, pr Params) faults.Fault { return faults.LatencyFault(name, pr.Delay) }},
	{Name: Bandwidth, Layer: faults.L4, Fault: true, Window: true, Params: []string{"kbps"},
		Description: "limit the writer's path to kbps kilobytes per second",
		decode:      decodeBandwidth,
		Build:       func(name string, pr Params) faults.Fault { return faults.BandwidthFault(name, pr.KBps) }},
	{Name: Reset, Layer: faults.L4, Fault: true, Window: true, Short: true,
		Description: "reset the writer's connections",
		Build:       func(name string, pr Params) faults.Fault { return faults.ResetFault(name) }},
	{Name: SlowClose, Layer: faults.L4, Fault: true, Window: true, Params: []string{"delay"},
		Description: "delay closing the writer's connections",
		decode:      decodeDelay,
		Build:       func(name string, pr Params) faults.Fault { return faults.SlowCloseFault(name, pr.Delay) }},
	{Name: Flap, Layer: faults.L4, Fault: true, Window: true, Rhythm: true, Params: []string{"on", "off"},
		Description: "toggle a refusing partition on and off",
		decode:      decodeFlap,
		Build:       func(name string, pr Params) faults.Fault { return faults.PartitionFault(name, faults.Refuse) }},
	{Name: HTTP, Layer: faults.L7, Fault: true, Window: true, Inline: true,
		Params:      []string{"name", "match", "action", "status", "code", "delay", "until"},
		Description: "add a request-level fault rule on the writer's path",
		decode:      decodeHTTP, check: checkHTTP,
		Build: func(name string, pr Params) faults.Fault { return faults.RuleFault(pr.Rule) }},
	{Name: OneWay, Layer: faults.L4, Fault: true, Window: true, Short: true,
		Description: "let the writer's requests reach the store but drop every answer: writes are applied, the writer never hears back",
		Build:       func(name string, _ Params) faults.Fault { return faults.OneWayFault(name) }},
	{Name: Promote, Layer: faults.Protocol, Moves: true, Params: []string{"term", "twin"},
		Description: "promote a standby (or restart) to primary at a term",
		decode:      decodePromote, check: checkPromote},
	{Name: Relocate, Layer: faults.Protocol, Moves: true, Params: []string{"target", "abort", "lose_handoff", "prehydrate"},
		Description: "relocate the primary to a target copy at the same term, optionally aborting; prehydrate: the target " +
			"first hydrates while the source still serves",
		decode: decodeRelocate, check: checkRelocate},
	{Name: Crash, Layer: faults.Protocol, Moves: true, Fault: true, Short: true,
		Description: "stop the writer at once, mid-request if need be"},
	{Name: Restart, Layer: faults.Protocol, Moves: true, Params: []string{"as", "term"},
		Description: "start a new incarnation of a crashed writer at a higher term",
		decode:      decodeRestart, check: checkRestart},
	{Name: Pause, Layer: faults.Protocol, Fault: true, Window: true, Inline: true, Short: true,
		Description: "freeze the writer with its state, like a long GC pause"},
	{Name: Resume, Layer: faults.Protocol, Moves: true, Short: true,
		Description: "unfreeze a paused writer"},
	{Name: Refresh, Layer: faults.Protocol, Short: true,
		Description: "upload new segment files and publish a reference set (gated)"},
	{Name: GC, Layer: faults.Protocol, Short: true,
		Description: "collect segment files no longer referenced (gated)"},
	{Name: Recover, Layer: faults.Protocol, Params: []string{"from"},
		Description: "a copy hydrates from the store while the primary works",
		decode:      decodeRecover, check: checkRecover},
	{Name: DriveOffline, Layer: StoreLayer, Store: true, Fault: true, Window: true, Params: []string{"drive"},
		Description: "take one drive of the erasure-coded store away (needs store.drives); a for window or drive-online puts it back",
		decode:      decodeDrive, check: checkDrive},
	{Name: DriveOnline, Layer: StoreLayer, Store: true, Params: []string{"drive"},
		Description: "put a drive taken away back, with the data it held",
		decode:      decodeDrive, check: checkDrive},
	{Name: DriveSlow, Layer: StoreLayer, Store: true, Fault: true, Window: true, Params: []string{"drive", "delay"},
		Description: "make every read, write, sync, open, create, rename and removal on one drive of the erasure-coded store wait delay " +
			"(needs store.drives and FUSE: the drive is served through a FUSE loopback); a for window makes it fast again",
		decode: decodeDriveSlow, check: checkDrive},
	{Name: StoreRestart, Layer: StoreLayer, Store: true, Fault: true, Params: []string{"down"},
		Description: "kill the store's server and start it again on the same address and data after down (the local stack)",
		decode:      decodeDown},
}

// Lookup returns the spec of an action; ok is false for a name no entry has.
func Lookup(a Action) (Spec, bool) {
	for _, s := range Actions {
		if s.Name == a {
			return s, true
		}
	}
	return Spec{}, false
}

// Spec returns the spec of a step's action (the zero Spec for an unknown one).
func (st Step) Spec() Spec {
	s, _ := Lookup(st.Action)
	return s
}

func actionNames() []string {
	out := make([]string, len(Actions))
	for i, a := range Actions {
		out[i] = string(a.Name)
	}
	return out
}

// Fault is the network or request fault the step injects, nil for the other actions.
func (st Step) Fault() faults.Fault {
	if b := st.Spec().Build; b != nil {
		return b(st.FaultName(), st.Params)
	}
	return nil
}

// HandoffFault is the fault a relocate step puts on the handoffs of its source, in the
// bench's one fault model; nil when it puts none. `lose_handoff: true` (or `answer`) loses
// the target's answer: the target takes over, and the source gives up after its answer
// timeout and reverts. `lose_handoff: message` loses the message: the target never hears of
// the relocation, the source reverts after its timeout and the target is a standby again. With an abort point the abort decides what befalls the handoff (before-target-writes
// holds the message until the source has given up, after-target-acks loses the answer once
// the target has served), and lose_handoff adds nothing.
func (st Step) HandoffFault() faults.Fault {
	pr := st.Params
	if st.Action != Relocate || !pr.LoseHandoff && !pr.LoseMessage || pr.AbortAt != history.AbortNone {
		return nil
	}
	return faults.HandoffFault(st.FaultName(), faults.Handoff{LoseAnswer: pr.LoseHandoff, LoseMessage: pr.LoseMessage})
}
