package certify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

// forkingStore answers one conditional write that the store refused by writing anyway and
// acknowledging it: two acknowledged CASes from one ETag, a fork.
type forkingStore struct {
	store.Store
	f *forkOnce
}

type forkOnce struct {
	mu      sync.Mutex
	planted string // the ETag of the forked write
}

func (s forkingStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	e, err := s.Store.PutIfMatch(ctx, key, body, etag)
	if !errors.Is(err, store.ErrPreconditionFailed) && !errors.Is(err, store.ErrConflict) {
		return e, err
	}
	s.f.mu.Lock()
	defer s.f.mu.Unlock()
	if s.f.planted != "" {
		return e, err
	}
	e, err = s.Put(ctx, key, body)
	if err == nil {
		s.f.planted = e
	}
	return e, err
}

// TestChainWitness: B11 on a store that forks the chain once reports a witness of a few
// operations that holds the forked write and names it, in the text, the JSON and the page.
func TestChainWitness(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f := &forkOnce{}
	rep, err := Run(ctx, minioEnv(t), Options{Clients: []store.Client{store.ClientMinio}, Keys: 25, Writers: 4,
		Probes: []string{"B11"}, Prefix: testenv.Prefix(t),
		Wrap: func(_ store.Client, s store.Store) store.Store { return forkingStore{s, f} }})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	t.Logf("\n%s", text.String())
	if f.planted == "" {
		t.Fatal("no CAS was refused: nothing to fork")
	}
	r := find(t, rep, "B11", store.ClientMinio)
	w := r.Witness
	if r.Verdict != Fail || w == nil {
		t.Fatalf("B11: %s, witness %v; want fail with a witness", r.Verdict, w)
	}
	if len(w.Ops) > 6 {
		t.Errorf("witness of %d operations, want at most 6", len(w.Ops))
	}
	n := 0
	for _, o := range w.Ops {
		if o.ETag == store.NormalizeETag(f.planted) && o.Request != "GET" {
			n = o.N
		}
	}
	if n == 0 {
		t.Fatalf("the witness lacks the forked write (etag %s)", f.planted)
	}
	if !regexp.MustCompile(fmt.Sprintf(`\bop %d\b`, n)).MatchString(w.Why) {
		t.Errorf("the sentence does not name op %d: %s", n, w.Why)
	}
	for _, want := range []string{"witness: ", w.Why, "writer ", f.planted} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("the text report lacks %q", want)
		}
	}
	var js, page bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Results[0].Witness == nil ||
		back.Results[0].Witness.Why != w.Why {
		t.Errorf("the JSON report does not carry the witness (%v)", err)
	}
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "Witness: ") {
		t.Error("the page lacks the witness")
	}
}
