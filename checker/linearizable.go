package checker

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/fencebench/fencebench/history"
)

// linJudge judges the store's answers in the ledger: StoreLinearizable.
type linJudge struct{ *index }

// determines reports the single state a legal operation leaves the register in, if it does.
func determines(o *regOperation) (regState, bool) {
	switch {
	case o.out.res == resOK && (o.in.op == opCreate || o.in.op == opCAS || o.in.op == opPut):
		return written(o.in, o.out), true
	case o.out.res == resOK && o.in.op == opGet && o.out.etag != "":
		return regState{exists: true, known: true, etag: o.out.etag, value: o.out.value}, true
	case o.out.res == resNotFound && (o.in.op == opGet || o.in.op == opCAS):
		return regState{}, true
	case o.out.res == resOK && o.in.op == opDelete:
		return regState{}, true
	}
	return regState{}, false
}

func classify(l *history.LedgerEntry) regRes {
	switch {
	case l.Copies > 1 && !l.Applied():
		return resUnknown
	case !l.Forwarded || l.Status == 0:
		return resUnknown
	case l.Status >= 200 && l.Status < 300:
		return resOK
	case l.Status == 412:
		return resPrecond
	case l.Status == 404:
		return resNotFound
	case l.Status >= 400 && l.Status < 500:
		return resNotApplied
	}
	return resUnknown
}

// storeOps turns the ledger into register operations per fence key. Requests a fault rule
// answered without forwarding never reached the store and are left out. A request whose
// conditional headers a rule stripped is judged as the unconditional write the store saw.
// A request forwarded with no answer stays open to the end of the ledger (it may still be
// applied); a duplicated request contributes one extra operation of unknown outcome.
func storeOps(ledger []history.LedgerEntry) (map[string][]regOperation, []string) {
	var end int64
	for i := range ledger {
		end = max(end, int64(ledger[i].Done), int64(ledger[i].Time))
	}
	end++
	byKey := map[string][]regOperation{}
	var batchDeletes []regOperation
	for i := range ledger {
		l := &ledger[i]
		if !l.Forwarded && l.Rule != "" || l.Action == misdirect {
			// Answered by a rule, or with another object's state (a misdirected read): no
			// answer of the store about this key.
			continue
		}
		fence := isFenceKey(l.Key)
		batch := l.Key == "" && l.Method == "POST" && strings.Contains(l.Query, "delete")
		if !fence && !batch {
			continue
		}
		o := regOperation{call: int64(l.Time), ret: int64(l.Done), ledger: l.ID, writer: l.Writer,
			out: regOutput{res: classify(l), etag: normToken(l.ETag)}}
		if o.ret < o.call {
			o.ret = o.call
		}
		if l.Forwarded && l.Status == 0 {
			o.ret, o.pending = end, true
		}
		stripped := strings.Contains(strings.ToLower(l.Action), "strip")
		switch {
		case batch:
			o.in.op = opMaybeDelete
			batchDeletes = append(batchDeletes, o)
			continue
		case l.Method == "PUT" && l.IfNoneMatch == "*" && !stripped:
			o.in.op = opCreate
		case l.Method == "PUT" && l.IfMatch != "" && !stripped:
			o.in.op, o.in.ifMatch = opCAS, normToken(l.IfMatch)
		case l.Method == "PUT":
			o.in.op = opPut
		case l.Method == "GET" || l.Method == "HEAD":
			if o.out.res != resOK && o.out.res != resNotFound {
				continue // no information about the state
			}
			o.in.op = opGet
		case l.Method == "DELETE":
			o.in.op = opDelete
		default:
			continue
		}
		byKey[l.Key] = append(byKey[l.Key], o)
		if l.Copies > 1 {
			dup := o
			dup.out = regOutput{res: resUnknown}
			dup.ret, dup.pending = end, true
			byKey[l.Key] = append(byKey[l.Key], dup)
		}
	}
	keys := make([]string, 0, len(byKey))
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		byKey[k] = append(byKey[k], batchDeletes...)
		ops := byKey[k]
		sort.SliceStable(ops, func(i, j int) bool { return ops[i].call < ops[j].call })
	}
	return byKey, keys
}

type chunk struct {
	key    string
	init   regState
	origin *regOperation // the operation that left the register in init; nil at the start
	ops    []regOperation
}

// chunks cuts each key's history at operations that are isolated in real time (everything
// earlier returned before they were invoked, everything later is invoked after they returned)
// and leave the register in a single known state. Such an operation is last in any
// linearization of what precedes it, so the parts can be checked separately, each from the
// state the cut leaves. This keeps porcupine's search, and its memory, local.
func chunks(byKey map[string][]regOperation, keys []string) []chunk {
	var out []chunk
	for _, k := range keys {
		ops := byKey[k]
		var maxRet int64 = -1 << 62
		cur := chunk{key: k}
		for i := range ops {
			o := &ops[i]
			cur.ops = append(cur.ops, *o)
			isolated := o.call > maxRet
			maxRet = max(maxRet, o.ret)
			// Cut after o when nothing earlier overlaps it and nothing later overlaps anything
			// so far (ops are sorted by call, so the next op is the earliest later one).
			if !isolated || (i+1 < len(ops) && ops[i+1].call <= maxRet) {
				continue
			}
			if s, ok := determines(o); ok {
				out = append(out, cur)
				cur = chunk{key: k, init: s, origin: &ops[i]}
			}
		}
		if len(cur.ops) > 0 {
			out = append(out, cur)
		}
	}
	return out
}

