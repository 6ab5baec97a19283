package certify

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/fencebench/fencebench/store"
)

// Probe is one check of the store's conditional-write semantics.
type Probe struct {
	// ID is the probe's number in §6 of the object-store design notes, with its group letter:
	// "A1", "B9", ...
	ID string
	// Title names the probe in a few words.
	Title string
	// Class says whether failing the probe disqualifies the store.
	Class Class
	// Asserts says what the probe checks (or records).
	Asserts string
	run     func(ctx context.Context, t *trial)
}

func (p Probe) result(c store.Client) Result {
	return Result{ID: p.ID, Title: p.Title, Class: p.Class, Client: string(c), Asserts: p.Asserts}
}

// Probes returns every probe, in the order a run executes them.
func Probes() []Probe {
	return []Probe{
		{ID: "A1", Title: "create on an existing key is refused", Class: Hard, run: probeA1,
			Asserts: "plain PUT, then PUT If-None-Match: * answers 412 (409 accepted), never 200; GET returns the original content and ETag"},
		{ID: "A2", Title: "stale If-Match is refused", Class: Hard, run: probeA2,
			Asserts: "PUT v1 (E1), PUT v2 (E2), then PUT If-Match: E1 answers 412 (409 accepted); GET returns v2"},
		{ID: "A3", Title: "bogus ETag is refused", Class: Hard, run: probeA3,
			Asserts: `PUT If-Match: "00000000000000000000000000000000" on an existing key answers 412 (409 accepted); content intact`},
		{ID: "A4", Title: "create on a fresh key succeeds", Class: Hard, run: probeA4,
			Asserts: "PUT If-None-Match: * on a fresh key answers 200 with an ETag; GET returns the body and that ETag"},
		{ID: "A5", Title: "If-Match on a missing key never creates it", Class: Hard, run: probeA5,
			Asserts: "PUT If-Match on a missing key answers 404 or 412 (recorded which), never 200; no object appears"},
		{ID: "A6", Title: "If-Match with the current ETag succeeds", Class: Informational, run: probeA6,
			Asserts: "PUT If-Match: <current ETag> answers 200; the new ETag differs from the old one and equals what GET and LIST show"},
		{ID: "B9", Title: "N-way create race has exactly one winner", Class: Hard, run: probeB9,
			Asserts: "N racers (own connections) PUT If-None-Match: * on one fresh key: exactly one 2xx, every other answer 412 or 409, GET returns the winner's nonce; repeated per N over the configured keys"},
		{ID: "B10", Title: "N-way CAS race from one ETag has exactly one winner", Class: Hard, run: probeB10,
			Asserts: "N racers (own connections) PUT If-Match: E0 on one key: exactly one 2xx, every other answer 412 or 409, GET returns the winner's nonce; repeated per N over the configured keys"},
		{ID: "B11", Title: "CAS chain is linearizable", Class: Hard, run: probeB11,
			Asserts: "M writers loop GET, then PUT If-Match of value+1 with a nonce and a prev pointer: the 2xx count equals the final counter, the prev chain has no fork and holds every acknowledged write, and porcupine finds the history linearizable for a CAS register"},
		{ID: "C14", Title: "identical content gives the identical ETag", Class: Informational, run: probeC14,
			Asserts: "records whether PUT X (E), PUT Y, PUT X gives E again (the ABA hazard)"},
		{ID: "C15", Title: "ABA exploit, and the seq field that defeats it", Class: Informational, run: probeC15,
			Asserts: "records whether a stale If-Match: E(X) succeeds after X, Y, X; requires that with a seq field in the body the same sequence is refused and seq'd writes never reuse an ETag"},
		{ID: "D17", Title: "read-after-CAS from a second client", Class: Informational, run: probeD17,
			Asserts: "after each successful If-Match write, a second client's GET and LIST show the new ETag (zero stale reads over the configured iterations)"},
		{ID: "D18", Title: "a 412 is explained by an immediate GET", Class: Informational, run: probeD18,
			Asserts: "after a refused If-Match or If-None-Match: *, an immediate GET shows a state that explains the refusal (no phantom 412)"},
		{ID: "E19", Title: "DELETE If-Match with a stale ETag", Class: Informational, run: probeE19,
			Asserts: "records whether DELETE If-Match: <stale> is honoured (412, object kept) or ignored (2xx, object deleted); the protocol never deletes conditionally"},
		{ID: "E20", Title: "DeleteObjects per-key reporting", Class: Informational, run: probeE20,
			Asserts: "records DELETE If-Match on a missing key and DeleteObjects with a stale <ETag>; requires the bench's DeleteMany to report no per-key failure for existing and missing keys and to delete the existing ones"},
		{ID: "F24", Title: "lost response is ambiguous and settled by read-back", Class: Informational, run: probeF24,
			Asserts: "a create whose response the client's fault path drops is reported as ambiguous (never as success or 412) and a read-back finds the client's own nonce; records what a retrying client answers instead"},
	}
}

