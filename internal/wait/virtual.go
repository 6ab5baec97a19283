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
// the process can run, and jumps to its next timer's instant once none can. However loaded
// the machine, every goroutine has done all it could at one instant before the next instant
// begins, so a schedule's timeouts, sync intervals and step delays keep their order and their
// distances in scenario time exactly; a starved process only runs slower in real time.
//
// Each virtual clock is a time line of its own, which its first reading starts at zero: a
// clock per cell keeps cells that run side by side independent, and at each moment the
// process is idle every time line with a pending timer moves on, so they advance in parallel.
// Within one time line, wake-ups due at one instant fire one at a time, in the order they
// were armed, each running until nothing can run before the next: the order of coincident
// events (a sync tick and a step due at the same millisecond) is fixed, not left to the Go
// scheduler. Only goroutines that wait through the clock (For, timers, tickers, WithTimeout)
// are woken by it: code on a virtual clock must not wait on real time for the scenario's
// events.
func Virtual() *Clock {
	return &Clock{v: &timeline{d: theDriver()}}
}

// virtualEpoch is the wall-clock reading a virtual timer's tick carries at virtual time zero.
var virtualEpoch = time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)

// driver advances the process's virtual time lines. Its mutex guards every time line too.
type driver struct {
	mu      sync.Mutex
	active  map[*timeline]bool // time lines with pending timers
	running bool               // the driver goroutine runs
	steps   uint64
	acts    uint64 // timers armed or stopped, readings, Busy marks: signs a goroutine acted
}

var (
	driverOnce sync.Once
	theDrv     *driver
)

func theDriver() *driver {
	driverOnce.Do(func() { theDrv = &driver{active: map[*timeline]bool{}} })
	return theDrv
}

// timeline is one virtual clock's time: the instant it stands at and its pending timers.
type timeline struct {
	d      *driver
	now    time.Duration
	last   time.Duration // the latest reading handed out
	timers timerHeap
	seq    uint64
	busy   int // Busy marks not yet released: the time line holds still
}

// vtimer is one pending wake-up: a send on ch (a timer or a ticker) or a call of f.
type vtimer struct {
	tl     *timeline
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

// push puts t on its time line; the caller holds the driver's lock.
func (tl *timeline) push(t *vtimer) {
	tl.d.acts++
	tl.seq++
	t.seq = tl.seq
	heap.Push(&tl.timers, t)
	tl.d.active[tl] = true
	if !tl.d.running {
		tl.d.running = true
		go tl.d.drive()
	}
}

// remove takes t off its time line; the caller holds the driver's lock.
func (tl *timeline) remove(t *vtimer) bool {
	if t.index < 0 {
		return false
	}
	tl.d.acts++
	heap.Remove(&tl.timers, t.index)
	if len(tl.timers) == 0 {
		delete(tl.d.active, tl)
	}
	return true
}

// schedule puts t at d from now; the caller holds the lock. A due timer fires at once.
func (tl *timeline) schedule(t *vtimer, d time.Duration) (fire func()) {
	tl.remove(t)
	if d <= 0 {
		return tl.fire(t)
	}
	t.when = tl.now + d
	tl.push(t)
	return nil
}

// fire delivers t's tick (the caller holds the lock) and returns the call to make once the
// lock is released, if t calls a function.
func (tl *timeline) fire(t *vtimer) func() {
	if t.period > 0 {
		t.when = tl.now + t.period
		tl.push(t)
	}
	if t.ch != nil {
		select {
		case t.ch <- virtualEpoch.Add(tl.now):
		default: // a ticker's reader is behind: the tick is dropped, as time.Ticker does
		}
	}
	return t.f
}

// stop removes t and any tick it left unread; the caller holds the lock.
func (tl *timeline) stop(t *vtimer) bool {
	was := tl.remove(t)
	if t.ch != nil {
		select {
		case <-t.ch:
		default:
		}
	}
	return was
}

// While goroutines still run, the driver yields spinPolls times, then naps pollGap of real
// time between polls (a system call's nap: time.Sleep would take a millisecond).
const (
	spinPolls = 64
	pollGap   = 50 * time.Microsecond
)

// drive advances the time lines while timers are pending: whenever no goroutine but itself
// can run, every time line with a pending timer moves to its earliest timer's instant and
// fires that timer alone.
func (d *driver) drive() {
	probe := newIdleProbe()
	busy := 0 // polls in a row that found goroutines running
	for {
		d.mu.Lock()
		if len(d.active) == 0 {
			d.running = false
			d.mu.Unlock()
			return
		}
		d.mu.Unlock()
		if !probe.idle() {
			// Most instants end within microseconds: yield first, sleep only when the work
			// at this instant takes longer.
			if busy++; busy > spinPolls {
				nap(pollGap)
			} else {
				runtime.Gosched()
			}
			continue
		}
		busy = 0
		if c, acts := d.confirmation(); c > 0 {
			// A long jump (a deadline, a long step delay, often the only timer pending while a
			// cell starts) is taken only once the process stayed idle over a span of real time:
			// a goroutine parked for a GC assist is counted neither running nor runnable, and on
			// a starved machine such a park has carried a cell's time line to its deadline in the
			// middle of its primary's first store call. Anything done meanwhile (a timer armed,
			// a reading, a mark) starts the confirmation over: the jump it confirmed may be
			// another one by now.
			nap(c)
			d.mu.Lock()
			acted := d.acts != acts
			d.mu.Unlock()
			if acted || !probe.idle() {
				continue
			}
		}
		d.mu.Lock()
		var calls []func()
		for tl := range d.active {
			if tl.busy > 0 {
				continue
			}
			t := heap.Pop(&tl.timers).(*vtimer)
			if len(tl.timers) == 0 {
				delete(d.active, tl)
			}
			tl.now = max(tl.now, t.when)
			d.steps++
			if f := tl.fire(t); f != nil {
				calls = append(calls, f)
			}
		}
		d.mu.Unlock()
		for _, f := range calls {
			f()
		}
	}
}

// confirmation is the real-time confirmation the longest move any time line free to move
// would make now asks for, and the count of acts it was seen at.
func (d *driver) confirmation() (time.Duration, uint64) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var far time.Duration
	for tl := range d.active {
		if tl.busy == 0 && len(tl.timers) > 0 {
			far = max(far, tl.timers[0].when-tl.now)
		}
	}
	return confirmation(far), d.acts
}

