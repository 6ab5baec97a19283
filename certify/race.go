package certify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/fencebench/fencebench/store"
)

// maxFailedKeys stops a race probe once this many keys showed a violation: the verdict is
// settled and the rest would only repeat it.
const maxFailedKeys = 3

type racer struct {
	nonce string
	etag  string
	err   error
}

// race runs op once per client, all released at the same instant, each with a body carrying
// its own nonce.
func race(clients []store.Store, tag string, op func(s store.Store, body []byte) (string, error)) []racer {
	out := make([]racer, len(clients))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, s := range clients {
		out[i].nonce = nonce()
		b := fmt.Appendf(nil, "fencebench-certify %s racer=%d nonce=%s", tag, i, out[i].nonce)
		wg.Go(func() {
			<-start
			out[i].etag, out[i].err = op(s, b)
		})
	}
	close(start)
	wg.Wait()
	return out
}

// raceStats counts the answers of the races of one racer count.
type raceStats struct {
	keys, wins, refused412, refused409, ambiguous, failedKeys int
}

// judgeRace checks one race: exactly one 2xx (or, when answers went missing, a winner among
// the racers without an answer), every other answer 412 or 409, and the object holding the
// winner's nonce.
func (t *trial) judgeRace(ctx context.Context, key string, n int, rs []racer, st *raceStats) {
	st.keys++
	name := t.short(key)
	var wins, amb []int
	bad := false
	for i, r := range rs {
		switch {
		case r.err == nil:
			wins = append(wins, i)
		case errors.Is(r.err, store.ErrPreconditionFailed):
			st.refused412++
		case errors.Is(r.err, store.ErrConflict):
			st.refused409++
		case ambiguous(r.err):
			amb = append(amb, i)
			st.ambiguous++
			t.detail("N=%d key %s: racer %d got no answer: %s", n, name, i, cause(r.err))
		default:
			bad = true
			t.unexpected(fmt.Sprintf("N=%d key %s: racer %d", n, name, i), r.err, "2xx, 412 or 409")
		}
	}
	st.wins += len(wins)
	if len(wins) > 1 {
		bad = true
		t.failf("N=%d key %s: %d of %d racers got 2xx (ETags %s): the condition is not atomic", n, name, len(wins), n, etagsOf(rs, wins))
	}
	o, err := t.s.Get(ctx, key)
	if err != nil {
		t.unexpected(fmt.Sprintf("N=%d key %s: GET after the race", n, name), err, "200")
		st.failedKeys++
		return
	}
	holder := -1
	for i, r := range rs {
		if bytes.Contains(o.Body, []byte("nonce="+r.nonce)) {
			holder = i
		}
	}
	switch {
	case len(wins) == 1 && holder != wins[0]:
		bad = true
		t.failf("N=%d key %s: racer %d got 2xx, but GET returns %s: the acknowledged write is not the one that holds", n, name, wins[0], describeHolder(holder))
	case len(wins) == 0 && len(amb) == 0:
		bad = true
		t.failf("N=%d key %s: no racer got 2xx (GET returns %s)", n, name, describeHolder(holder))
	case len(wins) == 0 && !slices.Contains(amb, holder):
		bad = true
		t.failf("N=%d key %s: no racer got 2xx and GET returns %s, not one of the racers without an answer", n, name, describeHolder(holder))
	}
	if bad {
		st.failedKeys++
	}
}

func describeHolder(i int) string {
	if i < 0 {
		return "no racer's nonce"
	}
	return fmt.Sprintf("racer %d's nonce", i)
}

func etagsOf(rs []racer, idx []int) string {
	var s []string
	for _, i := range idx {
		s = append(s, rs[i].etag)
	}
	return strings.Join(s, ", ")
}