// Select returns the probes with the given IDs (case-insensitive), in run order; no IDs
// means every probe.
func Select(ids []string) ([]Probe, error) {
	all := Probes()
	if len(ids) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		id = strings.ToUpper(strings.TrimSpace(id))
		if !slices.ContainsFunc(all, func(p Probe) bool { return p.ID == id }) {
			known := make([]string, len(all))
			for i, p := range all {
				known[i] = p.ID
			}
			return nil, fmt.Errorf("certify: unknown probe %q (known: %s)", id, strings.Join(known, ", "))
		}
		want[id] = true
	}
	var out []Probe
	for _, p := range all {
		if want[p.ID] {
			out = append(out, p)
		}
	}
	return out, nil
}

// body returns a probe body: a tag and a unique nonce.
func body(tag string) []byte { return []byte("fencebench-certify " + tag + " nonce=" + nonce()) }

// intact checks that key still holds want with ETag etag.
func (t *trial) intact(ctx context.Context, key string, want []byte, etag string) {
	o, err := t.s.Get(ctx, key)
	switch {
	case err != nil:
		t.errorf("GET %s afterwards: %s", t.short(key), answer(err))
	case !bytes.Equal(o.Body, want):
		t.failf("GET afterwards returns %.100q, want the unchanged %.100q: the refused write was applied", o.Body, want)
	case etag != "" && o.ETag != etag:
		t.failf("GET afterwards shows ETag %s, want the unchanged %s", o.ETag, etag)
	}
}

// refusedWrite judges a conditional write that must be refused: 412, or 409 (not applied by
// AWS's definition).
func (t *trial) refusedWrite(what string, err error) {
	t.fact("answer", answer(err))
	switch {
	case err == nil:
		t.failf("%s answered 200: the condition is ignored", what)
	case refused(err):
		if errors.Is(err, store.ErrConflict) {
			t.detail("%s answered 409 ConditionalRequestConflict (accepted: not applied)", what)
		}
	default:
		t.unexpected(what, err, "412 or 409")
	}
}

func probeA1(ctx context.Context, t *trial) {
	k := t.key("existing")
	orig := body("a1 original")
	e, err := t.s.Put(ctx, k, orig)
	if err != nil {
		t.errorf("plain PUT: %s", answer(err))
		return
	}
	_, err = t.s.PutIfAbsent(ctx, k, body("a1 create"))
	t.refusedWrite("PUT If-None-Match: * on an existing key", err)
	t.intact(ctx, k, orig, e)
	if !t.bad() {
		t.observe("PUT If-None-Match: * on an existing key -> %s; original content intact", answer(err))
	}
}

