package runner

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/sim"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/system"
)

// sysPaths are the fault paths of a system's nodes: network ones (Toxiproxy and the HTTP
// fault proxy) whose address a node's process is given as its endpoint, or, on the simulated
// stack, simulated ones an in-process node makes its store calls on, with the scenario's
// clock. Both keep the ledger.
type sysPaths struct {
	net    *netpath.Bench
	sim    *sim.Bench
	cfg    store.Config
	prefix string
	clock  system.Clock // the scenario's, on the simulated stack; nil elsewhere
}

// sysPathOptions are what a cell's paths record into; zero for the probe's.
type sysPathOptions struct {
	clock  *wait.Clock
	now    func() time.Duration
	rng    *rand.Rand
	record func(history.Event)
	guard  *guard.Sink
}

// openSysPaths builds the paths of nodes under prefix on the runner's stack.
func (r *runner) openSysPaths(prefix string, o sysPathOptions) (*sysPaths, error) {
	cfg := r.env.Config()
	p := &sysPaths{cfg: cfg, prefix: prefix}
	if s, ok := r.env.(*env.Sim); ok {
		b, err := sim.New(s.Mem, sim.Options{Prefix: prefix, Clock: o.clock, Now: o.now, Record: o.record, Timeout: storeTimeout})
		if err != nil {
			return nil, err
		}
		p.sim = b
		if o.clock != nil {
			now := o.now
			if now == nil {
				now = o.clock.Stopwatch()
			}
			p.clock = sysClock{o.clock, now}
		}
		return p, nil
	}
	b, err := netpath.New(netpath.Options{Upstream: r.env.Upstream(), Bucket: cfg.Bucket, Prefix: prefix,
		Clock: o.now, Rand: o.rng, Record: o.record, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey,
		SessionToken: cfg.SessionToken, UpstreamTLS: env.UpstreamTLS(cfg), CA: r.ca, Guard: o.guard})
	if err != nil {
		return nil, err
	}
	p.net = b
	return p, nil
}

// config is what node id is told: on a network path, its path as endpoint with the path's
// own credential, the bucket and the prefix; on a simulated one, the path itself as its
// store and the scenario's clock.
func (p *sysPaths) config(id string) (system.Config, error) {
	if p.sim != nil {
		return system.Config{Node: id, Region: p.cfg.RegionOrDefault(), Bucket: p.cfg.Bucket, Prefix: p.prefix,
			Store: p.sim.Path(id), Clock: p.clock}, nil
	}
	np, err := p.net.Path(id)
	if err != nil {
		return system.Config{}, fmt.Errorf("fault path for %s: %w", id, err)
	}
	ak, sk := np.Credentials()
	return system.Config{Node: id, Endpoint: "http://" + np.Addr(), Region: p.cfg.RegionOrDefault(), Bucket: p.cfg.Bucket,
		Prefix: p.prefix, AccessKey: ak, SecretKey: sk}, nil
}

// route is node id's path, where its network and request faults open.
func (p *sysPaths) route(id string) (route, error) {
	if p.sim != nil {
		return p.sim.Path(id), nil
	}
	return p.net.Path(id)
}

func (p *sysPaths) ledger() []history.LedgerEntry {
	if p.sim != nil {
		return p.sim.Ledger()
	}
	return p.net.Ledger()
}

func (p *sysPaths) drain(ctx context.Context) error {
	if p.sim != nil {
		return p.sim.Drain(ctx)
	}
	return p.net.Drain(ctx)
}

func (p *sysPaths) close() {
	if p.sim != nil {
		_ = p.sim.Close()
		return
	}
	_ = p.net.Close()
}

// sysClock is a run's scenario clock as an in-process node sees it.
type sysClock struct {
	c   *wait.Clock
	now func() time.Duration
}

func (k sysClock) Now() time.Duration                              { return k.now() }
func (k sysClock) Sleep(ctx context.Context, d time.Duration) bool { return k.c.For(ctx, d) }

// systemStack refuses, as bad input, a stack the system's nodes cannot reach: the simulated
// stack for a process (it has no endpoint; an in-process node runs on it), and an HTTPS
// store (a system's paths are plain HTTP for now).
func systemStack(e env.Env, l system.Launcher) error {
	if _, ok := e.(*env.Sim); ok {
		if l != nil && system.RunsInProcess(l) {
			return nil
		}
		return fmt.Errorf("%w: a system's process runs against a real store: the simulated stack has no endpoint its nodes could reach (a Go system in process runs on it)", outcome.ErrBadInput)
	}
	if env.UpstreamTLS(e.Config()) != nil {
		return fmt.Errorf("%w: a system runs over plain-HTTP fault paths only for now; the store speaks HTTPS", outcome.ErrBadInput)
	}
	return nil
}
