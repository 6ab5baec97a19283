package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"sync"
	"time"

	"github.com/fencebench/fencebench/internal/mutate"
)

// runAll judges every mutant, --jobs at a time, and returns the results in the mutants'
// order.
func (d *driver) runAll(ctx context.Context, ms []mutate.Mutant, judged map[string]string) []result {
	results := make([]result, len(ms))
	next := make(chan int)
	var wg sync.WaitGroup
	var doneMu sync.Mutex
	done := 0
	for range d.c.jobs {
		wg.Go(func() {
			for i := range next {
				results[i] = d.one(ctx, i, ms[i], judged)
				doneMu.Lock()
				done++
				n := done
				doneMu.Unlock()
				d.logf("[%d/%d] %s %s (%.1fs)", n, len(ms), ms[i].ID, results[i].Status, results[i].Seconds)
			}
		})
	}
	for i := range ms {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	return results
}

// one judges one mutant in a folder of its own, removed afterwards: it builds the mutant
// alone (or selects it in the schemata), explores it and, when it survives, tests its
// package. A survivor of the schemata is built alone at the end, so that one the compiler
// reduces to the unmutated binary is equivalent and one that does not build alone is
// invalid, as without the schemata.
func (d *driver) one(ctx context.Context, i int, m mutate.Mutant, judged map[string]string) (r result) {
	start := time.Now()
	r = result{Mutant: m}
	defer func() { r.Seconds = time.Since(start).Seconds() }()
	if why, ok := judged[m.ID]; ok {
		r.Status, r.Detail = equiv, "judged: "+why
		return r
	}
	work := filepath.Join(d.tmp, fmt.Sprintf("m%d", i))
	defer os.RemoveAll(work)
	if err := os.Mkdir(work, 0o755); err != nil {
		r.Status, r.Detail = errStatus, err.Error()
		return r
	}
	bin, n := filepath.Join(work, d.bin), 0
	if d.schema != nil {
		if why, bad := d.schema.invalid[m.ID]; bad {
			r.Status, r.Detail = invalid, why
			return r
		}
		bin, n = d.schema.bin, d.schema.s.Number[m.ID]
	} else if d.alone(ctx, work, m, &r) {
		return r
	}
	if d.reach != nil && !d.reach.explored(m) {
		// The exploration never runs the changed statement: it cannot tell the mutant apart.
		r.Status, r.Unexplored = survived, true
	} else {
		d.exploreOne(ctx, work, bin, n, &r)
	}
	if r.Status == survived && d.variants != nil {
		// The correct protocol's exploration passed: the broken variants named where the
		// mutant sits get theirs.
		d.exploreVariants(ctx, work, bin, n, &r)
	}
	if r.Status == survived && len(d.c.test) > 0 {
		// The exploration passed: the mutated package's own tests get their turn, those that
		// run the changed statement when --reach measured them.
		var tests []string
		measured := false
		if d.reach != nil {
			tests, measured = d.reach.testsOf(m)
		}
		if measured && len(tests) == 0 {
			r.NoTest = true
		} else {
			if measured {
				r.Tests = tests
			}
			failed, _, out, err := d.testMutant(ctx, work, path.Dir(m.File), n, tests)
			switch {
			case err != nil:
				r.Status, r.Detail = errStatus, err.Error()
			case failed:
				r.Status, r.Detail = testKill, out
			}
		}
	}
	if r.Status == survived && d.schema != nil {
		d.alone(ctx, work, m, &r)
	}
	return r
}

// exploreOne explores mutant m (n in the schemata, or built alone into work as bin) and sets
// its status from the exploration's exit.
func (d *driver) exploreOne(ctx context.Context, work, bin string, n int, r *result) {
	code, timeout, out, err := d.explore(ctx, work, bin, n, d.exploreTimeout)
	switch {
	case err != nil:
		r.Status, r.Detail = errStatus, err.Error()
	case timeout:
		r.Status = timedOut
	default:
		r.Exit = &code
		r.Status = map[int]string{0: survived, 1: killed, 255: harness}[code]
		if r.Status == harness {
			r.Detail = tail(out)
		}
		if r.Status == "" {
			r.Status, r.Detail = errStatus, fmt.Sprintf("exit %d\n%s", code, out)
		}
	}
}

// alone builds mutant m by itself into work and reports true when that settles it: it does
// not build (invalid) or its binary is the unmutated one's (equivalent).
func (d *driver) alone(ctx context.Context, work string, m mutate.Mutant, r *result) bool {
	src := filepath.Join(work, filepath.Base(m.File))
	if err := os.WriteFile(src, m.Source, 0o644); err != nil {
		r.Status, r.Detail = errStatus, err.Error()
		return true
	}
	target := filepath.Join(d.dir, filepath.FromSlash(m.File))
	sum, out, err := d.build(ctx, work, map[string]string{target: src})
	switch {
	case err != nil:
		r.Status, r.Detail = invalid, out
		return true
	case sum == d.base:
		r.Status, r.Detail = equiv, "the binary is identical to the unmutated build"
		return true
	}
	return false
}