func probeA2(ctx context.Context, t *trial) {
	k := t.key("stale")
	e1, err := t.s.Put(ctx, k, body("a2 v1"))
	if err != nil {
		t.errorf("PUT v1: %s", answer(err))
		return
	}
	v2 := body("a2 v2")
	e2, err := t.s.Put(ctx, k, v2)
	if err != nil {
		t.errorf("PUT v2: %s", answer(err))
		return
	}
	if e1 == e2 {
		t.failf("two different bodies got the same ETag %s: If-Match cannot tell them apart", e1)
		return
	}
	_, err = t.s.PutIfMatch(ctx, k, body("a2 v3"), e1)
	t.refusedWrite("PUT If-Match: <stale E1>", err)
	t.intact(ctx, k, v2, e2)
	if !t.bad() {
		t.observe("PUT If-Match: E1 after v2 -> %s; GET returns v2", answer(err))
	}
}

func probeA3(ctx context.Context, t *trial) {
	k := t.key("bogus")
	v1 := body("a3 v1")
	e1, err := t.s.Put(ctx, k, v1)
	if err != nil {
		t.errorf("PUT v1: %s", answer(err))
		return
	}
	bogus := "00000000000000000000000000000000"
	if e1 == bogus {
		bogus = "11111111111111111111111111111111"
	}
	_, err = t.s.PutIfMatch(ctx, k, body("a3 v2"), bogus)
	t.refusedWrite(`PUT If-Match: "`+bogus+`"`, err)
	t.intact(ctx, k, v1, e1)
	if !t.bad() {
		t.observe(`PUT If-Match: "%s" -> %s; content intact`, bogus, answer(err))
	}
}

func probeA4(ctx context.Context, t *trial) {
	k := t.key("fresh")
	b := body("a4")
	e, err := t.s.PutIfAbsent(ctx, k, b)
	t.fact("answer", answer(err))
	if err != nil {
		t.unexpected("PUT If-None-Match: * on a fresh key", err, "200")
		return
	}
	if e == "" {
		t.failf("PUT If-None-Match: * on a fresh key answered 200 without an ETag")
		return
	}
	t.intact(ctx, k, b, e)
	if !t.bad() {
		t.observe("PUT If-None-Match: * on a fresh key -> 200; GET returns the body with ETag %s", e)
	}
}

func probeA5(ctx context.Context, t *trial) {
	k := t.key("missing")
	_, err := t.s.PutIfMatch(ctx, k, body("a5"), "6f5902ac237024bdd0c176cb93063dc4")
	t.fact("answer", answer(err))
	switch {
	case err == nil:
		t.fact("status", "200")
		t.failf("PUT If-Match on a missing key answered 200: the object was created")
	case errors.Is(err, store.ErrNotFound):
		t.fact("status", "404")
	case errors.Is(err, store.ErrPreconditionFailed):
		t.fact("status", "412")
	case errors.Is(err, store.ErrConflict):
		t.fact("status", "409")
		t.detail("409 is neither of the documented answers (404, 412), but it refuses the write")
	default:
		t.unexpected("PUT If-Match on a missing key", err, "404 or 412")
	}
	if _, gerr := t.s.Get(ctx, k); gerr == nil {
		t.failf("the key exists after PUT If-Match on a missing key (answered %s)", answer(err))
	} else if !errors.Is(gerr, store.ErrNotFound) {
		t.errorf("GET afterwards: %s", answer(gerr))
	}
	if !t.bad() {
		like := map[string]string{"404": " (as AWS)", "412": " (as R2, Ceph, SeaweedFS, gofakes3, Ozone)"}[t.facts["status"]]
		t.observe("PUT If-Match on a missing key -> %s%s; no object created", answer(err), like)
	}
}

