package explore

import (
	"math/rand/v2"
	"slices"
	"time"
)

// dice owns a draw's random streams and the draws that read nothing else.
type dice struct {
	r *rand.Rand
	// reads draws the faults on a promoted copy's first reads (see readFault): a stream of
	// its own, so that adding them left every other draw of a seed as it was.
	reads *rand.Rand
	// stalls draws whether held-fence-read holds a claim's final listing rather than its
	// verifying read: a stream of its own too, for the same reason.
	stalls *rand.Rand
	// listings draws whether a first-read fault on a metadata kind takes the kind's listing
	// (the restore read's or the hydration's first request) rather than the file: its own
	// stream, for the same reason.
	listings *rand.Rand
	// pairs draws whether a schedule's request rule gets a twin on the other side of the
	// same kind of file (see pairRule), and which: its own stream, for the same reason.
	pairs *rand.Rand
	// stops draws whether held-fence-read's overtaker stops right after its next sync (see
	// stopOvertaker): its own stream, for the same reason.
	stops *rand.Rand
	// fails draws whether held-fence-read's held verifying read then fails rather than
	// answering (see heldFenceRead): its own stream, for the same reason.
	fails *rand.Rand
	// denials draws whether a status rule answers 403 AccessDenied instead of a 5xx (see
	// deny): its own stream, for the same reason.
	denials *rand.Rand
	// handoffs draws the request rules on a relocation's own requests (see relocationFault):
	// its own stream, for the same reason.
	handoffs *rand.Rand
	// scripts draws whether a schedule gets a script of request faults on one writer's fence
	// requests, and its faults (see scriptRules): its own stream, for the same reason.
	scripts *rand.Rand
	// hidden draws whether a first-read fault on a promoted copy's .tlog files answers 404
	// (see readFault): its own stream, for the same reason.
	hidden *rand.Rand
	// silent draws whether a schedule runs without client traffic (see silence): its own
	// stream, for the same reason.
	silent *rand.Rand
}

func newDice(seed uint64) *dice {
	return &dice{r: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), reads: rand.New(rand.NewPCG(seed^0x5bd1e995, seed)),
		stalls: rand.New(rand.NewPCG(seed^0x27d4eb2f, seed)), listings: rand.New(rand.NewPCG(seed^0x165667b1, seed)),
		pairs: rand.New(rand.NewPCG(seed^0x85ebca6b, seed)), stops: rand.New(rand.NewPCG(seed^0xc2b2ae35, seed)),
		fails: rand.New(rand.NewPCG(seed^0x27d4eb2d, seed)), denials: rand.New(rand.NewPCG(seed^0x9e3779b1, seed)),
		handoffs: rand.New(rand.NewPCG(seed^0x2545f491, seed)), scripts: rand.New(rand.NewPCG(seed^0x61c88647, seed)),
		hidden: rand.New(rand.NewPCG(seed^0x7feb352d, seed)), silent: rand.New(rand.NewPCG(seed^0x846ca68b, seed))}
}

// enable draws a weight table over names: each with probability one half, at a weight of 1
// to 4, and one of them at weight 1 when none came up.
func (d *dice) enable(names []string) map[string]int {
	out := map[string]int{}
	for _, k := range names {
		if d.r.IntN(2) == 0 {
			out[k] = 1 + d.r.IntN(4)
		}
	}
	if len(out) == 0 {
		out[names[d.r.IntN(len(names))]] = 1
	}
	return out
}

// pick draws a key of a weight table; keys are visited in sorted order, so the draw
// depends on the seed alone.
func (d *dice) pick(w map[string]int) string { return pick(d, w) }

// pick draws a key of w with probability proportional to its weight, in the keys' order.
func pick[K ~string](d *dice, w map[K]int) K {
	keys := make([]K, 0, len(w))
	total := 0
	for k, n := range w {
		keys = append(keys, k)
		total += n
	}
	slices.Sort(keys)
	x := d.r.IntN(total)
	for _, k := range keys {
		if x < w[k] {
			return k
		}
		x -= w[k]
	}
	return keys[len(keys)-1]
}

// ms draws a duration of lo to hi milliseconds, in steps of 10ms above 50ms.
func (d *dice) ms(lo, hi int) time.Duration {
	v := lo + d.r.IntN(hi-lo+1)
	if v > 50 {
		v -= v % 10
	}
	return time.Duration(v) * time.Millisecond
}

// window draws a fault window: short, 50ms to 1s.
func (d *dice) window() time.Duration { return d.ms(50, 1000) }

// chance is true with probability p.
func (d *dice) chance(p float64) bool { return d.r.Float64() < p }

func (d *dice) oneOf(xs []string) string { return draw(d, xs) }

// draw draws one of xs, uniformly.
func draw[T any](d *dice, xs []T) T { return xs[d.r.IntN(len(xs))] }
