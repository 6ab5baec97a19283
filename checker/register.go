package checker

import (
	"fmt"
	"hash/fnv"
	"strconv"
	"time"

	"github.com/anishathalye/porcupine"
)

// The store-linearizability check models each fence key as a compare-and-swap register
// whose state is "absent" or "present with ETag e" (e possibly unknown, after a write whose
// answer never arrived), and optionally the value the write stored. It is nondeterministic: a
// request whose outcome is unknown may or may not have been applied.

type regOp uint8

const (
	opAssume      regOp = iota // synthetic: the chunk starts in a known state
	opCreate                   // PUT If-None-Match: *
	opCAS                      // PUT If-Match: token
	opPut                      // unconditional PUT
	opGet                      // GET / HEAD
	opDelete                   // DELETE
	opMaybeDelete              // DeleteObjects: the ledger does not name its keys
)

type regRes uint8

const (
	resOK         regRes = iota // 2xx
	resPrecond                  // 412
	resNotFound                 // 404
	resNotApplied               // another 4xx: refused, not applied
	resUnknown                  // no answer, 5xx, or a duplicate copy: possibly applied
)

// regState is the register. value is what the last write stored; the store-level check of
// a run does not track values and leaves it empty.
type regState struct {
	any    bool // nothing is known: the state before a witness's first operation
	exists bool
	known  bool // etag is known
	etag   string
	value  string
}

type regInput struct {
	part    int // chunk id, the porcupine partition
	op      regOp
	ifMatch string
	value   string // what a write stores
	assume  regState
}

type regOutput struct {
	res   regRes
	etag  string
	value string // what a read returned
}

// regOperation is one store request on one key, before it becomes a porcupine.Operation.
type regOperation struct {
	call, ret int64
	in        regInput
	out       regOutput
	ledger    int64 // ledger entry ID
	writer    string
	pending   bool // no answer: open to the end of the history
}

// written is the state an applied write leaves: its ETag when the answer carried one.
func written(in regInput, out regOutput) regState {
	return regState{exists: true, known: out.etag != "", etag: out.etag, value: in.value}
}

// maybeWritten is the state a write without an answer leaves if it was applied.
func maybeWritten(in regInput) regState {
	return regState{exists: true, value: in.value}
}

func regStep(s regState, in regInput, out regOutput) []regState {
	if s.any && in.op != opAssume {
		return anyStep(in, out)
	}
	switch in.op {
	case opAssume:
		return []regState{in.assume}
	case opCreate:
		return createStep(s, in, out)
	case opCAS:
		return casStep(s, in, out)
	case opPut:
		switch out.res {
		case resOK:
			return []regState{written(in, out)}
		case resUnknown:
			return []regState{s, maybeWritten(in)}
		}
	case opGet:
		return getStep(s, out)
	case opDelete:
		switch out.res {
		case resOK:
			return []regState{{}}
		case resUnknown:
			return []regState{s, {}}
		}
	case opMaybeDelete:
		return []regState{s, {}}
	}
	return []regState{s}
}

// anyStep is a step from a state nothing is known about: every answer is legal, and the
// states it leaves are those the answer implies (still any state when it implies none).
func anyStep(in regInput, out regOutput) []regState {
	switch {
	case out.res == resOK && isWrite(in.op):
		return []regState{written(in, out)}
	case out.res == resUnknown && isWrite(in.op):
		return []regState{anyState, maybeWritten(in)}
	case in.op == opGet && out.res == resOK:
		return []regState{{exists: true, known: out.etag != "", etag: out.etag, value: out.value}}
	case out.res == resNotFound && (in.op == opGet || in.op == opCAS):
		return []regState{{}}
	case in.op == opDelete && out.res == resOK:
		return []regState{{}}
	case in.op == opMaybeDelete || (in.op == opDelete && out.res == resUnknown):
		return []regState{anyState, {}}
	}
	return []regState{anyState}
}

func createStep(s regState, in regInput, out regOutput) []regState {
	switch out.res {
	case resOK:
		if !s.exists {
			return []regState{written(in, out)}
		}
		return nil
	case resPrecond:
		if s.exists {
			return []regState{s}
		}
		return nil
	case resUnknown:
		if !s.exists {
			return []regState{s, maybeWritten(in)}
		}
	}
	return []regState{s}
}

func casStep(s regState, in regInput, out regOutput) []regState {
	match := s.exists && (!s.known || s.etag == in.ifMatch)
	switch out.res {
	case resOK:
		if match {
			return []regState{written(in, out)}
		}
		return nil
	case resPrecond: // also what some stores answer for a missing key
		if !s.exists || !s.known || s.etag != in.ifMatch {
			return []regState{s}
		}
		return nil
	case resNotFound:
		if !s.exists {
			return []regState{s}
		}
		return nil
	case resUnknown:
		if match {
			return []regState{s, maybeWritten(in)}
		}
	}
	return []regState{s}
}

func getStep(s regState, out regOutput) []regState {
	switch out.res {
	case resOK:
		if s.exists && (!s.known || out.etag == "" || s.etag == out.etag) && s.value == out.value {
			if out.etag == "" {
				return []regState{s}
			}
			return []regState{{exists: true, known: true, etag: out.etag, value: s.value}}
		}
		return nil
	case resNotFound:
		if !s.exists {
			return []regState{s}
		}
		return nil
	}
	return []regState{s}
}

