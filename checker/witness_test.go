package checker

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
)

type anomaly int

const (
	noAnomaly anomaly = iota
	staleRead
	lostWrite
	forkedCAS
)

// chainGen simulates clients that read a register and CAS it If-Match the ETag they read,
// over an atomic register (each operation takes effect mid-interval, in step order), and
// plants one anomaly at or after step at.
type chainGen struct {
	ops     []RegisterOp
	planted []int // indices into ops
	etag    string
	value   string
	n       int
	writes  []genWrite
}

type genWrite struct {
	idx                  int
	ret                  int64
	ifMatch, prev, prevV string
}

func genChain(clients, steps, at int, a anomaly) (RegisterState, *chainGen) {
	g := &chainGen{etag: "e0", value: "value=0"}
	init := RegisterState{Exists: true, ETag: g.etag, Value: g.value}
	read := make([]bool, clients)
	seen := make([]string, clients)
	seenV := make([]string, clients)
	for s := 0; s < steps; s++ {
		c, call := s%clients, int64(s*10)
		op := RegisterOp{Client: c, Call: call, Return: call + 17}
		if !read[c] {
			op.Request, op.Answer, op.ETag, op.Value = RegisterGet, AnswerOK, g.etag, g.value
			if a == staleRead && s >= at && g.planted == nil {
				if w := g.lastDone(call); w != nil {
					op.ETag, op.Value = w.prev, w.prevV
					g.planted = []int{len(g.ops), w.idx}
				}
			}
			seen[c], seenV[c], read[c] = op.ETag, op.Value, true
			g.ops = append(g.ops, op)
			continue
		}
		read[c] = false
		g.n++
		op.Request, op.IfMatch, op.Value = RegisterCAS, seen[c], fmt.Sprintf("value=%d", valueOf(seenV[c])+1)
		g.cas(&op, a, s >= at)
	}
	return init, g
}

func valueOf(v string) int {
	var n int
	fmt.Sscanf(v, "value=%d", &n)
	return n
}

// lastDone is the last write that completed before t.
func (g *chainGen) lastDone(t int64) *genWrite {
	var last *genWrite
	for i := range g.writes {
		if w := &g.writes[i]; w.ret < t && (last == nil || w.ret > last.ret) {
			last = w
		}
	}
	return last
}

func (g *chainGen) cas(op *RegisterOp, a anomaly, armed bool) {
	idx := len(g.ops)
	newTag := fmt.Sprintf("e%d", g.n)
	match := op.IfMatch == g.etag
	switch {
	case match && a == lostWrite && armed && g.planted == nil:
		op.Answer, op.ETag = AnswerOK, newTag // acknowledged, never applied
		g.planted = []int{idx}
	case !match && a == forkedCAS && armed && g.planted == nil:
		for _, w := range g.writes {
			if w.ifMatch == op.IfMatch {
				g.planted = []int{w.idx, idx}
				match = true
			}
		}
		if !match {
			op.Answer = AnswerRefused
			break
		}
		fallthrough
	case match:
		op.Answer, op.ETag = AnswerOK, newTag
		g.writes = append(g.writes, genWrite{idx: idx, ret: op.Return, ifMatch: op.IfMatch, prev: g.etag, prevV: g.value})
		g.etag, g.value = newTag, op.Value
	default:
		op.Answer = AnswerRefused
	}
	g.ops = append(g.ops, *op)
}

var opRef = regexp.MustCompile(`\bop (\d+)\b`)

// wantWitness asserts a small witness holding the planted operations (by ID), each named in
// its sentence.
func wantWitness(t *testing.T, w *Witness, planted []int64) {
	t.Helper()
	if w == nil {
		t.Fatal("no witness")
	}
	t.Logf("witness of %d ops (of %d), minimal %t:\n%s", len(w.Ops), w.Of, w.Minimal, w.Text())
	if len(w.Ops) > 6 || len(w.Ops) == 0 {
		t.Errorf("witness has %d operations, want 1 to 6", len(w.Ops))
	}
	named := map[string]bool{}
	for _, m := range opRef.FindAllStringSubmatch(w.Why, -1) {
		named[m[1]] = true
	}
	for _, id := range planted {
		n := 0
		for _, o := range w.Ops {
			if o.ID == id {
				n = o.N
			}
		}
		if n == 0 {
			t.Errorf("the witness lacks planted operation %d", id)
		} else if !named[fmt.Sprint(n)] {
			t.Errorf("the sentence does not name op %d (planted %d): %s", n, id, w.Why)
		}
	}
	if _, err := json.Marshal(w); err != nil {
		t.Error(err)
	}
}

