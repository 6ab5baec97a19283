package runner

import (
	"context"
	"fmt"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/scenarios"
	"github.com/fencebench/fencebench/writers"
)

// handlers carry out the actions that are not a network or request fault: they act on the
// writers. A pause is a protocol fault opened in the writer's set, a crash a one-off one.
var handlers = map[scenarios.Action]func(ctx context.Context, cr *cellRun, st scenarios.Step){
	scenarios.Heal: func(_ context.Context, cr *cellRun, st scenarios.Step) {
		if p := cr.path(st.Params.Writer); p != nil {
			if err := p.Faults().CloseLayer(faults.L4); err != nil {
				cr.fail(err)
			}
		}
	},
	scenarios.Pause: func(_ context.Context, cr *cellRun, st scenarios.Step) {
		if w := cr.writer(st.Params.Writer); w != nil {
			cr.open(st, faults.FuncFault(st.FaultName(), faults.Protocol,
				func() error { w.Pause(); return nil }, func() error { w.Resume(); return nil }))
			cr.pausedAtStart(st.Params.Writer)
		}
	},
	scenarios.Crash: func(_ context.Context, cr *cellRun, st scenarios.Step) {
		if w := cr.writer(st.Params.Writer); w != nil {
			cr.open(st, faults.FuncFault(st.FaultName(), faults.Protocol, func() error { w.Crash(); return nil }, nil))
		}
	},
	scenarios.Resume: func(_ context.Context, cr *cellRun, st scenarios.Step) {
		w := cr.writer(st.Params.Writer)
		if w == nil {
			return
		}
		// The pause this ends is healed in the writer's set, which records its end.
		if set := cr.faultsOf(st); set != nil {
			if err := set.CloseLayer(faults.Protocol); err != nil {
				cr.fail(err)
			}
		}
		w.Resume()
	},
	scenarios.Promote: func(ctx context.Context, cr *cellRun, st scenarios.Step) {
		if w := cr.writer(st.Params.Writer); w != nil {
			cr.background(func() { cr.protocol(st, w.Promote(ctx, st.Params.Term)) })
		}
	},
	scenarios.Restart: func(ctx context.Context, cr *cellRun, st scenarios.Step) {
		if w := cr.writer(st.Params.Writer); w != nil {
			cr.background(func() {
				_, err := w.Restart(ctx, st.Params.As, st.Params.Term)
				cr.protocol(st, err)
			})
		}
	},
	scenarios.Relocate: relocate,
	scenarios.Refresh: func(ctx context.Context, cr *cellRun, st scenarios.Step) {
		if w := cr.writer(st.Params.Writer); w != nil {
			cr.background(func() { _, err := w.Refresh(ctx); cr.protocol(st, err) })
		}
	},
	scenarios.GC: func(ctx context.Context, cr *cellRun, st scenarios.Step) {
		if w := cr.writer(st.Params.Writer); w != nil {
			cr.background(func() { _, err := w.GC(ctx); cr.protocol(st, err) })
		}
	},
	scenarios.Recover: func(ctx context.Context, cr *cellRun, st scenarios.Step) {
		w := cr.writer(st.Params.Writer)
		if w == nil {
			return
		}
		var from *writers.Writer
		if st.Params.From != "" {
			if from = cr.writer(st.Params.From); from == nil {
				return
			}
		}
		cr.background(func() { _, err := w.Recover(ctx, from); cr.protocol(st, err) })
	},
}

func relocate(ctx context.Context, cr *cellRun, st scenarios.Step) {
	pr := st.Params
	src, dst := cr.writer(pr.Writer), cr.writer(pr.Target)
	if src == nil || dst == nil {
		return
	}
	opts := writers.RelocateOptions{Abort: pr.AbortAt, Prehydrate: pr.Prehydrate}
	cr.background(func() {
		// The step's handoff fault is open on the source's handoff link while it relocates,
		// recorded like every fault.
		var set *faults.Set
		if f := st.HandoffFault(); f != nil {
			set = faults.NewSet(pr.Writer, src.Handoffs(), cr.record)
			if err := set.Open(f); err != nil {
				cr.fail(err)
				return
			}
		}
		res, err := src.Relocate(ctx, dst, opts)
		if set != nil {
			if err := set.CloseLayer(faults.Protocol); err != nil {
				cr.fail(err)
			}
		}
		if why := relocationBroken(res, err, src.State()); why != "" {
			cr.fail(fmt.Errorf("step %d: relocate %s to %s %s", st.Index, pr.Writer, pr.Target, why))
			return
		}
		cr.protocol(st, err)
	})
}

// relocationBroken says how a relocation's return breaks Relocate's contract, or "": it
// returns an error exactly when it did not end, and a source that handed off or stood down
// never serves again (neither state leads back to active), so it is not active once
// Relocate returned.
func relocationBroken(res writers.RelocationResult, err error, src writers.State) string {
	switch {
	case err == nil && res == writers.RelocationUnfinished:
		return "returned no error and no end"
	case err != nil && res != writers.RelocationUnfinished:
		return fmt.Sprintf("returned an end (%s) and an error (%v)", res, err)
	case (res == writers.RelocationHandedOff || res == writers.RelocationStoodDown) && src == writers.StateActive:
		return fmt.Sprintf("returned %s, yet its source is active", res)
	}
	return ""
}
