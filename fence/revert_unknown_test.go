package fence

import (
	"errors"
	"testing"
)

// traceLostRevertUnresolved: an aborted relocation's revert lands, but its answer is lost and
// the read-back that would prove it fails, so the revert is retryable. The retry presents the
// same retained token and is refused by that very revert: the source must find its own write
// at the key and resume, not stand down as if the target had adopted (with the handoff lost,
// nobody would serve; guided exploration found it: a lost handoff message, a dropped revert
// answer and a failed fence read in one schedule). revert-retry-blind stands down. A refusal
// by the target's adoption after the same unknown revert stands the source down either way.
func traceLostRevertUnresolved(t *testing.T, w *world, v Variant) {
	a, as := w.owner("a", 5, true, v)
	mustOK(t, "transfer", a.Transfer(w.ctx, "t"))
	as.on("put-if-match", w.key(5), lose)
	as.on("get", w.key(5), drop)
	if resumed, err := a.Revert(w.ctx); resumed || !errors.Is(err, ErrRetryable) {
		t.Fatalf("revert with a lost answer and a failed read-back: resumed %v, %v; want retryable", resumed, err)
	}
	resumed, err := a.Revert(w.ctx)
	if v == RevertRetryBlind {
		if resumed || err != nil || !a.Fenced() {
			t.Fatalf("%s: retry refused by its own revert: resumed %v, %v, fenced %v; want a spurious stand-down", v, resumed, err, a.Fenced())
		}
		return
	}
	if !resumed || err != nil || a.Fenced() || a.Transferred() {
		t.Fatalf("retry refused by the source's own revert: resumed %v, %v, fenced %v, transferred %v; want resumed",
			resumed, err, a.Fenced(), a.Transferred())
	}
	if c := w.content(5); c.AllocationID != a.o.AllocationID || c.Seq != a.Seq() {
		t.Fatalf("key holds %+v, source seq %d: want the source's own revert, held", c, a.Seq())
	}
	mustOK(t, "advance after the resumed revert", a.Advance(w.ctx))

	// Unknown again, and this time the target adopted in between: the retry's refusal is the
	// target's write, and the source stands down.
	x, xs := w.owner("x", 7, true, v)
	mustOK(t, "transfer", x.Transfer(w.ctx, "u"))
	xs.on("put-if-match", w.key(7), drop)
	xs.on("get", w.key(7), drop)
	if resumed, err := x.Revert(w.ctx); resumed || !errors.Is(err, ErrRetryable) {
		t.Fatalf("revert whose request is lost: resumed %v, %v; want retryable", resumed, err)
	}
	u, _ := w.owner("u", 7, true, v)
	mustOK(t, "the target adopts and acks", u.Advance(w.ctx))
	if resumed, err := x.Revert(w.ctx); resumed || err != nil || !x.Fenced() {
		t.Fatalf("retry refused by the target's adoption: resumed %v, %v, fenced %v; want stood down", resumed, err, x.Fenced())
	}
}
