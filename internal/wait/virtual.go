package wait

import (
	"container/heap"
	"context"
	"runtime"
	"runtime/metrics"
	"sync"
	"time"
)

// Virtual returns a clock on virtual scenario time: it stands still while any goroutine of
// the process can run, and jumps to the next timer's instant once none can. However loaded
// the machine, every goroutine has done all it could at one instant before the next instant
// begins, so a schedule's timeouts, sync intervals and step delays keep their order and their
// distances in scenario time exactly; a starved process only runs slower in real time.
//
// Wake-ups due at one instant fire one at a time, in the order they were armed, each running
// until nothing can run before the next: the order of coincident events (a sync tick and a
// step due at the same millisecond) is fixed, not left to the Go scheduler.
//
// All virtual clocks of a process share one scheduler and one time line, so cells that run
// side by side advance together. Only goroutines that wait through the clock (For, timers,
// tickers, WithTimeout) are woken by it: code on a virtual clock must not wait on real time
// for the scenario's events.
func Virtual() *Clock {
	return &Clock{v: scheduler()}
}

// virtualEpoch is the wall-clock reading a virtual timer's tick carries at virtual time zero.
var virtualEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// sched is the process's virtual time line: a heap of timers and the instant it stands at.
type sched struct {
	mu      sync.Mutex
	now     time.Duration
	last    time.Duration // the latest reading handed out
	timers  timerHeap
	seq     uint64
	running bool // the driver goroutine runs
	steps   uint64
}

var (
	schedOnce sync.Once
	theSched  *sched
)

func scheduler() *sched {
	schedOnce.Do(func() { theSched = &sched{} })
	return theSched
}

// vtimer is one pending wake-up: a send on ch (a timer or a ticker) or a call of f.
type vtimer struct {
	s      *sched
	when   time.Duration
	seq    uint64
	period time.Duration // > 0: a ticker
	ch     chan time.Time
	f      func()
	index  int // in the heap; -1 when not scheduled
}

type timerHeap []*vtimer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if h[i].when != h[j].when {
		return h[i].when < h[j].when
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *timerHeap) Push(x any) {
	t := x.(*vtimer)
	t.index = len(*h)
	*h = append(*h, t)
}
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	t.index = -1
	return t
}

// schedule puts t at d from now; the caller holds s.mu. A due timer fires at once.
func (s *sched) schedule(t *vtimer, d time.Duration) (fire func()) {
	if t.index >= 0 {
		heap.Remove(&s.timers, t.index)
	}
	if d <= 0 {
		return s.fire(t)
	}
	s.seq++
	t.when, t.seq = s.now+d, s.seq
	heap.Push(&s.timers, t)
	if !s.running {
		s.running = true
		go s.drive()
	}
	return nil
}

// fire delivers t's tick (the caller holds s.mu) and returns the call to make once the lock
// is released, if t calls a function.
func (s *sched) fire(t *vtimer) func() {
	if t.period > 0 {
		s.seq++
		t.when, t.seq = s.now+t.period, s.seq
		heap.Push(&s.timers, t)
	}
	if t.ch != nil {
		select {
		case t.ch <- virtualEpoch.Add(s.now):
		default: // a ticker's reader is behind: the tick is dropped, as time.Ticker does
		}
	}
	return t.f
}

// stop removes t and any tick it left unread; the caller holds s.mu.
func (s *sched) stop(t *vtimer) bool {
	was := t.index >= 0
	if was {
		heap.Remove(&s.timers, t.index)
	}
	if t.ch != nil {
		select {
		case <-t.ch:
		default:
		}
	}
	return was
}

// While goroutines still run, the driver yields spinPolls times, then sleeps pollGap of real
// time between polls.
const (
	spinPolls = 64
	pollGap   = 50 * time.Microsecond
)

// drive advances the time line while timers are pending: whenever no goroutine but itself
// can run, it moves to the earliest timer's instant and fires that timer alone.
func (s *sched) drive() {
	probe := newIdleProbe()
	busy := 0 // polls in a row that found goroutines running
	for {
		s.mu.Lock()
		if len(s.timers) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		s.mu.Unlock()
		if !probe.idle() {
			// Most instants end within microseconds: yield first, sleep only when the work
			// at this instant takes longer.
			if busy++; busy > spinPolls {
				time.Sleep(pollGap)
			} else {
				runtime.Gosched()
			}
			continue
		}
		busy = 0
		s.mu.Lock()
		if len(s.timers) == 0 {
			s.running = false
			s.mu.Unlock()
			return
		}
		// One wake-up at a time: the earliest timer (the first armed among those due at one
		// instant) fires, and what it wakes runs until nothing can run before the next fires.
		// Wake-ups that share an instant thus happen in a fixed order, not in whatever order
		// the goroutines they wake happen to be scheduled.
		t := heap.Pop(&s.timers).(*vtimer)
		s.now = max(s.now, t.when)
		s.steps++
		var calls []func()
		if f := s.fire(t); f != nil {
			calls = append(calls, f)
		}
		s.mu.Unlock()
		for _, f := range calls {
			f()
		}
	}
}

