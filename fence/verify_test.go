package fence

import (
	"errors"
	"testing"

	"github.com/fencebench/fencebench/store"
)

// Verify writes nothing and says whether the key still holds the instance's version: nil
// while it does (and again after a read it could not make), fenced once an equal-term twin
// took the key or a higher term swept it, and never fenced for a read that failed.
func TestVerify(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, false, Correct)
			mustOK(t, "verify of the holder", a.Verify(w.ctx))
			as.on("get", w.key(5), drop)
			wantErr(t, "verify whose read is lost", a.Verify(w.ctx), ErrRetryable, "verify read failed")
			as.on("get", w.key(5), fail).Err(&store.Error{Op: "get", Kind: store.ErrConfig, Status: 403, Code: "AccessDenied"})
			if err := a.Verify(w.ctx); !errors.Is(err, store.ErrConfig) || IsFenced(err) || IsRetryable(err) {
				t.Fatalf("verify whose read is refused with a 403: %v; want the store's error, neither fenced nor retryable", err)
			}
			mustOK(t, "verify once the store answers", a.Verify(w.ctx))
			if a.Fenced() || a.Seq() != 0 || w.content(5).AllocationID != "a" {
				t.Fatalf("fenced %v seq %d owner %s: verify must write nothing", a.Fenced(), a.Seq(), w.content(5).AllocationID)
			}

			w.owner("b", 5, false, Correct) // the twin takes the key by arbitration
			wantErr(t, "verify after the twin's takeover", a.Verify(w.ctx), ErrFenced,
				"superseded within the term: the key moved past the held token to allocation b (node node-b, seq 1)")
			wantErr(t, "verify once fenced", a.Verify(w.ctx), ErrFenced, "")

			c, _ := w.owner("c", 6, false, Correct)
			w.owner("d", 7, false, Correct) // sweeps term 6
			wantErr(t, "verify of a swept key", c.Verify(w.ctx), ErrFenced, "key gone: the term's key was swept (superseded by term 7)")

			e, _ := w.fence("e", 8, false, Correct)
			wantErr(t, "verify without a claim", e.Verify(w.ctx), ErrFenced, "no token held")
		})
	}
}

// A source that transferred its chain holds a retained token only a revert may present:
// Verify refuses, as every other call does.
func TestVerifyAfterTransferIsRefused(t *testing.T) {
	w := newWorld(t, backends()[0])
	s, _ := w.owner("s", 5, true, Correct)
	mustOK(t, "transfer", s.Transfer(w.ctx, "t"))
	if err := s.Verify(w.ctx); !errors.Is(err, ErrTransferred) {
		t.Fatalf("verify after a transfer: %v; want ErrTransferred", err)
	}
}