func TestCheckRegisterWitness(t *testing.T) {
	for _, c := range []struct {
		name      string
		a         anomaly
		steps, at int
	}{
		{"stale read", staleRead, 200, 111},
		{"lost write", lostWrite, 400, 251},
		{"forked CAS", forkedCAS, 60, 31},
		{"forked CAS late", forkedCAS, 300, 270},
	} {
		t.Run(c.name, func(t *testing.T) {
			init, g := genChain(4, c.steps, c.at, c.a)
			if g.planted == nil {
				t.Fatal("nothing planted")
			}
			v, w := CheckRegisterWitness(init, g.ops, 20*time.Second)
			if v != Fail {
				t.Fatalf("verdict %s, want fail", v)
			}
			var ids []int64
			for _, i := range g.planted {
				ids = append(ids, int64(i))
			}
			wantWitness(t, w, ids)
			if !w.Minimal || w.Of != len(g.ops) {
				t.Errorf("minimal %t, of %d; want minimal, of %d", w.Minimal, w.Of, len(g.ops))
			}
		})
	}
	t.Run("linearizable", func(t *testing.T) {
		init, g := genChain(4, 300, 0, noAnomaly)
		if v, w := CheckRegisterWitness(init, g.ops, 20*time.Second); v != Pass || w != nil {
			t.Fatalf("verdict %s, witness %+v; want pass and none", v, w)
		}
	})
}

// ledgerOf turns a generated chain into a proxy ledger on key k5, after a create of e0.
func ledgerOf(h *hb, ops []RegisterOp) []int64 {
	h.put("c0", k5, 0, 1, "", "*", 200, "e0")
	ids := make([]int64, len(ops))
	for i, o := range ops {
		from, to, w := int(o.Call)+10, int(o.Return)+10, fmt.Sprintf("c%d", o.Client)
		if o.Request == RegisterGet {
			ids[i] = h.ledger(history.LedgerEntry{Writer: w, Method: "GET", Key: k5, Time: ms(from), Done: ms(to),
				Forwarded: true, Status: 200, ETag: o.ETag, Delivered: true})
			continue
		}
		status := 200
		if o.Answer == AnswerRefused {
			status = 412
		}
		ids[i] = h.put(w, k5, from, to, o.IfMatch, "", status, o.ETag)
	}
	return ids
}

func TestStoreLinearizableWitness(t *testing.T) {
	for _, a := range []anomaly{staleRead, lostWrite, forkedCAS} {
		t.Run(fmt.Sprint(a), func(t *testing.T) {
			_, g := genChain(4, 240, 150, a)
			h := &hb{}
			ids := ledgerOf(h, g.ops)
			ir := wantStatus(t, Check(h.input()), StoreLinearizable, Fail)
			var planted []int64
			for _, i := range g.planted {
				planted = append(planted, ids[i])
			}
			wantWitness(t, ir.Witness, planted)
			if ir.Witness.Key != k5 {
				t.Errorf("witness key %q", ir.Witness.Key)
			}
			b, _ := json.Marshal(ir)
			if !strings.Contains(string(b), `"witness":{`) {
				t.Errorf("the result's JSON lacks the witness: %s", b)
			}
		})
	}
	t.Run("linearizable", func(t *testing.T) {
		_, g := genChain(4, 240, 0, noAnomaly)
		h := &hb{}
		ledgerOf(h, g.ops)
		if ir := wantStatus(t, Check(h.input()), StoreLinearizable, Pass); ir.Witness != nil {
			t.Errorf("a witness on a pass: %+v", ir.Witness)
		}
	})
}
