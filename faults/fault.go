package faults

import (
	"fmt"
	"time"
)

// Layer is where a fault acts. Its value is what attestation and the reports show.
type Layer string

const (
	// L4 faults act on a writer's connections (partition, latency, bandwidth, reset, ...).
	L4 Layer = "l4"
	// L7 faults act on individual requests ([Rule]).
	L7 Layer = "l7"
	// Protocol faults act on the writer itself (a pause, a crash) or on the handoffs it sends
	// another writer ([HandoffFault]).
	Protocol Layer = "protocol"
)

// Fault is one fault with its whole life: its name (unique among the open faults of a
// [Set]), its layer, how it is put in place and how it is lifted. A fault acts on the target
// of the set it is opened in: a [github.com/fencebench/fencebench/faults/netpath.Path] (Toxiproxy at L4, the bench's HTTP proxy at L7) or
// any other target offering the capability the fault needs ([Network], [Requests]), such as
// an in-process store. Build faults with the constructors of this package.
type Fault interface {
	Name() string
	Layer() Layer
	inject(target any) error
	// heal lifts the fault. cleared reports that the target can only lift the fault's layer as
	// a whole (a Toxiproxy path replaces its proxy), so every other fault of the layer is gone
	// too and the set injects the ones still open again.
	heal(target any) (cleared bool, err error)
}

// Network is the capability of a target that carries a writer's connections. [github.com/fencebench/fencebench/faults/netpath.Path]
// implements it with an embedded Toxiproxy proxy; Heal lifts every network fault at once.
type Network interface {
	Partition(PartitionMode) error
	Latency(time.Duration) error
	Bandwidth(kbps int64) error
	Reset() error
	SlowClose(time.Duration) error
	Heal() error
}

// Requests is the capability of a target that applies request-level rules.
type Requests interface {
	AddRule(Rule) error
	RemoveRule(name string) error
}

type fault struct {
	name  string
	layer Layer
	in    func(target any) error
	out   func(target any) (bool, error)
}

func (f *fault) Name() string                         { return f.name }
func (f *fault) Layer() Layer                         { return f.layer }
func (f *fault) inject(t any) error                   { return f.in(t) }
func (f *fault) heal(t any) (cleared bool, err error) { return f.out(t) }

// network builds an L4 fault that needs the capability C of its target and is lifted by
// healing the target's network layer as a whole.
func network[C any](name, what string, apply func(C) error) Fault {
	return &fault{name: name, layer: L4,
		in: func(t any) error {
			c, ok := t.(C)
			if !ok {
				return fmt.Errorf("faults: %s: the target (%T) cannot %s", name, t, what)
			}
			return apply(c)
		},
		out: func(t any) (bool, error) {
			n, ok := t.(Network)
			if !ok {
				return false, fmt.Errorf("faults: %s: the target (%T) cannot heal its network", name, t)
			}
			return true, n.Heal()
		}}
}

// PartitionFault cuts the target's connections in the given mode ([github.com/fencebench/fencebench/faults/netpath.Path.Partition]).
func PartitionFault(name string, mode PartitionMode) Fault {
	return network(name, "partition", func(n Network) error { return n.Partition(mode) })
}

// LatencyFault delays the request direction by d ([github.com/fencebench/fencebench/faults/netpath.Path.Latency]).
func LatencyFault(name string, d time.Duration) Fault {
	return network(name, "delay", func(n Network) error { return n.Latency(d) })
}

// BandwidthFault limits each direction to kbps kilobytes per second ([github.com/fencebench/fencebench/faults/netpath.Path.Bandwidth]).
func BandwidthFault(name string, kbps int64) Fault {
	return network(name, "limit bandwidth", func(n Network) error { return n.Bandwidth(kbps) })
}

// ResetFault resets every connection as soon as the client sends on it ([github.com/fencebench/fencebench/faults/netpath.Path.Reset]).
func ResetFault(name string) Fault {
	return network(name, "reset", func(n Network) error { return n.Reset() })
}

// SlowCloseFault delays the close of a connection by the store side ([github.com/fencebench/fencebench/faults/netpath.Path.SlowClose]).
func SlowCloseFault(name string, d time.Duration) Fault {
	return network(name, "slow close", func(n Network) error { return n.SlowClose(d) })
}

// RuleFault installs a request-level rule, named after it; healing it removes that rule
// alone.
func RuleFault(r Rule) Fault {
	return &fault{name: r.Name, layer: L7,
		in: func(t any) error {
			q, ok := t.(Requests)
			if !ok {
				return fmt.Errorf("faults: rule %s: the target (%T) cannot apply rules", r.Name, t)
			}
			return q.AddRule(r)
		},
		out: func(t any) (bool, error) {
			q, ok := t.(Requests)
			if !ok {
				return false, fmt.Errorf("faults: rule %s: the target (%T) cannot apply rules", r.Name, t)
			}
			return false, q.RemoveRule(r.Name)
		}}
}

// FuncFault is a fault whose target is the caller's business, typically a writer: inject
// puts it in place, heal lifts it. A nil heal makes a one-off fault (a crash): it is
// recorded when it fires and never stays open.
func FuncFault(name string, layer Layer, inject, heal func() error) Fault {
	f := &fault{name: name, layer: layer, in: func(any) error { return inject() }}
	if heal != nil {
		f.out = func(any) (bool, error) { return false, heal() }
	}
	return f
}

func oneOff(f Fault) bool {
	x, ok := f.(*fault)
	return ok && x.out == nil
}
