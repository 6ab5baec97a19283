package fence

import (
	"strings"
	"testing"
)

// TestFencedMessageSaysNothingOfTermsItCouldNotList: the note a fenced error carries about the
// terms present comes from a listing made for the message alone. When that listing fails the
// note is left out: the error must not claim that no fence key is present, nor name a term,
// on a read that told it nothing.
func TestFencedMessageSaysNothingOfTermsItCouldNotList(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, Correct)
			w.owner("c", 7, false, Correct) // sweeps term 5
			as.on("list", "", drop)
			err := a.Advance(w.ctx)
			wantErr(t, "the swept owner's sync, its diagnostic listing lost", err, ErrFenced, "key gone: the term's key was swept")
			for _, s := range []string{"no fence key is present", "superseded", "highest term present"} {
				if strings.Contains(err.Error(), s) {
					t.Fatalf("got %q: it says %q from a listing that failed", err, s)
				}
			}
		})
	}
}

// TestTransferOfASweptKeyFences: a source whose term a higher one swept cannot hand its chain
// over. Its transfer finds the key gone and is fenced; it is not marked transferred, so no
// target may take the chain from it.
func TestTransferOfASweptKeyFences(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			s, _ := w.owner("s", 5, true, Correct)
			w.owner("c", 7, false, Correct) // sweeps term 5
			wantErr(t, "the swept source's transfer", s.Transfer(w.ctx, "t"), ErrFenced, "key gone: the term's key was swept (superseded by term 7)")
			if s.Transferred() || !s.Fenced() || w.exists(5) {
				t.Fatalf("transferred %v fenced %v key 5 present %v: want a fenced source that handed nothing over",
					s.Transferred(), s.Fenced(), w.exists(5))
			}
		})
	}
}

// TestRevertOfASweptKeyStandsDownFenced: a source that transferred, then finds its key swept
// by a higher term when it tries to resume, stands down (resumed false, no error) and is
// fenced from then on: nothing it is asked later writes.
func TestRevertOfASweptKeyStandsDownFenced(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			s, _ := w.owner("s", 5, true, Correct)
			mustOK(t, "the transfer", s.Transfer(w.ctx, "t"))
			w.owner("c", 7, false, Correct) // sweeps term 5
			if resumed, err := s.Revert(w.ctx); resumed || err != nil {
				t.Fatalf("revert of a swept key: resumed %v, err %v; want a stand-down", resumed, err)
			}
			if !s.Fenced() {
				t.Fatal("the source stood down but is not fenced")
			}
			wantErr(t, "a sync after standing down", s.Advance(w.ctx), ErrFenced, "stood down")
		})
	}
}
