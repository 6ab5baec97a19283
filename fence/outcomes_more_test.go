package fence

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/fencebench/fencebench/store"
)

// TestSweptKeyAnswered412AfterAnUnknownWriteFences: an owner's CAS goes unanswered and so
// does the read-back, so the outcome is unknown (retryable). A higher term then sweeps the
// key, and the store answers the retry's If-Match on the missing key with 412. The refusal
// cannot be the owner's own earlier write: the read-back finds the key gone, and the owner is
// fenced, naming the term that superseded it, instead of retrying forever.
func TestSweptKeyAnswered412AfterAnUnknownWriteFences(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, Correct)
			as.on("put-if-match", w.key(5), drop)
			as.on("get", w.key(5), drop)
			wantErr(t, "lost CAS request and lost read-back", a.Advance(w.ctx), ErrRetryable, "read-back failed")
			w.owner("c", 6, false, Correct)
			as.on("put-if-match", w.key(5), as412)
			err := a.Advance(w.ctx)
			wantErr(t, "retry on the swept key, answered 412", err, ErrFenced, "lost the CAS")
			if !strings.Contains(err.Error(), "superseded by term 6") {
				t.Fatalf("got %q, want it to name the superseding term 6", err)
			}
			if !a.Fenced() {
				t.Fatal("the swept owner is not fenced")
			}
		})
	}
}

// TestFencedErrorNamesTheSupersedingTerm: an owner whose key a higher term swept is fenced,
// and the error tells the operator which term superseded it.
func TestFencedErrorNamesTheSupersedingTerm(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, _ := w.owner("a", 5, true, Correct)
			w.owner("c", 7, false, Correct)
			wantErr(t, "the swept owner's sync", a.Advance(w.ctx), ErrFenced, "key gone: the term's key was swept (superseded by term 7)")
		})
	}
}

// TestFencedByEqualTermTwinDoesNotClaimSupersession: an owner that loses its CAS to an
// equal-term twin is fenced, and the error reports the highest term present (its own) rather
// than claiming that a higher term superseded it.
func TestFencedByEqualTermTwinDoesNotClaimSupersession(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, _ := w.owner("a", 5, true, Correct)
			w.owner("b", 5, false, Correct) // the twin arbitrates the key over
			err := a.Advance(w.ctx)
			wantErr(t, "the owner's sync after the twin's takeover", err, ErrFenced, "lost the CAS: the key moved past the held token (highest term present: 5)")
			if strings.Contains(err.Error(), "superseded") {
				t.Fatalf("got %q: no higher term exists, yet the error says superseded", err)
			}
		})
	}
}

// TestArbitrationOnAKeySweptMidWayFencesSayingSo: an unguarded claimant finds the equal-term
// key and arbitrates for it; between its read and its CAS a higher term sweeps the key. The
// claimant is fenced, and the error says the key vanished during arbitration and names the
// superseding term.
func TestArbitrationOnAKeySweptMidWayFencesSayingSo(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			w.owner("a", 5, false, Correct)
			s, ss := w.fence("s", 5, false, Correct)
			ss.on("put-if-match", w.key(5), pass).Do(func() {
				c, _ := w.fence("c", 6, false, Correct)
				if err := c.Claim(w.ctx); err != nil {
					t.Errorf("term 6 claims: %v", err)
				}
			})
			err := s.Claim(w.ctx)
			wantErr(t, "arbitration on a swept key", err, ErrFenced,
				"key gone: the equal-term key vanished during arbitration (superseded by term 6)")
			if w.exists(5) {
				t.Fatal("the fenced claimant re-created K(5)")
			}
		})
	}
}