func probeA6(ctx context.Context, t *trial) {
	k := t.key("current")
	e1, err := t.s.Put(ctx, k, body("a6 v1"))
	if err != nil {
		t.errorf("PUT v1: %s", answer(err))
		return
	}
	v2 := body("a6 v2")
	e2, err := t.s.PutIfMatch(ctx, k, v2, e1)
	if err != nil {
		t.unexpected("PUT If-Match: <current ETag>", err, "200")
		return
	}
	if e2 == e1 {
		t.failf("the new ETag equals the previous one (%s) although the body differs", e1)
	}
	o, err := t.s.Get(ctx, k)
	if err != nil {
		t.errorf("GET: %s", answer(err))
		return
	}
	if o.ETag != e2 || !bytes.Equal(o.Body, v2) {
		t.failf("GET shows ETag %s and body %.100q, want the new ETag %s and %.100q", o.ETag, o.Body, e2, v2)
	}
	es, err := t.s.List(ctx, k)
	if err != nil {
		t.errorf("LIST: %s", answer(err))
		return
	}
	i := slices.IndexFunc(es, func(e store.Entry) bool { return e.Key == k })
	switch {
	case i < 0:
		t.failf("LIST does not show the key")
	case es[i].ETag != e2:
		t.failf("LIST shows ETag %s, want the new ETag %s", es[i].ETag, e2)
	}
	if !t.bad() {
		t.observe("PUT If-Match: <current> -> 200 with a new ETag (%s -> %s); GET and LIST show it", e1, e2)
	}
}

