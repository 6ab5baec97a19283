package checker

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/anishathalye/porcupine"
)

// Witness is a small non-linearizable part of a store history: a few operations that no
// order explains on their own, and a sentence saying why. It is cut from the failing history
// by shrinking: operations are dropped while what remains is still not linearizable. A read
// keeps at least one of the writes that could have stored what it returned, so a witness
// never rests on a value whose write was cut away.
type Witness struct {
	// Key is the object the operations act on ("" when the caller did not name it).
	Key string `json:"key,omitempty"`
	// Initial is the state the operations start from: "any state" when they are not
	// linearizable whatever the key held before, else the state the history started in.
	Initial string `json:"initial"`
	// Ops are the operations, in invocation order; each is op N in Why.
	Ops []WitnessOp `json:"ops"`
	// Why says in one sentence why no order of Ops explains their answers.
	Why string `json:"why"`
	// Of is the number of operations of the history the witness was cut from.
	Of int `json:"of"`
	// Minimal is true when dropping any single operation leaves a linearizable history; false
	// when the shrinking ran out of time first.
	Minimal bool `json:"minimal"`
}

// WitnessOp is one operation of a witness.
type WitnessOp struct {
	// N numbers the operation within the witness, from 1 ("op N").
	N int `json:"n"`
	// ID is the operation's ID in the judged history: its ledger entry for StoreLinearizable,
	// its index in the operations given to CheckRegister.
	ID int64 `json:"id"`
	// Client is who sent the request.
	Client string `json:"client"`
	// Invoke and Complete are when the request was sent and its answer arrived (since the
	// history's origin); Pending marks a request with no answer, open to the history's end.
	Invoke   time.Duration `json:"invoke"`
	Complete time.Duration `json:"complete"`
	Pending  bool          `json:"pending,omitempty"`
	// Request is the request ("PUT If-Match:e1", "GET"), Answer the store's answer ("ok",
	// "412", "404", "refused", "no answer").
	Request string `json:"request"`
	Answer  string `json:"answer"`
	// ETag and Value are what a read returned, or the ETag a write's answer carried and the
	// value it stored.
	ETag  string `json:"etag,omitempty"`
	Value string `json:"value,omitempty"`
}

// Text renders the witness as an aligned table followed by its sentence.
func (w *Witness) Text() string {
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "OP\tID\tCLIENT\tINVOKE\tCOMPLETE\tREQUEST\tANSWER\tETAG\tVALUE")
	for _, o := range w.Ops {
		done := witnessTime(o.Complete)
		if o.Pending {
			done = "-"
		}
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", o.N, o.ID, o.Client, witnessTime(o.Invoke), done, o.Request,
			o.Answer, o.ETag, o.Value)
	}
	_ = tw.Flush()
	fmt.Fprintf(&b, "from %s: %s", w.Initial, w.Why)
	return b.String()
}

// witnessTime shows a time to the microsecond: a witness's operations are often closer
// than a millisecond.
func witnessTime(d time.Duration) string { return fmt.Sprintf("%.6fs", d.Seconds()) }

// witnessBudget bounds the time spent shrinking one witness.
const witnessBudget = 10 * time.Second

// shrinker cuts a non-linearizable history down to a witness.
type shrinker struct {
	init      regState
	all       []regOperation // sorted by call
	producers [][]int        // per operation: the writes that could have stored what it read
	deadline  time.Time
	expired   bool
}

func newShrinker(init regState, ops []regOperation, budget time.Duration) *shrinker {
	all := slices.Clone(ops)
	slices.SortStableFunc(all, func(a, b regOperation) int { return cmp.Compare(a.call, b.call) })
	s := &shrinker{init: init, all: all, deadline: time.Now().Add(budget), producers: make([][]int, len(all))}
	for i := range all {
		s.producers[i] = producersOf(all, i)
	}
	return s
}

// producersOf lists the writes of ops that may have stored what operation i read.
func producersOf(ops []regOperation, i int) []int {
	g := &ops[i]
	if g.in.op != opGet || g.out.res != resOK {
		return nil
	}
	var out []int
	for j := range ops {
		w := &ops[j]
		if j == i || !isWrite(w.in.op) || (w.out.res != resOK && w.out.res != resUnknown) {
			continue
		}
		if (g.out.etag != "" && w.out.etag == g.out.etag) || (w.out.etag == "" && g.out.value != "" && w.in.value == g.out.value) {
			out = append(out, j)
		}
	}
	return out
}

func isWrite(op regOp) bool { return op == opCreate || op == opCAS || op == opPut }

// illegal reports whether the operations keep (indices into all, in order) are provably not
// linearizable from the shrinker's initial state, every read keeping one of its producers.
func (s *shrinker) illegal(keep []int) bool {
	if len(keep) == 0 {
		return false
	}
	for _, i := range keep {
		if p := s.producers[i]; len(p) > 0 && !slices.ContainsFunc(p, func(j int) bool { return slices.Contains(keep, j) }) {
			return false
		}
	}
	left := time.Until(s.deadline)
	if left <= 0 {
		s.expired = true
		return false
	}
	return porcupine.CheckOperationsTimeout(regModel, s.porcupineOps(keep), left) == porcupine.Illegal
}

func (s *shrinker) porcupineOps(keep []int) []porcupine.Operation {
	return historyOf(s.init, s.relax(keep))
}

