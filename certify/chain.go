package certify

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/store"
)

// The CAS chain (B11). Every write carries "value=<n> nonce=<nonce> prev=<nonce it read>".
// The history is judged with the checker's register model ([checker.CheckRegister]), the
// value of each state being the write's value and nonce.

type chainWrite struct {
	value  int
	nonce  string
	prev   string
	res    checker.RegisterAnswer
	writer int
}

func chainBody(value int, n, prev string) []byte {
	return fmt.Appendf(nil, "fencebench-certify b11 value=%d nonce=%s prev=%s", value, n, prev)
}

// chainValue is the register value of a chain link.
func chainValue(value int, n string) string {
	return fmt.Sprintf("value=%d nonce=%s", value, n)
}

func parseChain(b []byte) (value int, n, prev string, err error) {
	var got int
	for _, f := range strings.Fields(string(b)) {
		k, v, ok := strings.Cut(f, "=")
		if !ok {
			continue
		}
		switch k {
		case "value":
			if value, err = strconv.Atoi(v); err != nil {
				return 0, "", "", fmt.Errorf("bad value in %.100q", b)
			}
			got++
		case "nonce":
			n = v
			got++
		case "prev":
			prev = v
			got++
		}
	}
	if got != 3 {
		return 0, "", "", fmt.Errorf("not a chain body: %.100q", b)
	}
	return value, n, prev, nil
}

// chainRun is the shared record of the chain's writers.
type chainRun struct {
	t       *trial
	key     string
	t0      time.Time
	mu      sync.Mutex
	ops     []checker.RegisterOp
	writes  map[string]*chainWrite
	harmful []func() // problems to report once the writers are done (a trial is not goroutine-safe)
}

func (c *chainRun) now() int64 { return int64(time.Since(c.t0)) }

func (c *chainRun) problem(f func()) {
	c.mu.Lock()
	c.harmful = append(c.harmful, f)
	c.mu.Unlock()
}

// writer runs one writer's rounds: read the link, write the next one If-Match its ETag.
func (c *chainRun) writer(ctx context.Context, w int, s store.Store, rounds int) {
	t := c.t
	for r := 0; r < rounds && ctx.Err() == nil; r++ {
		call := c.now()
		o, err := s.Get(ctx, c.key)
		ret := c.now()
		if err != nil {
			if ambiguous(err) {
				continue // a read changes nothing; try again
			}
			c.problem(func() { t.unexpected(fmt.Sprintf("writer %d: GET", w), err, "200") })
			return
		}
		v, cur, _, err := parseChain(o.Body)
		if err != nil {
			c.problem(func() { t.failf("writer %d: GET: %v", w, err) })
			return
		}
		c.mu.Lock()
		c.ops = append(c.ops, checker.RegisterOp{Client: w, Call: call, Return: ret, Request: checker.RegisterGet,
			Answer: checker.AnswerOK, ETag: o.ETag, Value: chainValue(v, cur)})
		c.mu.Unlock()
		next := nonce()
		cw := &chainWrite{value: v + 1, nonce: next, prev: cur, writer: w}
		call = c.now()
		etag, err := s.PutIfMatch(ctx, c.key, chainBody(v+1, next, cur), o.ETag)
		ret = c.now()
		switch {
		case err == nil:
			cw.res = checker.AnswerOK
		case refused(err):
			cw.res = checker.AnswerRefused
		default:
			cw.res = checker.AnswerUnknown
		}
		c.mu.Lock()
		c.writes[next] = cw
		c.ops = append(c.ops, checker.RegisterOp{Client: w, Call: call, Return: ret, Request: checker.RegisterCAS,
			IfMatch: o.ETag, Answer: cw.res, ETag: etag, Value: chainValue(v+1, next)})
		if cw.res == checker.AnswerUnknown && !ambiguous(err) {
			c.harmful = append(c.harmful, func() { t.unexpected(fmt.Sprintf("writer %d: PUT If-Match", w), err, "2xx, 412 or 409") })
		}
		c.mu.Unlock()
	}
}