func probeC14(ctx context.Context, t *trial) {
	t.record()
	k := t.key("aba")
	x := []byte("fencebench-certify c14 content X " + nonce())
	e, err := t.s.Put(ctx, k, x)
	if err != nil {
		t.errorf("PUT X: %s", answer(err))
		return
	}
	ey, err := t.s.Put(ctx, k, []byte("fencebench-certify c14 content Y "+nonce()))
	if err != nil {
		t.errorf("PUT Y: %s", answer(err))
		return
	}
	e2, err := t.s.Put(ctx, k, x)
	if err != nil {
		t.errorf("PUT X again: %s", answer(err))
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
		t.errorf("holder PUT X: %s", answer(err))
		return
	}
	if _, err := t.peer.Put(ctx, k, []byte("fencebench-certify c15 content Y "+nonce())); err != nil {
		t.errorf("other writer PUT Y: %s", answer(err))
		return
	}
	if _, err := t.peer.Put(ctx, k, x); err != nil {
		t.errorf("other writer PUT X: %s", answer(err))
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
		t.errorf("holder PUT X|seq=1: %s", answer(err))
		return
	}
	for _, b := range []string{"Y|seq=2", "X|seq=3"} {
		if _, err := t.peer.Put(ctx, k2, []byte("fencebench-certify c15 "+b)); err != nil {
			t.errorf("other writer PUT %s: %s", b, answer(err))
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
			t.errorf("PUT X|seq=%d: %s", i, answer(err))
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

func probeD17(ctx context.Context, t *trial) {
	k := t.key("rac")
	e, err := t.s.Put(ctx, k, body("d17 v0"))
	if err != nil {
		t.errorf("PUT v0: %s", answer(err))
		return
	}
	n := t.opts.Keys
	staleGet, staleList := 0, 0
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		b := body(fmt.Sprintf("d17 v%d", i))
		e2, err := t.s.PutIfMatch(ctx, k, b, e)
		if err != nil {
			t.unexpected(fmt.Sprintf("iteration %d: PUT If-Match: <current ETag>", i), err, "200")
			return
		}
		o, err := t.peer.Get(ctx, k)
		switch {
		case err != nil:
			t.errorf("iteration %d: second client's GET: %s", i, answer(err))
			return
		case o.ETag != e2 || !bytes.Equal(o.Body, b):
			staleGet++
			t.detail("iteration %d: second client's GET shows ETag %s, want %s", i, o.ETag, e2)
		}
		es, err := t.peer.List(ctx, k)
		if err != nil {
			t.errorf("iteration %d: second client's LIST: %s", i, answer(err))
			return
		}
		if j := slices.IndexFunc(es, func(x store.Entry) bool { return x.Key == k }); j < 0 || es[j].ETag != e2 {
			staleList++
			t.detail("iteration %d: second client's LIST does not show ETag %s", i, e2)
		}
		e = e2
	}
	t.fact("stale_get", fmt.Sprint(staleGet))
	t.fact("stale_list", fmt.Sprint(staleList))
	if staleGet+staleList > 0 {
		t.failf("%d stale GETs and %d stale LISTs from a second client over %d CAS writes", staleGet, staleList, n)
		return
	}
	t.observe("%d CAS writes: a second client's GET and LIST showed the new ETag every time", n)
}

func probeD18(ctx context.Context, t *trial) {
	n := max(5, t.opts.Keys/10)
	for i := 1; i <= n && ctx.Err() == nil; i++ {
		k := t.key(fmt.Sprintf("phantom%d", i))
		e1, err := t.s.Put(ctx, k, body("d18 v1"))
		if err != nil {
			t.errorf("PUT v1: %s", answer(err))
			return
		}
		e2, err := t.peer.Put(ctx, k, body("d18 v2 by the second client"))
		if err != nil {
			t.errorf("second client's PUT v2: %s", answer(err))
			return
		}
		_, err = t.s.PutIfMatch(ctx, k, body("d18 v3"), e1)
		if !refused(err) {
			if err == nil {
				t.failf("iteration %d: PUT If-Match: <stale> answered 200: there is no 412 to explain", i)
			} else {
				t.unexpected(fmt.Sprintf("iteration %d: PUT If-Match: <stale>", i), err, "412")
			}
			return
		}
		o, err := t.s.Get(ctx, k)
		switch {
		case err != nil:
			t.unexpected(fmt.Sprintf("iteration %d: GET right after the 412", i), err, "200 with the second client's ETag")
			return
		case o.ETag == e1:
			t.failf("iteration %d: phantom 412: GET right after it shows the very ETag %s the write presented", i, e1)
		case o.ETag != e2:
			t.detail("iteration %d: GET after the 412 shows ETag %s (neither E1 %s nor E2 %s)", i, o.ETag, e1, e2)
		}
		_, err = t.s.PutIfAbsent(ctx, k, body("d18 create"))
		if !refused(err) {
			if err == nil {
				t.failf("iteration %d: PUT If-None-Match: * on an existing key answered 200: there is no 412 to explain", i)
			} else {
				t.unexpected(fmt.Sprintf("iteration %d: PUT If-None-Match: * on an existing key", i), err, "412")
			}
			return
		}
		if _, err := t.s.Get(ctx, k); err != nil {
			t.failf("iteration %d: phantom 412: the create was refused but GET right after it answers %s", i, answer(err))
		}
	}
	if !t.bad() {
		t.observe("%d stale If-Match and %d If-None-Match: * refusals: an immediate GET explained every one", n, n)
	}
}

func probeE19(ctx context.Context, t *trial) {
	t.record()
	raw, err := newRawS3(t.cfg)
	if err != nil {
		t.errorf("aws-sdk client: %v", err)
		return
	}
	t.detail("the conditional DELETE is sent with aws-sdk-go-v2 directly: the bench's Store interface has no conditional delete")
	k := t.key("delete")
	e1, err := t.s.Put(ctx, k, body("e19 v1"))
	if err != nil {
		t.errorf("PUT v1: %s", answer(err))
		return
	}
	if _, err := t.s.Put(ctx, k, body("e19 v2")); err != nil {
		t.errorf("PUT v2: %s", answer(err))
		return
	}
	ans := raw.deleteIfMatch(ctx, k, e1)
	t.fact("answer", ans.String())
	if ans.err != nil && ans.status == 0 {
		t.errorf("DELETE If-Match: <stale>: %s", ans)
		return
	}
	_, gerr := t.s.Get(ctx, k)
	present := gerr == nil
	if gerr != nil && !errors.Is(gerr, store.ErrNotFound) {
		t.errorf("GET afterwards: %s", answer(gerr))
		return
	}
	switch {
	case ans.ok() && !present:
		t.fact("honoured", "false")
		t.observe("DELETE If-Match: <stale> -> %s and the object was deleted: the condition is ignored (a protocol that deletes conditionally would be unsafe here; fencebench never does)", ans)
	case ans.ok() && present:
		t.fact("honoured", "false")
		t.observe("DELETE If-Match: <stale> -> %s but the object is still there", ans)
	case ans.status == 412 && present:
		t.fact("honoured", "true")
		t.observe("DELETE If-Match: <stale> -> %s and the object is still there: the condition is honoured", ans)
	case !present:
		t.failf("DELETE If-Match: <stale> -> %s, yet the object was deleted", ans)
	default:
		t.fact("honoured", "unknown")
		t.observe("DELETE If-Match: <stale> -> %s; the object is still there", ans)
	}
}

func probeE20(ctx context.Context, t *trial) {
	t.record()
	raw, err := newRawS3(t.cfg)
	if err != nil {
		t.errorf("aws-sdk client: %v", err)
		return
	}
	var obs []string
	// DELETE If-Match on a missing key.
	miss := t.key("missing")
	ans := raw.deleteIfMatch(ctx, miss, "6f5902ac237024bdd0c176cb93063dc4")
	t.fact("missing_key_answer", ans.String())
	obs = append(obs, "DELETE If-Match on a missing key -> "+ans.String())

	// DeleteObjects naming a stale <ETag>.
	k := t.key("batch-etag")
	e1, err := t.s.Put(ctx, k, body("e20 v1"))
	if err != nil {
		t.errorf("PUT v1: %s", answer(err))
		return
	}
	if _, err := t.s.Put(ctx, k, body("e20 v2")); err != nil {
		t.errorf("PUT v2: %s", answer(err))
		return
	}
	perKey, err := raw.deleteObjectsWithETag(ctx, k, e1)
	if err != nil {
		t.errorf("DeleteObjects with <ETag>: %v", err)
		return
	}
	_, gerr := t.s.Get(ctx, k)
	switch {
	case gerr != nil && !errors.Is(gerr, store.ErrNotFound):
		t.errorf("GET afterwards: %s", answer(gerr))
		return
	case perKey != "" && gerr == nil:
		t.fact("deleteobjects_etag", "honoured")
		obs = append(obs, "DeleteObjects with a stale <ETag> -> per-key <Error> "+perKey+", object kept")
	case perKey == "" && gerr != nil:
		t.fact("deleteobjects_etag", "ignored")
		obs = append(obs, "DeleteObjects with a stale <ETag> -> deleted, no per-key error (the <ETag> is ignored)")
	case perKey != "":
		t.failf("DeleteObjects with a stale <ETag> reported the per-key error %s, yet the object was deleted", perKey)
	default:
		t.fact("deleteobjects_etag", "unreported")
		obs = append(obs, "DeleteObjects with a stale <ETag> -> no per-key error, yet the object is still there")
	}

	// The bench's DeleteMany: existing and missing keys, no per-key failure.
	var keys []string
	for i := range 3 {
		kk := t.key(fmt.Sprintf("batch%d", i))
		if _, err := t.s.Put(ctx, kk, body("e20 batch")); err != nil {
			t.errorf("PUT %s: %s", t.short(kk), answer(err))
			return
		}
		keys = append(keys, kk)
	}
	keys = append(keys, t.key("batch-missing"))
	failed, err := t.s.DeleteMany(ctx, keys)
	if err != nil {
		t.unexpected("the bench's DeleteMany", err, "200")
		return
	}
	for _, f := range failed {
		t.failf("the bench's DeleteMany reported a per-key failure for %s: %v", t.short(f.Key), f.Err)
	}
	for _, kk := range keys[:3] {
		if _, err := t.s.Get(ctx, kk); err == nil {
			t.failf("the bench's DeleteMany reported %s deleted, but it is still there", t.short(kk))
		} else if !errors.Is(err, store.ErrNotFound) {
			t.errorf("GET %s afterwards: %s", t.short(kk), answer(err))
		}
	}
	if !t.bad() {
		obs = append(obs, "the bench's DeleteMany on 3 existing keys and 1 missing key: no per-key failure, all deleted")
	}
	t.observe("%s", strings.Join(obs, "; "))
}
