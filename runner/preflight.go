package runner

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/storeprobe"
)

// preflightBudget bounds the pre-flight's racing probes.
const preflightBudget = 2 * time.Minute

// preflight checks the store's conditional writes once, before the first cell: the
// sequential probes of package storeprobe (If-Match on a missing key, read after CAS), then
// its N-way create race and N-way CAS race, with their default racer counts and keys,
// straight to the store (no fault path), under <prefix>.preflight/.
func (r *runner) preflight(ctx context.Context) *outcome.Preflight {
	pf := &outcome.Preflight{}
	client := store.Client(firstNonEmpty(r.opts.Client, string(store.ClientMinio)))
	reader, err := env.Client(r.env, client)
	if err != nil {
		pf.Error = fmt.Sprintf("store client: %v", err)
		return pf
	}
	pctx, cancel := context.WithTimeout(ctx, preflightBudget)
	defer cancel()
	res, err := storeprobe.Run(pctx, storeprobe.Options{Reader: reader, Prefix: r.opts.Prefix + ".preflight/",
		Origin: "preflight", Kinds: storeprobe.Preflight, NewClient: func() (store.Store, error) { return env.Client(r.env, client) }})
	for _, x := range res {
		pf.Probes = append(pf.Probes, outcome.PreflightProbe{ID: x.ID, Name: x.Name, Racers: x.Racers, Races: x.Races,
			Wins: x.Wins, Refused: x.Refused, NoAnswer: x.NoAnswer, Duration: x.Duration, Witness: x.Witness, Cut: x.Cut})
	}
	switch u := pf.Unsafe(); {
	case err != nil && errors.Is(pctx.Err(), context.DeadlineExceeded) && ctx.Err() == nil:
		pf.Error = fmt.Sprintf("the store did not finish the pre-flight within its %v budget, even on fewer keys: a store too slow for the bench's load, not a verdict on its conditional writes: %v", preflightBudget, err)
		r.log.Error("the pre-flight could not judge the store", "err", pf.Error)
	case err != nil:
		pf.Error = err.Error()
		r.log.Error("the pre-flight could not judge the store", "err", err)
	case u != nil:
		r.log.Error("the store failed the pre-flight: every cell that needs a safe store is refused", "probe", u.Probe, "witness", u.Witness)
	default:
		r.log.Info("the store passed the pre-flight", "probes", len(pf.Probes))
	}
	return pf
}

// refuse records cell c as refused by an unsafe store, without running it: verdict fail,
// the probe and its witness in StoreUnsafe and in the reason. It returns nil, and the cell
// runs, when the store passed or the scenario allows a store that does not enforce
// conditional writes (its own conditional-write probe then decides, as on any store).
func (r *runner) refuse(c Cell, pf *outcome.Preflight) *outcome.CellResult {
	u := pf.Unsafe()
	if u == nil || c.Scenario.Store.AllowUnenforced {
		return nil
	}
	res := r.newResult(c)
	reason := outcome.StoreUnsafeReason + ": " + u.Witness
	res.StoreUnsafe = u
	res.Verdict = checker.Fail
	res.Probe = "refused by the pre-flight: " + u.Witness
	res.Result = checker.Result{Verdict: checker.Fail, Raw: checker.Fail, Reasons: []string{reason},
		Narrative: "The store failed the racing probe " + u.Probe + " before the first cell: " + u.Witness +
			". Its conditional writes are not atomic, so two writers could each win the same fence; no fencing protocol can be judged on it."}
	if err := r.persist(c, res, fileSize(r.env.LogPath())); err != nil {
		res.Verdict, res.Error = checker.Error, err.Error()
	}
	return res
}
