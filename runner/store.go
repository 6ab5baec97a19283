package runner

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencebench/fencebench/compose"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/scenarios"
)

// storeEnv is the store of a cell whose scenario acts on the store itself: the run's store,
// or a MinIO of the cell's own with the drives the scenario declares. While a declared
// store-restart is under way, the store counts as alive: the liveness watch does not turn the
// restart into a harness error (a restart that fails is one, through its step).
type storeEnv struct {
	env.Env
	faults     env.StoreFaults // nil when the store cannot be faulted from inside
	shared     bool            // the run's own store
	err        error           // why the cell cannot run its store steps
	restarting atomic.Int32
	pending    sync.WaitGroup // store steps under way
}

// Alive implements env.Env.
func (s *storeEnv) Alive() bool { return s.restarting.Load() > 0 || s.Env.Alive() }

// restart restarts the server, holding the liveness watch off meanwhile.
func (s *storeEnv) restart(ctx context.Context, down time.Duration) error {
	s.restarting.Add(1)
	defer s.restarting.Add(-1)
	return s.faults.Restart(ctx, down)
}

// actsOnStore reports whether a scenario has steps on the store itself or declares drives.
func actsOnStore(sc *scenarios.Scenario) bool {
	if sc.Store.Drives > 1 {
		return true
	}
	for _, st := range sc.Steps {
		if st.Spec().Store {
			return true
		}
	}
	return false
}

// slowsDrives reports whether a scenario slows a drive: its store's drives must be served
// through FUSE.
func slowsDrives(sc *scenarios.Scenario) bool {
	for _, st := range sc.Steps {
		if st.Action == scenarios.DriveSlow {
			return true
		}
	}
	return false
}

// fuseUsable says why drives cannot be served through FUSE here (nil when they can).
var fuseUsable = compose.FUSEUsable

// slowable reports whether a store's drives can be slowed.
func slowable(sf env.StoreFaults) bool {
	s, ok := sf.(env.DriveSlower)
	return ok && s.Slowable()
}

// forStore returns the runner a cell of sc runs with: r, or for a scenario that acts on the
// store a copy whose store is a storeEnv, and what to stop after the cell. A scenario that
// declares store.drives runs on the run's store when that is a local MinIO with exactly those
// drives, else on a local MinIO of its own (the same binary) when the run's stack is local.
// A scenario that slows a drive needs drives served through FUSE, which the run's store
// has only when started so: else it gets a MinIO of its own whose drives are.
func (r *runner) forStore(ctx context.Context, sc *scenarios.Scenario) (*runner, func()) {
	if _, ok := r.env.(*storeEnv); ok || !actsOnStore(sc) {
		return r, func() {}
	}
	rr := *r
	se := &storeEnv{Env: r.env, shared: true}
	rr.env = se
	sf, local := r.env.(env.StoreFaults)
	switch {
	case !local:
		se.err = fmt.Errorf("scenario %s acts on the store itself (its drives or its process): it needs the local stack (--stack local), not %s",
			sc.Name, r.env.Info().Stack)
		return &rr, func() {}
	case sc.Store.Drives <= 1 || sf.Drives() == sc.Store.Drives && (!slowsDrives(sc) || slowable(sf)):
		se.faults = sf
		return &rr, func() {}
	}
	srv, err := compose.StartLocal(ctx, compose.LocalOptions{Drives: sc.Store.Drives, SlowableDrives: slowsDrives(sc)})
	if err != nil {
		se.err = fmt.Errorf("scenario %s needs a MinIO over %d drives (store.drives): %v", sc.Name, sc.Store.Drives, err)
		return &rr, func() {}
	}
	own := env.Local{Local: srv}
	se.Env, se.faults, se.shared = own, own, false
	rr.down = &downState{} // its own store: its own health
	r.log.Info("cell store started", "scenario", sc.Name, "endpoint", srv.Endpoint, "drives", srv.Drives(), "fuse", srv.Slowable())
	return &rr, srv.Stop
}

// storeReady is the harness error of a cell whose scenario acts on a store it cannot act on.
func (cr *cellRun) storeReady() error {
	if se, ok := cr.r.env.(*storeEnv); ok && se.err != nil {
		return harnessf("%v", se.err)
	}
	return nil
}