// raceProbe runs the races of B9 or B10 for every racer count over the configured keys.
// setup prepares a fresh key and returns what each racer presents.
func raceProbe(ctx context.Context, t *trial, tag string, setup func(key string) (etag string, ok bool),
	op func(s store.Store, key string, body []byte, etag string) (string, error)) {
	var summary []string
	for _, n := range t.opts.Racers {
		clients, err := t.stores(n)
		if err != nil {
			t.errorf("store clients: %v", err)
			return
		}
		var st raceStats
		for k := 0; k < t.opts.Keys && ctx.Err() == nil; k++ {
			key := t.key(fmt.Sprintf("n%d-k%d", n, k))
			etag, ok := setup(key)
			if !ok {
				return
			}
			rs := race(clients, tag, func(s store.Store, b []byte) (string, error) { return op(s, key, b, etag) })
			t.judgeRace(ctx, key, n, rs, &st)
			if st.failedKeys >= maxFailedKeys {
				t.detail("N=%d: stopped after %d keys with a violation", n, st.failedKeys)
				break
			}
		}
		if ctx.Err() != nil {
			t.errorf("interrupted")
			return
		}
		line := fmt.Sprintf("N=%d x %d keys: %d wins, %d x 412, %d x 409, %d without answer", n, st.keys, st.wins,
			st.refused412, st.refused409, st.ambiguous)
		t.detail("%s", line)
		summary = append(summary, fmt.Sprintf("N=%d x %d keys", n, st.keys))
		t.fact(fmt.Sprintf("n%d_wins", n), strconv.Itoa(st.wins))
		t.fact(fmt.Sprintf("n%d_keys", n), strconv.Itoa(st.keys))
		if st.failedKeys >= maxFailedKeys {
			return
		}
	}
	if !t.bad() {
		t.observe("%s: exactly one 2xx per key, every loser 412 or 409, GET returns the winner's nonce", strings.Join(summary, ", "))
	}
}

func probeB9(ctx context.Context, t *trial) {
	raceProbe(ctx, t, "b9", func(string) (string, bool) { return "", true },
		func(s store.Store, key string, b []byte, _ string) (string, error) { return s.PutIfAbsent(ctx, key, b) })
}

func probeB10(ctx context.Context, t *trial) {
	raceProbe(ctx, t, "b10", func(key string) (string, bool) {
		e0, err := t.s.Put(ctx, key, body("b10 E0"))
		if err != nil {
			t.errorf("PUT E0 of %s: %s", key, answer(err))
			return "", false
		}
		return e0, true
	}, func(s store.Store, key string, b []byte, e0 string) (string, error) {
		return s.PutIfMatch(ctx, key, b, e0)
	})
}

// The CAS chain (B11). Every write carries "value=<n> nonce=<nonce> prev=<nonce it read>".

type casOp uint8

const (
	casGet casOp = iota
	casWrite
)

type casRes uint8

const (
	casOK casRes = iota
	casRefused
	casUnknown
)

type casInput struct {
	op      casOp
	ifMatch string
	value   int
	nonce   string
}

type casOutput struct {
	res   casRes
	etag  string
	value int
	nonce string
}

// casState is the register: its value, the nonce of the write that set it and that write's
// ETag (unknown after a write whose answer never arrived, until a read reveals it).
type casState struct {
	value int
	nonce string
	etag  string
	known bool
}

// casModel is a compare-and-swap register keyed by ETag. A write without an answer may or may
// not have been applied.
func casModel(init casState) porcupine.Model {
	m := &porcupine.NondeterministicModel{
		Init: func() []any { return []any{init} },
		Step: func(st, in, out any) []any {
			s, i, o := st.(casState), in.(casInput), out.(casOutput)
			if i.op == casGet {
				if s.value == o.value && s.nonce == o.nonce && (!s.known || s.etag == o.etag) {
					return []any{casState{value: o.value, nonce: o.nonce, etag: o.etag, known: true}}
				}
				return nil
			}
			match := !s.known || s.etag == i.ifMatch
			next := casState{value: i.value, nonce: i.nonce}
			switch o.res {
			case casOK:
				if !match {
					return nil
				}
				next.etag, next.known = o.etag, o.etag != ""
				return []any{next}
			case casRefused:
				if s.known && s.etag == i.ifMatch {
					return nil
				}
				return []any{s}
			default:
				if match {
					return []any{s, next}
				}
				return []any{s}
			}
		},
		DescribeOperation: func(in, out any) string {
			i, o := in.(casInput), out.(casOutput)
			if i.op == casGet {
				return fmt.Sprintf("get -> value %d etag %s", o.value, o.etag)
			}
			return fmt.Sprintf("cas(if-match %s, value %d) -> %d %s", i.ifMatch, i.value, o.res, o.etag)
		},
	}
	return m.ToModel()
}

type chainWrite struct {
	value  int
	nonce  string
	prev   string
	res    casRes
	writer int
}