// historyOf is ops (in invocation order) from init as porcupine operations.
func historyOf(init regState, ops []regOperation) []porcupine.Operation {
	first := ops[0].call
	h := make([]porcupine.Operation, 0, len(ops)+1)
	h = append(h, porcupine.Operation{Input: regInput{op: opAssume, assume: init}, Output: regOutput{}, Call: first - 2, Return: first - 1})
	for _, o := range ops {
		h = append(h, porcupine.Operation{Input: o.in, Output: o.out, Call: o.call, Return: o.ret})
	}
	return h
}

// relax returns the operations keep with every answer a dropped operation could explain
// made lenient: a conditional write whose condition a dropped operation could have made
// true is judged as an unconditional write, a refusal or a 404 that a dropped change could
// explain as telling nothing. Lenient operations only widen the legal orders, so a relaxed
// history that is not linearizable is not linearizable as recorded either, and no kept
// operation is condemned for what a dropped one did.
func (s *shrinker) relax(keep []int) []regOperation {
	kept := make([]bool, len(s.all))
	for _, i := range keep {
		kept[i] = true
	}
	dropped := func(before int64, pred func(d *regOperation) bool) bool {
		for i := range s.all {
			if d := &s.all[i]; !kept[i] && d.call <= before && changes(d) && pred(d) {
				return true
			}
		}
		return false
	}
	deletes := func(d *regOperation) bool { return d.in.op == opDelete || d.in.op == opMaybeDelete }
	out := make([]regOperation, len(keep))
	for n, i := range keep {
		o := s.all[i]
		switch {
		case o.in.op == opCAS && o.out.res == resOK &&
			dropped(o.ret, func(d *regOperation) bool { return isWrite(d.in.op) && d.out.etag == o.in.ifMatch }):
			o.in.op = opPut
		case o.in.op == opCreate && o.out.res == resOK && dropped(o.ret, deletes):
			o.in.op = opPut
		case o.in.op == opGet && o.out.res == resNotFound && dropped(o.ret, deletes):
			o.out.res = resUnknown
		case (o.in.op == opCAS || o.in.op == opCreate) && (o.out.res == resPrecond || o.out.res == resNotFound) &&
			dropped(o.ret, func(*regOperation) bool { return true }):
			o.out.res = resNotApplied
		}
		out[n] = o
	}
	return out
}

// shrink returns a small illegal subset of all (which must be illegal as a whole), and
// whether it is 1-minimal: first the shortest illegal prefix in invocation order, then
// chunks and single operations dropped while the rest stays illegal.
func (s *shrinker) indices() []int {
	keep := make([]int, len(s.all))
	for i := range keep {
		keep[i] = i
	}
	return keep
}

func (s *shrinker) shrink() ([]int, bool) {
	keep := s.indices()
	lo, hi := 0, len(keep) // keep[:hi] is illegal
	for lo+1 < hi {
		mid := (lo + hi) / 2
		if s.illegal(keep[:mid]) {
			hi = mid
		} else {
			lo = mid
		}
	}
	keep = keep[:hi]
	for size := len(keep) / 2; size >= 1; size /= 2 {
		keep = s.dropChunks(keep, size)
	}
	for changed := true; changed && !s.expired; {
		n := len(keep)
		keep = s.dropChunks(keep, 1)
		changed = len(keep) < n
	}
	return keep, !s.expired
}

func (s *shrinker) dropChunks(keep []int, size int) []int {
	for i := 0; i < len(keep) && !s.expired; {
		cand := slices.Concat(keep[:i], keep[min(i+size, len(keep)):])
		if s.illegal(cand) {
			keep = cand
			continue
		}
		i += size
	}
	return keep
}

// anyState is the register's state when nothing is assumed about it.
var anyState = regState{any: true}

// witnessStart is a history and the state it is judged from.
type witnessStart struct {
	init regState
	ops  []regOperation
}

// witnessOf cuts a witness out of the first of starts that is not linearizable (each is
// first tried from any state). It returns nil when all turn out linearizable within the
// budget.
func witnessOf(key string, budget time.Duration, starts ...witnessStart) *Witness {
	deadline := time.Now().Add(budget)
	var s *shrinker
	for _, st := range starts {
		for _, init := range []regState{anyState, st.init} {
			cand := newShrinker(init, st.ops, time.Until(deadline))
			if len(cand.all) > 0 && cand.illegal(cand.indices()) {
				s = cand
				break
			}
		}
		if s != nil {
			break
		}
	}
	if s == nil {
		return nil
	}
	keep, minimal := s.shrink()
	w := &Witness{Key: key, Initial: describeState(s.init), Of: len(s.all), Minimal: minimal}
	for n, i := range keep {
		o := &s.all[i]
		w.Ops = append(w.Ops, WitnessOp{N: n + 1, ID: o.ledger, Client: o.writer, Invoke: time.Duration(o.call),
			Complete: time.Duration(o.ret), Pending: o.pending,
			Request: reqText(o), Answer: answerText(o.out.res), ETag: o.out.etag, Value: opValue(o)})
	}
	w.Why = explain(s.init, s.relax(keep))
	return w
}

func opValue(o *regOperation) string {
	if o.in.op == opGet {
		return o.out.value
	}
	return o.in.value
}

func describeState(s regState) string {
	switch {
	case s.any:
		return "any state"
	case !s.exists:
		return "the key absent"
	case !s.known && s.value == "":
		return "the key present"
	}
	d := "the key present with"
	if s.known {
		d += " etag " + s.etag
	}
	if s.value != "" {
		d += " value " + s.value
	}
	return d
}
