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

// one builds and explores one mutant in a folder of its own, removed afterwards.
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
	src := filepath.Join(work, filepath.Base(m.File))
	if err := os.WriteFile(src, m.Source, 0o644); err != nil {
		r.Status, r.Detail = errStatus, err.Error()
		return r
	}
	target := filepath.Join(d.dir, filepath.FromSlash(m.File))
	sum, out, err := d.build(ctx, work, map[string]string{target: src})
	switch {
	case err != nil:
		r.Status, r.Detail = invalid, out
		return r
	case sum == d.base:
		r.Status, r.Detail = equiv, "the binary is identical to the unmutated build"
		return r
	}
	code, timeout, out, err := d.explore(ctx, work, d.exploreTimeout)
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
	if r.Status != survived || len(d.c.test) == 0 {
		return r
	}
	// The exploration passed: the mutated package's own tests get their turn.
	failed, _, out, err := d.test(ctx, work, "./"+path.Dir(m.File))
	switch {
	case err != nil:
		r.Status, r.Detail = errStatus, err.Error()
	case failed:
		r.Status, r.Detail = testKill, out
	}
	return r
}