func chainBody(value int, n, prev string) []byte {
	return fmt.Appendf(nil, "fencebench-certify b11 value=%d nonce=%s prev=%s", value, n, prev)
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
	var (
		mu      sync.Mutex
		ops     []porcupine.Operation
		writes  = map[string]*chainWrite{}
		t0      = time.Now()
		harmful []func() // problems to report once the writers are done (a trial is not goroutine-safe)
	)
	now := func() int64 { return int64(time.Since(t0)) }
	var wg sync.WaitGroup
	for w, s := range writers {
		wg.Go(func() {
			for r := 0; r < rounds && ctx.Err() == nil; r++ {
				call := now()
				o, err := s.Get(ctx, key)
				ret := now()
				if err != nil {
					if ambiguous(err) {
						continue // a read changes nothing; try again
					}
					mu.Lock()
					harmful = append(harmful, func() { t.unexpected(fmt.Sprintf("writer %d: GET", w), err, "200") })
					mu.Unlock()
					return
				}
				v, cur, _, err := parseChain(o.Body)
				if err != nil {
					mu.Lock()
					harmful = append(harmful, func() { t.failf("writer %d: GET: %v", w, err) })
					mu.Unlock()
					return
				}
				mu.Lock()
				ops = append(ops, porcupine.Operation{ClientId: w, Input: casInput{op: casGet}, Call: call,
					Output: casOutput{etag: o.ETag, value: v, nonce: cur}, Return: ret})
				mu.Unlock()
				next := nonce()
				cw := &chainWrite{value: v + 1, nonce: next, prev: cur, writer: w}
				call = now()
				etag, err := s.PutIfMatch(ctx, key, chainBody(v+1, next, cur), o.ETag)
				ret = now()
				switch {
				case err == nil:
					cw.res = casOK
				case refused(err):
					cw.res = casRefused
				default:
					cw.res = casUnknown
				}
				mu.Lock()
				writes[next] = cw
				ops = append(ops, porcupine.Operation{ClientId: w, Input: casInput{op: casWrite, ifMatch: o.ETag, value: v + 1, nonce: next},
					Call: call, Output: casOutput{res: cw.res, etag: etag}, Return: ret})
				if cw.res == casUnknown && !ambiguous(err) {
					harmful = append(harmful, func() { t.unexpected(fmt.Sprintf("writer %d: PUT If-Match", w), err, "2xx, 412 or 409") })
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		t.errorf("interrupted")
		return
	}
	for _, h := range harmful {
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
	var acked, refusedN, unknown int
	byPrev := map[string][]*chainWrite{}
	for _, w := range writes {
		switch w.res {
		case casOK:
			acked++
			byPrev[w.prev] = append(byPrev[w.prev], w)
		case casRefused:
			refusedN++
		default:
			unknown++
		}
	}
	t.fact("acked", strconv.Itoa(acked))
	t.fact("final_value", strconv.Itoa(fv))
	t.detail("%d writers x %d rounds: %d writes acknowledged, %d refused, %d without answer; final value %d", m, rounds, acked, refusedN, unknown, fv)
	// The prev chain, from the final object back to the first link.
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
		case casRefused:
			t.failf("writer %d's write of value %d was refused (412/409), yet it is on the chain", w.writer, w.value)
		case casUnknown:
			landedUnknown++
		}
		cur, want = w.prev, want-1
	}
	if cur == n0 && want != 0 {
		t.failf("the chain reaches the first link with %d values unaccounted for", want)
	}
	for prev, ws := range byPrev {
		if len(ws) > 1 {
			t.failf("fork: %d acknowledged writes (values %s) all read nonce %s", len(ws), valuesOf(ws), prev)
		}
	}
	for _, w := range writes {
		if w.res == casOK && !onChain[w.nonce] {
			t.failf("writer %d's acknowledged write of value %d (nonce %s) is not on the chain: it was lost", w.writer, w.value, w.nonce)
		}
	}
	if acked+landedUnknown != fv {
		t.failf("%d writes acknowledged (+%d unanswered that landed), but the final counter is %d", acked, landedUnknown, fv)
	}
	// Linearizability of the whole history, with the final read as the last operation.
	ops = append(ops, porcupine.Operation{ClientId: m, Input: casInput{op: casGet}, Call: now(),
		Output: casOutput{etag: final.ETag, value: fv, nonce: fn}, Return: now()})
	switch porcupine.CheckOperationsTimeout(casModel(casState{value: 0, nonce: n0, etag: e0, known: true}), ops, 20*time.Second) {
	case porcupine.Ok:
		t.fact("linearizable", "true")
	case porcupine.Illegal:
		t.fact("linearizable", "false")
		t.failf("porcupine: the history of %d operations is not linearizable for a CAS register", len(ops))
	default:
		t.fact("linearizable", "unknown")
		t.errorf("porcupine: the linearizability check of %d operations timed out", len(ops))
	}
	if !t.bad() {
		t.observe("%d writers, %d CAS attempts: %d acknowledged = final counter %d, no fork, no lost write; linearizable (porcupine, %d operations)",
			m, len(writes), acked, fv, len(ops))
	}
}

func valuesOf(ws []*chainWrite) string {
	var s []string
	for _, w := range ws {
		s = append(s, strconv.Itoa(w.value))
	}
	return strings.Join(s, ", ")
}
