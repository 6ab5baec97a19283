package certify

import (
	"bytes"
	"context"
	"errors"

	"github.com/fencebench/fencebench/env"
	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/store"
)

// lost is a create whose response a fault path dropped: the body sent and the client's answer.
type lost struct {
	body []byte
	err  error
}

// lostCreate sends one PUT If-None-Match: * through its own fault path, whose only rule drops
// the response after the store applied the request. ok is false when the probe could not
// arrange that (the trial then holds an error).
func (t *trial) lostCreate(ctx context.Context, fb *netpath.Bench, name, key string, attempts int) (l lost, ok bool) {
	p, err := fb.Path(name)
	if err != nil {
		t.errorf("fault path: %v", err)
		return lost{}, false
	}
	ak, sk := p.Credentials()
	s, err := t.newStore(store.Config{DialContext: p.DialContext, RootCAs: fb.RootCAs(), MaxAttempts: attempts,
		AccessKey: ak, SecretKey: sk})
	if err != nil {
		t.errorf("store client: %v", err)
		return lost{}, false
	}
	if err := p.AddRule(faults.Rule{Name: "lose-response", Method: "PUT", Header: "If-None-Match",
		Action: faults.DropResponse, Count: 1}); err != nil {
		t.errorf("fault rule: %v", err)
		return lost{}, false
	}
	l.body = body("f24 " + name)
	_, l.err = s.PutIfAbsent(ctx, key, l.body)
	if n := p.Fired("lose-response"); n != 1 {
		t.errorf("%s: the drop-response fault fired %d times, want 1 (answer: %s)", name, n, answer(l.err))
		return lost{}, false
	}
	return l, true
}

// readBack reports whether key holds exactly b, read by the second client.
func (t *trial) readBack(ctx context.Context, key string, b []byte) (own, ok bool) {
	o, err := t.peer.Get(ctx, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, true
	case err != nil:
		t.unexpected("read-back GET", err, "200")
		return false, false
	}
	return bytes.Equal(o.Body, b), true
}

func probeF24(ctx context.Context, t *trial) {
	fb, err := netpath.New(netpath.Options{Upstream: t.env.Upstream(), Bucket: t.cfg.Bucket, Prefix: t.base,
		AccessKey: t.cfg.AccessKey, SecretKey: t.cfg.SecretKey, SessionToken: t.cfg.SessionToken,
		UpstreamTLS: env.UpstreamTLS(t.cfg), Logger: t.log})
	if err != nil {
		t.errorf("fault paths: %v", err)
		return
	}
	defer fb.Close()

	// A single-attempt client, as fencing requires.
	k := t.key("lost")
	l, ok := t.lostCreate(ctx, fb, "certify-"+string(t.client), k, 1)
	if !ok {
		return
	}
	b, err := l.body, l.err
	t.fact("answer", answer(err))
	switch {
	case err == nil:
		t.failf("the client reported success although the response never arrived")
	case refused(err):
		t.failf("the client reported %s for its own write whose response was lost", answer(err))
	case ambiguous(err):
		t.detail("the client's error: %s", cause(err))
	default:
		t.unexpected("the create whose response was lost", err, "an ambiguous error (no response)")
	}
	own, ok := t.readBack(ctx, k, b)
	if !ok {
		return
	}
	if !own {
		t.failf("the read-back does not find the client's own nonce: the forwarded write is not there")
		return
	}
	t.fact("settled", "own nonce found")
	first := "a create whose response was dropped -> " + answer(err) + " (ambiguous); a read-back found the client's own nonce"

	// The same with SDK retries on: the retry meets the first attempt's object.
	k2 := t.key("lost-retry")
	l2, ok := t.lostCreate(ctx, fb, "certify-"+string(t.client)+"-retries", k2, 3)
	if !ok {
		return
	}
	b2, err2 := l2.body, l2.err
	t.fact("retry_answer", answer(err2))
	own2, ok := t.readBack(ctx, k2, b2)
	if !ok {
		return
	}
	switch {
	case refused(err2) && own2:
		t.fact("retry_hides_win", "true")
		t.detail("with SDK retries on (3 attempts) the retry answered %s although the first attempt had landed: a \"412\" that was a win; "+
			"only a single-attempt client may read 412 as lost", answer(err2))
	case err2 == nil:
		t.fact("retry_hides_win", "false")
		t.detail("with SDK retries on (3 attempts) the client answered 200 (own nonce found: %v)", own2)
	default:
		t.fact("retry_hides_win", "false")
		t.detail("with SDK retries on (3 attempts) the client answered %s (own nonce found: %v)", answer(err2), own2)
	}
	if !t.bad() {
		t.observe("%s", first)
	}
}
