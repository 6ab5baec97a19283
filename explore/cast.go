package explore

import (
	"fmt"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// cast owns a draw's writers: their roles and terms, and the events the steps drawn so far
// make each of them emit.
type cast struct {
	ids      []string // every writer id, declared and restarted, in order
	primary  string   // the writer the schedule last made primary
	active   []string // writers that hold (or will hold) a term and are not crashed
	standby  []string // declared standbys not yet given a role
	crashed  []string // crashed writers not restarted
	terms    []int64  // terms held so far
	nextTerm int64
	events   map[string][]history.SignalKind // writer -> extra events steps so far make it emit
}

func newCast() *cast { return &cast{events: map[string][]history.SignalKind{}} }

// draw declares the writers: a primary "a" at a drawn first term and up to max-1 standbys.
func (c *cast) draw(d *dice, max int) []scenarios.Writer {
	n := 1 + d.r.IntN(max)
	term := int64(1 + d.r.IntN(9))
	c.nextTerm = term + 1
	c.terms = []int64{term}
	out := []scenarios.Writer{{ID: "a", Role: "primary", Term: term}}
	c.ids, c.primary, c.active = []string{"a"}, "a", []string{"a"}
	for i := 1; i < n; i++ {
		id := string(rune('a' + i))
		out = append(out, scenarios.Writer{ID: id, Role: "standby"})
		c.ids = append(c.ids, id)
		c.standby = append(c.standby, id)
	}
	return out
}

func (c *cast) newTerm() int64 {
	t := c.nextTerm
	c.nextTerm++
	c.terms = append(c.terms, t)
	return t
}

// freshID names a new incarnation of w: w2, w3, ...
func (c *cast) freshID(w string) string {
	for i := 2; ; i++ {
		id := fmt.Sprintf("%s%d", w[:1], i)
		if !contains(c.ids, id) {
			return id
		}
	}
}

// target draws a writer for a network or protocol fault: one holding a term if any is left,
// else the last primary.
func (c *cast) target(d *dice) string {
	if len(c.active) > 0 {
		return d.oneOf(c.active)
	}
	return c.primary
}

// emit records that w will also emit evs.
func (c *cast) emit(w string, evs ...history.SignalKind) {
	c.events[w] = append(c.events[w], evs...)
}

// join makes the standby w a writer holding a term, and the primary when lead is true.
func (c *cast) join(w string, lead bool) {
	c.standby = remove(c.standby, w)
	c.active = append(c.active, w)
	if lead {
		c.primary = w
	}
}

// assign takes w off the standbys for a role that holds no term (a recovery).
func (c *cast) assign(w string) { c.standby = remove(c.standby, w) }

// promote records that the standby w is promoted: it leads, restores and hydrates.
func (c *cast) promote(w string) {
	c.join(w, true)
	c.emit(w, history.SigPromoted, history.SigRestoreRead, history.SigHydrated)
}

// handOff records that src relocates to the standby dst, which leads afterwards when moved
// is true.
func (c *cast) handOff(src, dst string, moved bool) {
	c.join(dst, moved)
	c.emit(src, history.SigTransferred, history.SigHandedOff, history.SigReverted, history.SigDrained)
	c.emit(dst, history.SigAdopted, history.SigHydrated)
}

// crash records that w is crashed.
func (c *cast) crash(w string) {
	c.active = remove(c.active, w)
	c.crashed = append(c.crashed, w)
}

// restart records that the crashed w comes back as a new incarnation as, at a new term.
func (c *cast) restart(w, as string) {
	c.crashed = remove(c.crashed, w)
	c.ids = append(c.ids, as)
	c.active = append(c.active, as)
	c.emit(as, history.SigRestoreRead, history.SigHydrated)
}