// stepChunk checks a chunk whose operations are totally ordered in real time by stepping the
// model directly; it returns the index of the first illegal operation, or -1.
func stepChunk(c *chunk) int {
	states := []regState{c.init}
	for i := range c.ops {
		o := &c.ops[i]
		var next []regState
		for _, s := range states {
			for _, n := range regStep(s, o.in, o.out) {
				if !slices.Contains(next, n) {
					next = append(next, n)
				}
			}
		}
		if len(next) == 0 {
			return i
		}
		states = next
	}
	return -1
}

func sequential(c *chunk) bool {
	for i := 1; i < len(c.ops); i++ {
		if c.ops[i].call <= c.ops[i-1].ret {
			return false
		}
	}
	return true
}

func (c *chunk) porcupineOps(part int) []porcupine.Operation {
	first := c.ops[0].call
	ops := make([]porcupine.Operation, 0, len(c.ops)+1)
	ops = append(ops, porcupine.Operation{Input: regInput{part: part, op: opAssume, assume: c.init},
		Output: regOutput{}, Call: first - 2, Return: first - 1})
	for _, o := range c.ops {
		in := o.in
		in.part = part
		ops = append(ops, porcupine.Operation{Input: in, Output: o.out, Call: o.call, Return: o.ret})
	}
	return ops
}

// storeLinearizable runs the check. Writers that made fence writes while the ledger was
// recording but have no ledger entry at all bypassed the proxy: their requests are invisible,
// so the check cannot be judged.
func (x *linJudge) storeLinearizable() InvariantResult {
	r := newResult(StoreLinearizable)
	if len(x.in.Ledger) == 0 {
		r.Explanation = "no ledger: nothing to check"
		if x.hasFenceWrites() {
			r.Status = Inconclusive
			r.Explanation = "no ledger was recorded, though fence keys were written: the store's answers are unknown"
		}
		return r
	}
	if missing := x.writersOutsideLedger(); len(missing) > 0 {
		r.Status = Inconclusive
		r.Explanation = fmt.Sprintf("fence writes by %s do not appear in the ledger: the store's history is incomplete",
			strings.Join(missing, ", "))
		return r
	}
	byKey, keys := storeOps(x.in.Ledger)
	cs := chunks(byKey, keys)
	total := 0
	var concurrent []porcupine.Operation
	var concurrentChunks []int
	for i := range cs {
		c := &cs[i]
		total += len(c.ops)
		if sequential(c) {
			if bad := stepChunk(c); bad >= 0 {
				return x.linFailure(r, c, bad, bad-1)
			}
			continue
		}
		concurrent = append(concurrent, c.porcupineOps(i)...)
		concurrentChunks = append(concurrentChunks, i)
	}
	timeout := x.linTimeout()
	if len(concurrent) > 0 {
		switch porcupine.CheckOperationsTimeout(regModel, concurrent, timeout) {
		case porcupine.Unknown:
			r.Status = Inconclusive
			r.Explanation = fmt.Sprintf("the linearizability search timed out after %s", timeout)
			return r
		case porcupine.Illegal:
			for _, i := range concurrentChunks {
				c := &cs[i]
				res, info := porcupine.CheckOperationsVerbose(regModel, c.porcupineOps(i), timeout)
				if res == porcupine.Illegal {
					stuck, last := firstUnlinearized(info, len(c.ops))
					return x.linFailure(r, c, stuck, last)
				}
			}
			r.Status = Fail
			r.Explanation = "the store's history is not linearizable (the failing key could not be isolated)"
			return r
		}
	}
	r.Explanation = fmt.Sprintf("%s on %s are linearizable", plural(total, "store request", "store requests"),
		plural(len(keys), "fence key", "fence keys"))
	return r
}

// firstUnlinearized picks a witness from porcupine's longest partial linearizations: among
// those of maximal length, the one whose ids sort first (porcupine returns them in no fixed
// order), so the counterexample is deterministic. It returns the index (into the chunk's
// ops) of the earliest-invoked operation outside it, and of the last operation in it (-1
// when only the synthetic initial state was linearized).
func firstUnlinearized(info porcupine.LinearizationInfo, n int) (stuck, last int) {
	var best []int
	for _, p := range info.PartialLinearizations() {
		for _, l := range p {
			if len(l) > len(best) || (len(l) == len(best) && slices.Compare(sortedInts(l), sortedInts(best)) < 0) {
				best = l
			}
		}
	}
	in := make([]bool, n+1)
	for _, id := range best {
		if id < len(in) {
			in[id] = true
		}
	}
	stuck, last = n-1, -1
	for i := 1; i <= n; i++ { // index 0 is the synthetic initial-state operation
		if !in[i] {
			stuck = i - 1
			break
		}
	}
	if len(best) > 0 && best[len(best)-1] > 0 {
		last = best[len(best)-1] - 1
	}
	return stuck, last
}