// storeFaults is the store the cell's store steps act on; nil (the cell failed) when none.
func (cr *cellRun) storeFaults(st scenarios.Step) *storeEnv {
	se, ok := cr.r.env.(*storeEnv)
	if !ok || se.faults == nil {
		cr.fail(fmt.Errorf("step %d (%s) acts on the store itself: it needs the local stack", st.Index, st.Action))
		return nil
	}
	return se
}

// inStore runs a store step in the background, counted so that healStore waits for it.
func (cr *cellRun) inStore(se *storeEnv, fn func()) {
	se.pending.Add(1)
	cr.background(func() {
		defer se.pending.Done()
		fn()
	})
}

// healStore waits for the store steps under way and puts every drive back.
func (cr *cellRun) healStore() {
	if se, ok := cr.r.env.(*storeEnv); ok {
		se.pending.Wait()
		if err := cr.storeSet().CloseLayer(scenarios.StoreLayer); err != nil {
			cr.fail(err)
		}
	}
}

// storeSet is the fault set of the store steps: one per cell, on the store.
func (cr *cellRun) storeSet() *faults.Set {
	cr.mu.Lock()
	defer cr.mu.Unlock()
	if cr.held["\x00store"] == nil {
		cr.held["\x00store"] = faults.NewSet("the store", nil, cr.record)
	}
	return cr.held["\x00store"]
}

// The store steps. A drive goes offline as a fault of the store's set, healed (the drive put
// back) by its window, a drive-online step or the end of the schedule; a drive is slowed the
// same way, healed (made fast again) by its window or the end of the schedule; a restart is a
// one-off fault. Each but drive-slow (which takes effect at once) runs in the background: the
// store takes a moment to notice a drive or to start.
var storeHandlers = map[scenarios.Action]func(ctx context.Context, cr *cellRun, st scenarios.Step){
	scenarios.DriveOffline: func(_ context.Context, cr *cellRun, st scenarios.Step) {
		se, d := cr.storeFaults(st), st.Params.Drive
		if se == nil {
			return
		}
		cr.inStore(se, func() {
			cr.open(st, faults.FuncFault(st.FaultName(), scenarios.StoreLayer,
				func() error { return se.faults.DriveOffline(d) }, func() error { return se.faults.DriveOnline(d) }))
		})
	},
	scenarios.DriveOnline: func(_ context.Context, cr *cellRun, st scenarios.Step) {
		se, d := cr.storeFaults(st), st.Params.Drive
		if se == nil {
			return
		}
		cr.inStore(se, func() {
			set, healed := cr.storeSet(), false
			for _, name := range set.Names() {
				if strings.HasPrefix(name, fmt.Sprintf("%s:drive%d@", scenarios.DriveOffline, d)) {
					healed = true
					if err := set.Close(name); err != nil {
						cr.fail(err)
					}
				}
			}
			if !healed {
				if err := se.faults.DriveOnline(d); err != nil {
					cr.fail(err)
				}
			}
		})
	},
	scenarios.DriveSlow: func(_ context.Context, cr *cellRun, st scenarios.Step) {
		se, d := cr.storeFaults(st), st.Params.Drive
		if se == nil {
			return
		}
		slow, ok := se.faults.(env.DriveSlower)
		if !ok || !slow.Slowable() {
			cr.fail(fmt.Errorf("step %d (%s): the store's drives are not served through FUSE", st.Index, st.Action))
			return
		}
		cr.open(st, faults.FuncFault(st.FaultName(), scenarios.StoreLayer,
			func() error { return slow.DriveSlow(d, st.Params.Delay) }, func() error { return slow.DriveSlow(d, 0) }))
	},
	scenarios.StoreRestart: func(ctx context.Context, cr *cellRun, st scenarios.Step) {
		se := cr.storeFaults(st)
		if se == nil {
			return
		}
		cr.inStore(se, func() {
			cr.open(st, faults.FuncFault(st.FaultName(), scenarios.StoreLayer,
				func() error { return se.restart(ctx, st.Params.Down) }, nil))
		})
	},
}

func init() {
	for a, h := range storeHandlers {
		handlers[a] = h
	}
}