// TestAdoptWithoutIdentityContinuesTheAdoptedChain: the adopt-without-identity variant takes
// whatever version is at the key after an unanswered CAS, here an equal-term twin's version two
// writes ahead. It adopts that version whole, its ETag and its seq, so its next write records
// the adopted seq + 1 and the key's seq keeps rising.
func TestAdoptWithoutIdentityContinuesTheAdoptedChain(t *testing.T) {
	for _, b := range backends() {
		t.Run(b.name, func(t *testing.T) {
			w := newWorld(t, b)
			a, as := w.owner("a", 5, true, AdoptWithoutIdentity)
			tw, _ := w.fence("b", 5, false, AdoptWithoutIdentity)
			as.on("put-if-match", w.key(5), drop).Do(func() {
				if err := tw.Claim(w.ctx); err != nil {
					t.Errorf("twin claims: %v", err)
				}
				if err := tw.Advance(w.ctx); err != nil {
					t.Errorf("twin acks: %v", err)
				}
			})
			mustOK(t, "A's unanswered CAS, resolved by adoption", a.Advance(w.ctx))
			if c := w.content(5); c.AllocationID != "b" || c.Seq != 2 {
				t.Fatalf("key holds %+v, want the twin's version at seq 2", c)
			}
			if a.Token() != tw.Token() || a.Seq() != 2 {
				t.Fatalf("A holds token %q seq %d, want the twin's version %q at seq 2", a.Token(), a.Seq(), tw.Token())
			}
			mustOK(t, "A acks on the adopted chain", a.Advance(w.ctx))
			if c := w.content(5); c.AllocationID != "a" || c.Seq != 3 {
				t.Fatalf("key holds %+v after A's ack, want A's write at seq 3", c)
			}
		})
	}
}

// versionETags is an enforcing store whose ETags are its write counter as 32 hex digits, the
// first write's being all zeros (a store that numbers versions instead of hashing bodies). It
// serves the calls Probe makes.
type versionETags struct {
	Store // the calls Probe does not make
	mu    sync.Mutex
	next  int
	objs  map[string]store.Object
}

func (s *versionETags) put(key string, body []byte) string {
	et := fmt.Sprintf("%032x", s.next)
	s.next++
	s.objs[key] = store.Object{Body: append([]byte(nil), body...), ETag: et}
	return et
}

func (s *versionETags) Get(_ context.Context, key string) (store.Object, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	if !ok {
		return store.Object{}, &store.Error{Op: "get", Key: key, Kind: store.ErrNotFound, Status: 404, Code: "NoSuchKey"}
	}
	return o, nil
}

func (s *versionETags) PutIfAbsent(_ context.Context, key string, body []byte) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.objs[key]; ok {
		return "", &store.Error{Op: "put-if-absent", Key: key, Kind: store.ErrPreconditionFailed, Status: 412, Code: "PreconditionFailed"}
	}
	return s.put(key, body), nil
}

func (s *versionETags) PutIfMatch(_ context.Context, key string, body []byte, etag string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[key]
	if !ok {
		return "", &store.Error{Op: "put-if-match", Key: key, Kind: store.ErrNotFound, Status: 404, Code: "NoSuchKey"}
	}
	if o.ETag != store.NormalizeETag(etag) {
		return "", &store.Error{Op: "put-if-match", Key: key, Kind: store.ErrPreconditionFailed, Status: 412, Code: "PreconditionFailed"}
	}
	return s.put(key, body), nil
}

func (s *versionETags) Delete(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, key)
	return nil
}

// TestProbeAcceptsAnEnforcingStoreWhateverETagItsScratchWriteGets: Probe presents an ETag the
// scratch key does not have. On an enforcing store whose scratch write happens to get the
// all-zeros ETag, it presents another one, and the store passes the probe; the scratch key is
// removed.
func TestProbeAcceptsAnEnforcingStoreWhateverETagItsScratchWriteGets(t *testing.T) {
	s := &versionETags{objs: map[string]store.Object{}}
	mustOK(t, "probe of an enforcing store", Probe(context.Background(), s, "p/"))
	if len(s.objs) != 0 {
		t.Fatalf("probe left %d key(s) behind", len(s.objs))
	}
}
