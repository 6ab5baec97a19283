package certify

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/storeprobe"
)

// maxFailedKeys stops a race probe once this many keys showed a violation: the verdict is
// settled and the rest would only repeat it.
const maxFailedKeys = 3

// raceStats counts the answers of the races of one racer count.
type raceStats struct {
	keys, wins, refused412, refused409, ambiguous, failedKeys, unjudged int
}

// judgeRace checks one race: exactly one 2xx (or, when answers went missing, a winner among
// the racers without an answer), every other answer 412 or 409, and the object holding the
// winner's nonce.
func (t *trial) judgeRace(ctx context.Context, key string, n int, rs []storeprobe.Racer, st *raceStats) {
	st.keys++
	name := t.short(key)
	bad := false
	for i, r := range rs {
		switch storeprobe.Classify(r.Err) {
		case storeprobe.Refused412:
			st.refused412++
		case storeprobe.Refused409:
			st.refused409++
		case storeprobe.NoAnswer:
			st.ambiguous++
			t.detail("N=%d key %s: racer %d got %s: %s", n, name, i, answer(r.Err), cause(r.Err))
		case storeprobe.Unexpected:
			bad = true
			t.unexpected(fmt.Sprintf("N=%d key %s: racer %d", n, name, i), r.Err, "2xx, 412 or 409")
		}
	}
	wins, multiple := storeprobe.Winners(rs)
	st.wins += len(wins)
	if multiple != "" {
		bad = true
		t.failf("N=%d key %s: %s", n, name, multiple)
	}
	// No racer got an answer (the store was swamped, or refused the header itself): there is
	// nothing to judge, and a key that holds no racer's write is what such a race leaves.
	lost := true
	for _, r := range rs {
		lost = lost && storeprobe.Classify(r.Err) == storeprobe.NoAnswer
	}
	o, err := t.s.Get(ctx, key)
	if lost && (errors.Is(err, store.ErrNotFound) || err == nil && storeprobe.Judge(rs, o.Body).Holder < 0) {
		st.unjudged++
		t.errorOn(rs[0].Err, "N=%d key %s: none of the %d racers got an answer (racer 0: %s), and none of their writes took effect: the race could not be judged",
			n, name, n, answer(rs[0].Err))
		return
	}
	if err != nil {
		t.unexpected(fmt.Sprintf("N=%d key %s: GET after the race", n, name), err, "200")
		st.failedKeys++
		return
	}
	if held := storeprobe.Judge(rs, o.Body).Held; held != "" {
		bad = true
		t.failf("N=%d key %s: %s", n, name, held)
	}
	if bad {
		st.failedKeys++
	}
}

// raceProbe runs the races of B9 or B10 for every racer count over the configured keys.
// setup prepares a fresh key and returns what each racer presents.
func raceProbe(ctx context.Context, t *trial, tag string, setup func(key string) (etag string, ok bool),
	op func(s store.Store, key string, body []byte, etag string) (string, error)) {
	var summary []string
	for ri, n := range t.opts.Racers {
		clients, err := t.stores(n)
		if err != nil {
			t.errorf("store clients: %v", err)
			return
		}
		stop, budgeted := raceBudget(ctx, len(t.opts.Racers)-ri, t.opts.RaceBudget)
		var st raceStats
		for k := 0; k < t.opts.Keys && ctx.Err() == nil; k++ {
			if k > 0 && budgeted && time.Now().After(stop) {
				// A slow store is judged on the races it finished rather than not at all.
				t.detail("N=%d: %d of %d keys raced: the probe's time budget for this racer count was spent", n, k, t.opts.Keys)
				t.fact(fmt.Sprintf("n%d_budget_cut", n), "true")
				break
			}
			key := t.key(fmt.Sprintf("n%d-k%d", n, k))
			etag, ok := setup(key)
			if !ok {
				return
			}
			rs := storeprobe.Race(clients, "certify", tag, func(s store.Store, b []byte) (string, error) { return op(s, key, b, etag) })
			t.judgeRace(ctx, key, n, rs, &st)
			if st.failedKeys >= maxFailedKeys {
				t.detail("N=%d: stopped after %d keys with a violation", n, st.failedKeys)
				break
			}
			if st.unjudged >= maxFailedKeys {
				t.detail("N=%d: stopped after %d keys no racer got an answer to", n, st.unjudged)
				break
			}
		}
		if ctx.Err() != nil {
			return // the run names the deadline or the interruption, and what the probe was doing
		}
		line := fmt.Sprintf("N=%d x %d keys: %d wins, %d x 412, %d x 409, %d without answer", n, st.keys, st.wins,
			st.refused412, st.refused409, st.ambiguous)
		t.detail("%s", line)
		summary = append(summary, fmt.Sprintf("N=%d x %d keys", n, st.keys))
		t.fact(fmt.Sprintf("n%d_wins", n), strconv.Itoa(st.wins))
		t.fact(fmt.Sprintf("n%d_keys", n), strconv.Itoa(st.keys))
		if st.failedKeys >= maxFailedKeys || st.unjudged >= maxFailedKeys {
			return
		}
	}
	if !t.bad() {
		t.observe("%s: exactly one 2xx per key, every loser 412 or 409, GET returns the winner's nonce", strings.Join(summary, ", "))
	}
}

// raceShare is the part of a probe's remaining time that its racer counts may spend starting
// new keys; the rest is left for the keys in flight and the judging.
const raceShare = 0.8

// raceBudget is when a race probe stops starting new keys for the current racer count, with
// left racer counts (this one included) still to run: at most limit from now (when limit is
// positive), and at most its share of the time to the probe's deadline. budgeted is false
// when neither bounds it.
func raceBudget(ctx context.Context, left int, limit time.Duration) (stop time.Time, budgeted bool) {
	if limit > 0 {
		stop, budgeted = time.Now().Add(limit), true
	}
	if share, ok := storeprobe.DeadlineShare(ctx, left, raceShare); ok && (!budgeted || share.Before(stop)) {
		stop, budgeted = share, true
	}
	return stop, budgeted
}

func probeB9(ctx context.Context, t *trial) {
	raceProbe(ctx, t, "b9", func(string) (string, bool) { return "", true },
		func(s store.Store, key string, b []byte, _ string) (string, error) { return s.PutIfAbsent(ctx, key, b) })
}

func probeB10(ctx context.Context, t *trial) {
	raceProbe(ctx, t, "b10", func(key string) (string, bool) {
		e0, err := t.s.Put(ctx, key, body("b10 E0"))
		if err != nil {
			t.errorOn(err, "PUT E0 of %s: %s", key, answer(err))
			return "", false
		}
		return e0, true
	}, func(s store.Store, key string, b []byte, e0 string) (string, error) {
		return s.PutIfMatch(ctx, key, b, e0)
	})
}
