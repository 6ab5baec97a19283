package runner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/fencebench/fencebench/env"
)

// aliveAfter asks e once more after pause: one failed look at a container's state is not
// yet a dead store.
func aliveAfter(ctx context.Context, e env.Env, pause time.Duration) bool {
	select {
	case <-ctx.Done():
		return true
	case <-time.After(pause):
	}
	return e.Alive()
}

// watchEvery is how often the store is checked while a cell runs.
const watchEvery = time.Second

// checkStore reports, as a harness error, a store that is unreachable now.
func (r *runner) checkStore(ctx context.Context) error {
	if p, ok := r.env.(env.Prober); ok {
		if err := p.Probe(ctx); err != nil {
			return fmt.Errorf("the store became unreachable: %w", err)
		}
		return nil
	}
	if !r.env.Alive() && !aliveAfter(ctx, r.env, env.ProbePause) {
		where := ""
		if lp := r.env.LogPath(); lp != "" {
			where = "; see store.log"
		}
		return errors.New("the store became unreachable: it is no longer running" + where)
	}
	return nil
}

// watchStore checks the store every watchEvery while a cell runs. It returns the cell's
// context, cancelled as soon as the store is found unreachable, and stop, which ends the
// watch, checks the store once more and returns why it is unreachable (nil when it answers).
func (r *runner) watchStore(ctx context.Context) (context.Context, func() error) {
	cctx, cancel := context.WithCancelCause(ctx)
	wctx, endWatch := context.WithCancel(context.WithoutCancel(ctx))
	var down error
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(watchEvery)
		defer t.Stop()
		for {
			select {
			case <-wctx.Done():
				return
			case <-t.C:
			}
			if err := r.checkStore(wctx); err != nil && wctx.Err() == nil {
				down = err
				cancel(err)
				return
			}
		}
	}()
	return cctx, func() error {
		endWatch()
		<-done
		cancel(nil)
		if down != nil {
			return down
		}
		fctx, cancelFinal := context.WithTimeout(context.WithoutCancel(ctx), env.ProbeBudget)
		defer cancelFinal()
		return r.checkStore(fctx)
	}
}

// downState is why a store stopped answering, shared by the cells that use it.
type downState struct {
	mu  sync.Mutex
	why string
}

func (d *downState) get() string {
	if d == nil {
		return ""
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.why
}

func (d *downState) set(why string) {
	if d == nil {
		return
	}
	d.mu.Lock()
	d.why = why
	d.mu.Unlock()
}
