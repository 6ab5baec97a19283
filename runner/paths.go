package runner

import (
	"context"
	"crypto/x509"
	"math/rand/v2"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/sim"
)

// paths are the fault paths of one cell: the network ones (Toxiproxy and the HTTP fault
// proxy, package faults) or the simulated ones (package sim). Both keep the ledger.
type paths interface {
	Ledger() []history.LedgerEntry
	// Drain waits until nothing a writer sent is still on its way to the store.
	Drain(ctx context.Context) error
	Close() error
}

// netPaths are real fault paths: a writer's client dials through its path.
type netPaths interface {
	paths
	Path(writer string) (*netpath.Path, error)
	RootCAs() *x509.CertPool
}

// simPaths are simulated fault paths: the path is the writer's store.
type simPaths interface {
	paths
	Path(writer string) *sim.Path
}

// route is one writer's path, whichever kind: where its faults open.
type route interface {
	Faults() *faults.Set
}

var (
	_ netPaths = (*netpath.Bench)(nil)
	_ simPaths = (*sim.Bench)(nil)
)

// clock is the scenario time of the run's store: the simulated stack's scaled clock, real
// time (nil) otherwise.
func (r *runner) clock() *wait.Clock {
	if s, ok := r.env.(*env.Sim); ok {
		return s.Clock()
	}
	return nil
}

// openPaths builds the cell's fault paths under prefix: simulated ones on the simulated
// stack, Toxiproxy and the HTTP fault proxy otherwise.
func (cr *cellRun) openPaths(prefix string, rng *rand.Rand) error {
	if s, ok := cr.r.env.(*env.Sim); ok {
		b, err := sim.New(s.Mem, sim.Options{Prefix: prefix, Clock: cr.clock, Now: cr.rec.Now, Record: cr.record,
			Timeout: storeTimeout})
		if err != nil {
			return harnessf("simulated paths: %v", err)
		}
		cr.fb = b
		return nil
	}
	cfg := cr.r.env.Config()
	b, err := netpath.New(netpath.Options{Upstream: cr.r.env.Upstream(), Bucket: cfg.Bucket, Prefix: prefix,
		Clock: cr.rec.Now, Rand: rng, Record: cr.record, AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey,
		SessionToken: cfg.SessionToken, UpstreamTLS: env.UpstreamTLS(cfg), CA: cr.r.ca, Guard: cr.guard})
	if err != nil {
		return harnessf("fault paths: %v", err)
	}
	cr.fb = b
	return nil
}