// confirmation is how long the process must stay idle in real time before a time line jumps
// by far: a thousandth of the jump, none below confirmFrom, at most confirmMax. Short moves,
// the bulk of a schedule, cost nothing more; a jump of a second waits a millisecond.
func confirmation(far time.Duration) time.Duration {
	if far < confirmFrom {
		return 0
	}
	return min(far/1000, confirmMax)
}

const (
	confirmFrom = 100 * time.Millisecond
	confirmMax  = 20 * time.Millisecond
)

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

// idle asks idleReads times, a yield apart: the counts are read without stopping the world,
// so a goroutine being handed from one run queue to another can be missed by one reading.
func (p *idleProbe) idle() bool {
	for range idleReads {
		if !p.quiet() {
			return false
		}
		runtime.Gosched()
	}
	return true
}

// idleReads is how many readings in a row, a yield apart, must find nothing to run.
const idleReads = 3

// Steps is how many wake-ups the process's virtual time lines have fired.
func Steps() uint64 {
	d := theDriver()
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.steps
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
	tl := t.vt.tl
	tl.d.mu.Lock()
	defer tl.d.mu.Unlock()
	return tl.stop(t.vt)
}

// Reset makes the timer fire after the scenario duration d, dropping any tick not yet read.
func (t *Timer) Reset(d time.Duration) bool {
	if t.rt != nil {
		return t.rt.Reset(t.c.Real(d))
	}
	tl := t.vt.tl
	tl.d.mu.Lock()
	was := tl.stop(t.vt)
	f := tl.schedule(t.vt, d)
	tl.d.mu.Unlock()
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
	tl := t.vt.tl
	tl.d.mu.Lock()
	defer tl.d.mu.Unlock()
	tl.stop(t.vt)
}

func (tl *timeline) newTimer(d, period time.Duration, f func()) *vtimer {
	t := &vtimer{tl: tl, period: period, f: f, index: -1}
	if f == nil {
		t.ch = make(chan time.Time, 1)
	}
	tl.d.mu.Lock()
	call := tl.schedule(t, d)
	tl.d.mu.Unlock()
	if call != nil {
		call()
	}
	return t
}

// virtualFor is For on the time line.
func (tl *timeline) virtualFor(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := tl.newTimer(d, 0, nil)
	select {
	case <-t.ch:
		return true
	case <-ctx.Done():
		tl.d.mu.Lock()
		tl.stop(t)
		tl.d.mu.Unlock()
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

func (tl *timeline) withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	cctx, cancel := context.WithCancelCause(ctx)
	t := tl.newTimer(d, 0, func() { cancel(context.DeadlineExceeded) })
	return deadlineCtx{cctx}, func() {
		tl.d.mu.Lock()
		tl.stop(t)
		tl.d.mu.Unlock()
		cancel(context.Canceled)
	}
}

// reading is the time a stopwatch reads: the current instant, made strictly later than every
// earlier reading of the time line by a nanosecond at a time. Within one instant any number
// of steps happen (the simulated store answers without taking time), and the readings still
// order them as they happened: what a goroutine did before it caused another's step reads
// earlier.
func (tl *timeline) reading() time.Duration {
	tl.d.mu.Lock()
	defer tl.d.mu.Unlock()
	tl.d.acts++
	tl.last = max(tl.now, tl.last+1)
	return tl.last
}
