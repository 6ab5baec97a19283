package checker

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
)

// explain says in one sentence why no order of ops (in invocation order, op N being ops[N-1])
// explains their answers from init. It recognises the usual shapes (two conditional writes
// that both won, a read that missed a completed write, a refusal of a condition that held)
// and otherwise names the longest order that explains a part and the operation that cannot
// extend it.
func explain(init regState, ops []regOperation) string {
	for _, f := range []func(regState, []regOperation) string{whyFork, whyStale, whyRefused} {
		if s := f(init, ops); s != "" {
			return s
		}
	}
	return whyStuck(init, ops)
}

func opName(i int) string { return fmt.Sprintf("op %d", i+1) }

// stateText describes what an operation read or wrote: its value and ETag.
func stateText(value, etag string) string {
	var p []string
	if value != "" {
		p = append(p, value)
	}
	if etag != "" {
		p = append(p, "etag "+etag)
	}
	if len(p) == 0 {
		return "an unknown value"
	}
	return strings.Join(p, " ")
}

func writeKind(op regOp) string {
	return map[regOp]string{opCreate: "create", opCAS: "CAS", opPut: "write"}[op]
}

// changes reports whether o may change the register.
func changes(o *regOperation) bool {
	if o.out.res != resOK && o.out.res != resUnknown && o.in.op != opMaybeDelete {
		return false
	}
	return isWrite(o.in.op) || o.in.op == opDelete || o.in.op == opMaybeDelete
}

func whyFork(_ regState, ops []regOperation) string {
	writersOf := func(etag string) []int {
		var out []int
		for i := range ops {
			if isWrite(ops[i].in.op) && changes(&ops[i]) && ops[i].out.etag == etag {
				out = append(out, i)
			}
		}
		return out
	}
	noDelete := !slices.ContainsFunc(ops, func(o regOperation) bool {
		return changes(&o) && (o.in.op == opDelete || o.in.op == opMaybeDelete)
	})
	for a := range ops {
		for b := a + 1; b < len(ops); b++ {
			x, y := &ops[a], &ops[b]
			if x.out.res != resOK || y.out.res != resOK || x.in.op != y.in.op {
				continue
			}
			switch {
			case x.in.op == opCAS && x.in.ifMatch == y.in.ifMatch && len(writersOf(x.in.ifMatch)) <= 1:
				src := "none of these operations writes etag " + x.in.ifMatch
				if p := writersOf(x.in.ifMatch); len(p) == 1 {
					src = fmt.Sprintf("only %s wrote etag %s", opName(p[0]), x.in.ifMatch)
				}
				return fmt.Sprintf("%s and %s both answered ok to PUT If-Match:%s, but %s, and whichever of the two took "+
					"effect first replaced it, so the other's condition cannot have held", opName(a), opName(b), x.in.ifMatch, src)
			case x.in.op == opCreate && noDelete:
				return fmt.Sprintf("%s and %s both created the key (PUT If-None-Match:* answered ok), and no delete can be "+
					"ordered between them", opName(a), opName(b))
			}
		}
	}
	return ""
}

// whyStale finds a read that returned what a write completed before it had replaced, with
// every write of what it read finished before that write began.
func whyStale(_ regState, ops []regOperation) string {
	for g := range ops {
		r := &ops[g]
		if r.in.op != opGet || (r.out.res != resOK && r.out.res != resNotFound) {
			continue
		}
		best := -1
		for w := range ops {
			x := &ops[w]
			if w == g || x.out.res != resOK || !isWrite(x.in.op) || x.ret >= r.call || !differs(x, r) {
				continue
			}
			if (best < 0 || x.ret > ops[best].ret) && !producedAfter(ops, r, x) {
				best = w
			}
		}
		if best < 0 {
			continue
		}
		x := &ops[best]
		if r.out.res == resNotFound {
			return fmt.Sprintf("%s found the key absent (404) after %s's %s of %s had completed, and no delete can be ordered "+
				"after %s", opName(g), opName(best), writeKind(x.in.op), stateText(x.in.value, x.out.etag), opName(best))
		}
		read := stateText(r.out.value, r.out.etag)
		return fmt.Sprintf("%s read %s after %s's %s to %s had completed, and no write of %s can be ordered after %s",
			opName(g), read, opName(best), writeKind(x.in.op), stateText(x.in.value, x.out.etag), read, opName(best))
	}
	return ""
}

