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