func sortedInts(v []int) []int {
	out := slices.Clone(v)
	slices.Sort(out)
	return out
}

// reqText is the request of an operation as the reports spell it.
func reqText(o *regOperation) string {
	switch o.in.op {
	case opCreate:
		return "PUT If-None-Match:*"
	case opCAS:
		return "PUT If-Match:" + o.in.ifMatch
	case opPut:
		return "PUT"
	case opGet:
		return "GET"
	case opDelete:
		return "DELETE"
	case opMaybeDelete:
		return "DeleteObjects"
	}
	return ""
}

// answerText is an answer class as the reports spell it.
func answerText(r regRes) string {
	return map[regRes]string{resOK: "ok", resPrecond: "412", resNotFound: "404", resNotApplied: "refused",
		resUnknown: "no answer"}[r]
}

func describeReq(o *regOperation) string {
	ans := answerText(o.out.res)
	if o.out.res == resOK && o.out.etag != "" {
		ans += " etag " + o.out.etag
	}
	return fmt.Sprintf("request %d (%s: %s -> %s at %s)", o.ledger, o.writer, reqText(o), ans, secs(time.Duration(o.call)))
}

// linFailure reports operation bad of chunk c as unexplainable after operation prev (-1: after
// the chunk's initial state).
func (x *linJudge) linFailure(r InvariantResult, c *chunk, bad, prevIdx int) InvariantResult {
	r.Status = Fail
	r.Violations = 1
	o := &c.ops[bad]
	r.Explanation = fmt.Sprintf("the store's answers on %s are not linearizable", c.key)
	prev := c.origin
	for i := prevIdx; i >= 0; i-- {
		if c.ops[i].in.op != opMaybeDelete {
			prev = &c.ops[i]
			break
		}
	}
	state := "the key absent"
	if c.init.exists {
		state = "the key present"
		if c.init.known {
			state += " with etag " + c.init.etag
		}
	}
	if prev != nil {
		r.Narrative = fmt.Sprintf("on %s, no order of the store's answers fits a compare-and-swap register: after %s, "+
			"%s cannot be explained", c.key, describeReq(prev), describeReq(o))
		r.LedgerEntries = []int64{prev.ledger, o.ledger}
	} else {
		r.Narrative = fmt.Sprintf("on %s, %s cannot be explained starting from %s", c.key, describeReq(o), state)
		r.LedgerEntries = []int64{o.ledger}
	}
	if o.in.op == opCreate && o.out.res == resOK && prev != nil && prev.in.op == opCreate && prev.out.res == resOK {
		r.Narrative += ": two conditional creates of one key both succeeded"
	}
	slices.Sort(r.LedgerEntries)
	starts := []witnessStart{{c.init, c.ops}}
	if c.origin != nil { // the operation that left init may be part of the story
		starts = append([]witnessStart{{anyState, append([]regOperation{*c.origin}, c.ops...)}}, starts...)
	}
	r.Witness = witnessOf(c.key, min(x.linTimeout(), witnessBudget), starts...)
	if req := twoWinners(r.Witness); req != "" {
		r.Explanation += ": the store answered two winners for one condition (" + req + ")"
	}
	return r
}

func (x *linJudge) linTimeout() time.Duration {
	if x.in.LinearizabilityTimeout <= 0 {
		return 30 * time.Second
	}
	return x.in.LinearizabilityTimeout
}

func (x *linJudge) hasFenceWrites() bool {
	for i := range x.ev {
		if writesKey(x.ev[i].Kind) && isFenceKey(x.ev[i].Key) {
			return true
		}
	}
	return false
}

// writersOutsideLedger names writers with fence writes during the ledger's span but no ledger
// entry. A writer acting only after the ledger's last entry (an auditor that bypasses the
// proxy) cannot hide anything from the recorded part and is not counted.
func (x *linJudge) writersOutsideLedger() []string {
	seen := map[string]bool{}
	var last time.Duration
	for i := range x.in.Ledger {
		seen[x.in.Ledger[i].Writer] = true
		last = max(last, x.in.Ledger[i].Time)
	}
	var out []string
	for i := range x.ev {
		e := &x.ev[i]
		if writesKey(e.Kind) && isFenceKey(e.Key) && !seen[x.pathOf(e.Writer)] && e.Invoke <= last &&
			!slices.Contains(out, e.Writer) {
			out = append(out, e.Writer)
		}
	}
	slices.Sort(out)
	return out
}
