package certify

import (
	"context"
	"fmt"
)

func probeC14(ctx context.Context, t *trial) {
	t.record()
	k := t.key("aba")
	x := []byte("fencebench-certify c14 content X " + nonce())
	e, err := t.s.Put(ctx, k, x)
	if err != nil {
		t.errorOn(err, "PUT X: %s", answer(err))
		return
	}
	ey, err := t.s.Put(ctx, k, []byte("fencebench-certify c14 content Y "+nonce()))
	if err != nil {
		t.errorOn(err, "PUT Y: %s", answer(err))
		return
	}
	e2, err := t.s.Put(ctx, k, x)
	if err != nil {
		t.errorOn(err, "PUT X again: %s", answer(err))
		return
	}
	t.detail("PUT X -> %s, PUT Y -> %s, PUT X -> %s", e, ey, e2)
	if e2 == e {
		t.fact("identical_etag", "true")
		t.observe("identical content gives the identical ETag (%s): the ABA hazard exists, so fenced bodies must be unique (the bench's seq field)", e)
	} else {
		t.fact("identical_etag", "false")
		t.observe("identical content gives a new ETag (%s, then %s): ETags are unique per write on this store", e, e2)
	}
}

func probeC15(ctx context.Context, t *trial) {
	t.record()
	// The exploit: the holder's token E(X) becomes valid again after X, Y, X.
	k := t.key("exploit")
	x := []byte("fencebench-certify c15 content X " + nonce())
	e, err := t.s.Put(ctx, k, x)
	if err != nil {
		t.errorOn(err, "holder PUT X: %s", answer(err))
		return
	}
	if _, err := t.peer.Put(ctx, k, []byte("fencebench-certify c15 content Y "+nonce())); err != nil {
		t.errorOn(err, "other writer PUT Y: %s", answer(err))
		return
	}
	if _, err := t.peer.Put(ctx, k, x); err != nil {
		t.errorOn(err, "other writer PUT X: %s", answer(err))
		return
	}
	_, err = t.s.PutIfMatch(ctx, k, body("c15 holder"), e)
	exploit := ""
	switch {
	case err == nil:
		t.fact("aba_exploit", "works")
		exploit = "the ABA exploit works (a stale If-Match: E(X) succeeded after X, Y, X)"
	case refused(err):
		t.fact("aba_exploit", "refused")
		exploit = "the ABA exploit is refused (" + answer(err) + ": ETags are unique per write)"
	default:
		t.unexpected("holder's PUT If-Match: E(X) after X, Y, X", err, "200 or 412")
		return
	}
	t.detail("%s", exploit)

	// The defence: every fenced body carries a fresh seq, so X never repeats byte for byte.
	k2 := t.key("seq")
	e1, err := t.s.Put(ctx, k2, []byte("fencebench-certify c15 X|seq=1"))
	if err != nil {
		t.errorOn(err, "holder PUT X|seq=1: %s", answer(err))
		return
	}
	for _, b := range []string{"Y|seq=2", "X|seq=3"} {
		if _, err := t.peer.Put(ctx, k2, []byte("fencebench-certify c15 "+b)); err != nil {
			t.errorOn(err, "other writer PUT %s: %s", b, answer(err))
			return
		}
	}
	_, err = t.s.PutIfMatch(ctx, k2, []byte("fencebench-certify c15 Z|seq=4"), e1)
	switch {
	case err == nil:
		t.failf("with the seq field, the holder's stale If-Match: E(X|seq=1) still succeeded after Y|seq=2, X|seq=3")
	case refused(err):
		t.detail("with the seq field the same sequence is refused: %s", answer(err))
	default:
		t.unexpected("holder's PUT If-Match: E(X|seq=1) after Y|seq=2, X|seq=3", err, "412")
		return
	}
	// The bench's own writes never reuse an ETag: the same value with ten different seqs.
	k3 := t.key("unique")
	seen := map[string]int{}
	for i := 1; i <= 10; i++ {
		e, err := t.s.Put(ctx, k3, fmt.Appendf(nil, "fencebench-certify c15 X|seq=%d", i))
		if err != nil {
			t.errorOn(err, "PUT X|seq=%d: %s", i, answer(err))
			return
		}
		if j, dup := seen[e]; dup {
			t.failf("X|seq=%d got the ETag %s of X|seq=%d: seq'd writes reuse ETags", i, e, j)
		}
		seen[e] = i
	}
	if !t.bad() {
		t.observe("%s; with the bench's seq field the same sequence is refused and 10 seq'd writes of one value got 10 distinct ETags", exploit)
	}
}