// differs reports whether write w leaves a state other than what read r returned.
func differs(w, r *regOperation) bool {
	if r.out.res == resNotFound {
		return true
	}
	return (w.out.etag != "" && r.out.etag != "" && w.out.etag != r.out.etag) ||
		(w.in.value != "" && r.out.value != "" && w.in.value != r.out.value)
}

// producedAfter reports whether some operation that may change the key could be ordered
// after write w and leave what read r returned.
func producedAfter(ops []regOperation, r, w *regOperation) bool {
	for i := range ops {
		p := &ops[i]
		if p == r || p == w || !changes(p) || p.ret < w.call || (w.in.op == opCAS && p.out.etag == w.in.ifMatch) {
			continue // p cannot follow w: it finished first, or w's condition needs p's ETag
		}
		if r.out.res == resNotFound {
			if p.in.op == opDelete || p.in.op == opMaybeDelete {
				return true
			}
			continue
		}
		if isWrite(p.in.op) && !differs(p, r) {
			return true
		}
	}
	return false
}

// whyRefused finds a conditional write refused though the ETag it named was the key's.
func whyRefused(init regState, ops []regOperation) string {
	for c := range ops {
		x := &ops[c]
		if x.in.op != opCAS || x.out.res != resPrecond {
			continue
		}
		quiet := func(from int64, skip int) bool {
			for i := range ops {
				q := &ops[i]
				if i != c && i != skip && changes(q) && q.ret >= from && q.call <= x.ret {
					return false
				}
			}
			return true
		}
		if !init.any && init.known && init.etag == x.in.ifMatch && quiet(-1<<62, -1) {
			return fmt.Sprintf("%s was refused (412) on If-Match:%s, though the key held etag %s from the start and no "+
				"write can be ordered before it", opName(c), x.in.ifMatch, x.in.ifMatch)
		}
		for p := range ops {
			w := &ops[p]
			if isWrite(w.in.op) && w.out.res == resOK && w.out.etag == x.in.ifMatch && w.ret < x.call && quiet(w.call, p) {
				return fmt.Sprintf("%s was refused (412) on If-Match:%s, though %s had set etag %s before %s began and no "+
					"other write can be ordered between them", opName(c), x.in.ifMatch, opName(p), x.in.ifMatch, opName(c))
			}
		}
	}
	return ""
}

// whyStuck names porcupine's longest partial linearization and the first operation that
// cannot extend it.
func whyStuck(init regState, ops []regOperation) string {
	h := historyOf(init, ops)
	_, info := porcupine.CheckOperationsVerbose(regModel, h, time.Second)
	stuck, _ := firstUnlinearized(info, len(ops))
	var best []int
	for _, p := range info.PartialLinearizations() {
		for _, l := range p {
			if len(l) > len(best) {
				best = l
			}
		}
	}
	var order []string
	for _, id := range best {
		if id > 0 {
			order = append(order, opName(id-1))
		}
	}
	o := &ops[stuck]
	what := fmt.Sprintf("%s (%s answered %s, %s)", opName(stuck), reqText(o), answerText(o.out.res), stateText(opValue(o), o.out.etag))
	if len(order) == 0 {
		return fmt.Sprintf("%s cannot be explained starting from %s", what, describeState(init))
	}
	return fmt.Sprintf("no order of these %s explains every answer: the order %s is the longest that does, and %s "+
		"cannot follow it nor be placed earlier", plural(len(ops), "operation", "operations"), strings.Join(order, ", "), what)
}

// twoWinners names the condition a witness shows the store granting twice: two answers ok
// to PUT If-Match with one ETag, or more creates answered ok than the deletes among the ops
// could make room for (one more when the witness may start from an absent key). "" when
// the witness shows no such pair, or there is no witness.
func twoWinners(w *Witness) string {
	if w == nil {
		return ""
	}
	wins := map[string]int{}
	deletes := 0
	for _, o := range w.Ops {
		switch {
		case (o.Request == "DELETE" || o.Request == "DeleteObjects") && o.Answer != "404":
			deletes++
		case strings.HasPrefix(o.Request, "PUT If-") && o.Answer == "ok":
			wins[o.Request]++
		}
	}
	if wins["PUT If-None-Match:*"] > deletes+1 {
		return "PUT If-None-Match:*"
	}
	var twice []string
	for req, n := range wins {
		if n > 1 && strings.HasPrefix(req, "PUT If-Match:") {
			twice = append(twice, req)
		}
	}
	slices.Sort(twice)
	if len(twice) > 0 {
		return twice[0]
	}
	return ""
}