// idleProbe tells whether any goroutine other than the caller is running or ready to run,
// from the scheduler's own counts. A goroutine blocked in a system call (a child process
// being waited for, a file being written) is not counted: it does not act at the current
// instant until the call returns, and then it is running again.
type idleProbe struct {
	samples []metrics.Sample
}

func newIdleProbe() *idleProbe {
	return &idleProbe{samples: []metrics.Sample{
		{Name: "/sched/goroutines/running:goroutines"},
		{Name: "/sched/goroutines/runnable:goroutines"},
	}}
}

func (p *idleProbe) quiet() bool {
	metrics.Read(p.samples)
	for _, s := range p.samples {
		if s.Value.Kind() != metrics.KindUint64 {
			return true // the runtime does not count: fall back to trusting the timers
		}
	}
	return p.samples[0].Value.Uint64() <= 1 && p.samples[1].Value.Uint64() == 0
}

// idle asks twice, with a yield between: the counts are read without stopping the world, so
// a goroutine being handed from one run queue to another can be missed by one reading.
func (p *idleProbe) idle() bool {
	if !p.quiet() {
		return false
	}
	runtime.Gosched()
	return p.quiet()
}

// Steps is how many wake-ups the process's virtual time line has fired.
func Steps() uint64 {
	s := scheduler()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.steps
}

// Timer is a time.Timer on a clock's time.
type Timer struct {
	C  <-chan time.Time
	c  *Clock
	rt *time.Timer
	vt *vtimer
}

// Stop prevents the timer from firing; after it returns no stale tick is received from C.
func (t *Timer) Stop() bool {
	if t.rt != nil {
		return t.rt.Stop()
	}
	s := t.vt.s
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stop(t.vt)
}

// Reset makes the timer fire after the scenario duration d, dropping any tick not yet read.
func (t *Timer) Reset(d time.Duration) bool {
	if t.rt != nil {
		return t.rt.Reset(t.c.Real(d))
	}
	s := t.vt.s
	s.mu.Lock()
	was := s.stop(t.vt)
	f := s.schedule(t.vt, d)
	s.mu.Unlock()
	if f != nil {
		f()
	}
	return was
}

// Ticker is a time.Ticker on a clock's time.
type Ticker struct {
	C  <-chan time.Time
	rt *time.Ticker
	vt *vtimer
}

// Stop turns the ticker off; no tick is received from C after it returns.
func (t *Ticker) Stop() {
	if t.rt != nil {
		t.rt.Stop()
		return
	}
	s := t.vt.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stop(t.vt)
}

func (s *sched) newTimer(d, period time.Duration, f func()) *vtimer {
	t := &vtimer{s: s, period: period, f: f, index: -1}
	if f == nil {
		t.ch = make(chan time.Time, 1)
	}
	s.mu.Lock()
	call := s.schedule(t, d)
	s.mu.Unlock()
	if call != nil {
		call()
	}
	return t
}

// virtualFor is For on the virtual time line.
func (s *sched) virtualFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := s.newTimer(d, 0, nil)
	select {
	case <-t.ch:
		return true
	case <-ctx.Done():
		s.mu.Lock()
		s.stop(t)
		s.mu.Unlock()
		return false
	}
}

// deadlineCtx is a context ended by a virtual timer: its Err is context.DeadlineExceeded
// once the timer fired, as a context.WithTimeout's is.
type deadlineCtx struct {
	context.Context
}

func (c deadlineCtx) Err() error {
	err := c.Context.Err()
	if err != nil && context.Cause(c.Context) == context.DeadlineExceeded {
		return context.DeadlineExceeded
	}
	return err
}

func (s *sched) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	t := s.newTimer(d, 0, func() { cancel(context.DeadlineExceeded) })
	return deadlineCtx{cctx}, func() {
		s.mu.Lock()
		s.stop(t)
		s.mu.Unlock()
		cancel(context.Canceled)
	}
}

// reading is the time a stopwatch reads: the current instant, made strictly later than every
// earlier reading by a nanosecond at a time. Within one instant any number of steps happen
// (the simulated store answers without taking time), and the readings still order them as
// they happened: what a goroutine did before it caused another's step reads earlier.
func (s *sched) reading() time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.last = max(s.now, s.last+1)
	return s.last
}