func probeB11(ctx context.Context, t *trial) {
	key := t.key("chain")
	n0 := nonce()
	e0, err := t.s.PutIfAbsent(ctx, key, chainBody(0, n0, "-"))
	if err != nil {
		t.unexpected("PUT If-None-Match: * of the chain's first link", err, "200")
		return
	}
	m, rounds := t.opts.Writers, t.opts.Keys
	writers, err := t.stores(m)
	if err != nil {
		t.errorf("store clients: %v", err)
		return
	}
	c := &chainRun{t: t, key: key, t0: time.Now(), writes: map[string]*chainWrite{}}
	var wg sync.WaitGroup
	for w, s := range writers {
		wg.Go(func() { c.writer(ctx, w, s, rounds) })
	}
	wg.Wait()
	if ctx.Err() != nil {
		return // the run names the deadline or the interruption, and what the probe was doing
	}
	for _, h := range c.harmful {
		h()
	}
	final, err := t.s.Get(ctx, key)
	if err != nil {
		t.unexpected("final GET", err, "200")
		return
	}
	fv, fn, _, err := parseChain(final.Body)
	if err != nil {
		t.failf("final GET: %v", err)
		return
	}
	acked := c.judgeChain(n0, fv, fn, m, rounds)
	// Linearizability of the whole history, with the final read as the last operation.
	c.ops = append(c.ops, checker.RegisterOp{Client: m, Call: c.now(), Return: c.now(), Request: checker.RegisterGet,
		Answer: checker.AnswerOK, ETag: final.ETag, Value: chainValue(fv, fn)})
	init := checker.RegisterState{Exists: true, ETag: e0, Value: chainValue(0, n0)}
	verdict, w := checker.CheckRegisterWitness(init, c.ops, 20*time.Second)
	switch verdict {
	case checker.Pass:
		t.fact("linearizable", "true")
	case checker.Fail:
		t.fact("linearizable", "false")
		if w == nil {
			t.failf("porcupine: the history of %d operations is not linearizable for a CAS register", len(c.ops))
			break
		}
		w.Key = t.short(key)
		for i := range w.Ops {
			w.Ops[i].Client = chainClient(w.Ops[i].Client, m)
		}
		t.witness = w
		t.failf("porcupine: the history of %d operations is not linearizable for a CAS register; the witness shows %d of them "+
			"that no order explains", len(c.ops), len(w.Ops))
	default:
		t.fact("linearizable", "unknown")
		t.errorf("porcupine: the linearizability check of %d operations timed out", len(c.ops))
	}
	if !t.bad() {
		t.observe("%d writers, %d CAS attempts: %d acknowledged = final counter %d, no fork, no lost write; linearizable (porcupine, %d operations)",
			m, len(c.writes), acked, fv, len(c.ops))
	}
}

// judgeChain follows the prev chain from the final object (value fv, nonce fn) back to the
// first link n0: every link sent by a writer and not refused, no fork, no lost acknowledged
// write, and the final counter equal to the writes that landed. It returns the number of
// acknowledged writes.
func (c *chainRun) judgeChain(n0 string, fv int, fn string, m, rounds int) int {
	t, writes := c.t, c.writes
	var acked, refusedN, unknown int
	byPrev := map[string][]*chainWrite{}
	for _, w := range writes {
		switch w.res {
		case checker.AnswerOK:
			acked++
			byPrev[w.prev] = append(byPrev[w.prev], w)
		case checker.AnswerRefused:
			refusedN++
		default:
			unknown++
		}
	}
	t.fact("acked", strconv.Itoa(acked))
	t.fact("final_value", strconv.Itoa(fv))
	t.detail("%d writers x %d rounds: %d writes acknowledged, %d refused, %d without answer; final value %d", m, rounds, acked, refusedN, unknown, fv)
	onChain, landedUnknown := c.followChain(n0, fv, fn)
	for prev, ws := range byPrev {
		if len(ws) > 1 {
			t.failf("fork: %d acknowledged writes (values %s) all read nonce %s", len(ws), valuesOf(ws), prev)
		}
	}
	for _, w := range writes {
		if w.res == checker.AnswerOK && !onChain[w.nonce] {
			t.failf("writer %d's acknowledged write of value %d (nonce %s) is not on the chain: it was lost", w.writer, w.value, w.nonce)
		}
	}
	if acked+landedUnknown != fv {
		t.failf("%d writes acknowledged (+%d unanswered that landed), but the final counter is %d", acked, landedUnknown, fv)
	}
	return acked
}

// followChain walks the prev chain from the final object back to the first link; it returns
// the nonces on it and how many of them were writes without an answer.
func (c *chainRun) followChain(n0 string, fv int, fn string) (map[string]bool, int) {
	t, writes := c.t, c.writes
	onChain := map[string]bool{}
	landedUnknown := 0
	cur, want := fn, fv
	for cur != n0 {
		w, ok := writes[cur]
		if !ok {
			t.failf("the chain holds nonce %s (value %d), which no writer sent", cur, want)
			break
		}
		if onChain[cur] || len(onChain) > len(writes) {
			t.failf("the prev chain loops at nonce %s", cur)
			break
		}
		onChain[cur] = true
		if w.value != want {
			t.failf("the chain's link %s has value %d, want %d", cur, w.value, want)
		}
		switch w.res {
		case checker.AnswerRefused:
			t.failf("writer %d's write of value %d was refused (412/409), yet it is on the chain", w.writer, w.value)
		case checker.AnswerUnknown:
			landedUnknown++
		}
		cur, want = w.prev, want-1
	}
	if cur == n0 && want != 0 {
		t.failf("the chain reaches the first link with %d values unaccounted for", want)
	}
	return onChain, landedUnknown
}

// chainClient names the client of a chain operation: a writer, or the final read (client m).
func chainClient(id string, m int) string {
	if id == strconv.Itoa(m) {
		return "final read"
	}
	return "writer " + id
}

func valuesOf(ws []*chainWrite) string {
	var s []string
	for _, w := range ws {
		s = append(s, strconv.Itoa(w.value))
	}
	return strings.Join(s, ", ")
}
