package fence

import (
	"testing"
)

// A variant's Info is its own registry entry (name, description, reader); the empty variant
// is the correct protocol, and a name nobody registered has no entry.
func TestVariantInfoIsItsOwnEntry(t *testing.T) {
	for _, want := range Variants() {
		got, ok := want.Name.Info()
		if !ok || got != want {
			t.Fatalf("%s.Info() = %+v, %v; want its own entry %+v", want.Name, got, ok, want)
		}
	}
	if got, ok := Variant("").Info(); !ok || got.Name != Correct || got.Description != "the protocol as specified" {
		t.Fatalf(`Variant("").Info() = %+v, %v; want the correct protocol's entry`, got, ok)
	}
	if got, ok := Variant("no-such-variant").Info(); ok {
		t.Fatalf("an unregistered variant has entry %+v; want none", got)
	}
}

// ambiguous-is-success takes a write whose outcome is unknown as applied. When the read-back
// of the key answers, the variant adopts the version it finds, with the seq that version
// records: a CAS that never landed leaves it holding the previous version, as its next CAS
// shows by writing the seq after that one.
func TestAmbiguousIsSuccessAdoptsTheVersionItReadsBack(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, AmbiguousIsSuccess)
			mustOK(t, "first advance", a.Advance(w.ctx))
			held := w.content(5).Seq
			as.on("put-if-match", w.key(5), drop)
			mustOK(t, "unanswered advance taken as applied", a.Advance(w.ctx))
			obj, err := w.raw.Get(w.ctx, w.key(5))
			if err != nil {
				t.Fatal(err)
			}
			if a.Token() != obj.ETag || a.Seq() != held {
				t.Fatalf("after an unanswered CAS that never landed: token %q seq %d; want the key's %q seq %d",
					a.Token(), a.Seq(), obj.ETag, held)
			}
			mustOK(t, "next advance", a.Advance(w.ctx))
			if got := w.content(5).Seq; got != held+1 {
				t.Fatalf("next CAS wrote seq %d; want %d, the one after the version read back", got, held+1)
			}
		})
	}
}

// When the read-back fails as well, ambiguous-is-success keeps the token it holds and takes
// the attempted seq as written: a CAS that never landed still moves its seq on, so its next
// CAS, presenting the same still-valid token, skips a seq.
func TestAmbiguousIsSuccessTakesTheAttemptedSeqWhenTheReadBackFails(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, AmbiguousIsSuccess)
			mustOK(t, "first advance", a.Advance(w.ctx))
			token, held := a.Token(), a.Seq()
			as.on("put-if-match", w.key(5), drop)
			as.on("get", w.key(5), drop)
			mustOK(t, "unanswered advance taken as applied", a.Advance(w.ctx))
			if a.Token() != token || a.Seq() != held+1 {
				t.Fatalf("after an unanswered CAS and read-back: token %q seq %d; want the held token %q and the attempted seq %d",
					a.Token(), a.Seq(), token, held+1)
			}
			mustOK(t, "next advance", a.Advance(w.ctx))
			if got := w.content(5).Seq; got != held+2 {
				t.Fatalf("next CAS wrote seq %d; want %d, past the attempted one", got, held+2)
			}
		})
	}
}
