package fence

import "testing"

// Under ambiguous-is-success, a revert that landed but whose answer was lost is taken as
// done: the source resumes, is no longer transferred, holds the version the revert wrote,
// and its next advance writes past it.
func TestAmbiguousIsSuccessTakesALostRevertAnswerAsResumed(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, AmbiguousIsSuccess)
			mustOK(t, "transfer", a.Transfer(w.ctx, "t"))
			as.on("put-if-match", w.key(5), lose)
			resumed, err := a.Revert(w.ctx)
			if !resumed || err != nil || a.Transferred() || a.Fenced() {
				t.Fatalf("revert whose answer is lost: resumed %v, %v, transferred %v, fenced %v; want resumed",
					resumed, err, a.Transferred(), a.Fenced())
			}
			c := w.content(5)
			if c.AllocationID != a.o.AllocationID || a.Seq() != c.Seq {
				t.Fatalf("key holds %+v, source seq %d; want the revert's write, held", c, a.Seq())
			}
			mustOK(t, "advance after the revert", a.Advance(w.ctx))
			if got := w.content(5).Seq; got != c.Seq+1 {
				t.Fatalf("advance wrote seq %d; want %d", got, c.Seq+1)
			}
		})
	}
}