var regModel = func() porcupine.Model {
	nm := porcupine.NondeterministicModel{
		Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
			byPart := map[int][]porcupine.Operation{}
			var order []int
			for _, o := range h {
				p := o.Input.(regInput).part
				if _, ok := byPart[p]; !ok {
					order = append(order, p)
				}
				byPart[p] = append(byPart[p], o)
			}
			out := make([][]porcupine.Operation, 0, len(order))
			for _, p := range order {
				out = append(out, byPart[p])
			}
			return out
		},
		Init: func() []interface{} { return []interface{}{regState{}} },
		Step: func(state, input, output interface{}) []interface{} {
			next := regStep(state.(regState), input.(regInput), output.(regOutput))
			out := make([]interface{}, len(next))
			for i, s := range next {
				out[i] = s
			}
			return out
		},
		Hash: func(state interface{}) uint64 {
			s := state.(regState)
			h := fnv.New64a()
			fmt.Fprintf(h, "%t|%t|%t|%s|%s", s.any, s.exists, s.known, s.etag, s.value)
			return h.Sum64()
		},
	}
	return nm.ToModel()
}()

// RegisterRequest is a request on one key, as the register model knows it.
type RegisterRequest uint8

// The requests of the register model.
const (
	RegisterCreate = RegisterRequest(opCreate) // PUT If-None-Match: *
	RegisterCAS    = RegisterRequest(opCAS)    // PUT If-Match: RegisterOp.IfMatch
	RegisterPut    = RegisterRequest(opPut)    // unconditional PUT
	RegisterGet    = RegisterRequest(opGet)    // GET or HEAD
	RegisterDelete = RegisterRequest(opDelete) // DELETE
)

// RegisterAnswer is the store's answer to a request, as the register model classifies it.
type RegisterAnswer uint8

// The answers of the register model. AnswerRefused is a failed condition (412, or 409 where
// a store answers a lost conditional race so): legal only when the condition did not hold.
// AnswerNotApplied is another 4xx, refused whatever the state. AnswerUnknown is no answer or
// a 5xx: the request may or may not have been applied.
const (
	AnswerOK         = RegisterAnswer(resOK)
	AnswerRefused    = RegisterAnswer(resPrecond)
	AnswerNotFound   = RegisterAnswer(resNotFound)
	AnswerNotApplied = RegisterAnswer(resNotApplied)
	AnswerUnknown    = RegisterAnswer(resUnknown)
)

// RegisterState is a state of the register: absent, or present with an ETag ("" when
// unknown) and a value ("" when values are not tracked).
type RegisterState struct {
	Exists bool
	ETag   string
	Value  string
}

// RegisterOp is one request on the register with its answer. Call and Return are the times
// the request was sent and its answer arrived (any common origin); ETag and Value are what a
// GET returned, or the ETag a write's answer carried and the value it stored. A caller that
// does not track values leaves Value empty everywhere.
type RegisterOp struct {
	Client       int
	Call, Return int64
	Request      RegisterRequest
	IfMatch      string
	Answer       RegisterAnswer
	ETag         string
	Value        string
}

// CheckRegister judges whether a history of requests on one key is linearizable for the
// compare-and-swap register that StoreLinearizable checks each fence key against, starting
// from init. It returns Pass, Fail, or Inconclusive when the search did not end within
// timeout.
func CheckRegister(init RegisterState, ops []RegisterOp, timeout time.Duration) Verdict {
	v, _ := checkRegister(init, ops, timeout, false)
	return v
}

// CheckRegisterWitness is CheckRegister that, on Fail, also cuts a [Witness] out of the
// history: the operations' IDs are their indices in ops, their clients the Client numbers.
// The witness is nil unless the verdict is Fail.
func CheckRegisterWitness(init RegisterState, ops []RegisterOp, timeout time.Duration) (Verdict, *Witness) {
	return checkRegister(init, ops, timeout, true)
}

func checkRegister(init RegisterState, ops []RegisterOp, timeout time.Duration, witness bool) (Verdict, *Witness) {
	assume := regState{exists: init.Exists, known: init.Exists && init.ETag != "", etag: init.ETag, value: init.Value}
	rops := make([]regOperation, len(ops))
	for i, o := range ops {
		rops[i] = regOperation{call: o.Call, ret: o.Return, ledger: int64(i), writer: strconv.Itoa(o.Client),
			in:  regInput{op: regOp(o.Request), ifMatch: o.IfMatch, value: o.Value},
			out: regOutput{res: regRes(o.Answer), etag: o.ETag, value: o.Value}}
	}
	var first int64
	for i, o := range ops {
		if i == 0 || o.Call < first {
			first = o.Call
		}
	}
	h := make([]porcupine.Operation, 0, len(ops)+1)
	h = append(h, porcupine.Operation{Input: regInput{op: opAssume, assume: assume}, Output: regOutput{}, Call: first - 2, Return: first - 1})
	for i, o := range rops {
		h = append(h, porcupine.Operation{ClientId: ops[i].Client, Call: o.call, Return: o.ret, Input: o.in, Output: o.out})
	}
	switch porcupine.CheckOperationsTimeout(regModel, h, timeout) {
	case porcupine.Ok:
		return Pass, nil
	case porcupine.Illegal:
		if !witness {
			return Fail, nil
		}
		return Fail, witnessOf("", min(timeout, witnessBudget), witnessStart{assume, rops})
	}
	return Inconclusive, nil
}
