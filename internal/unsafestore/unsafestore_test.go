package unsafestore_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// open starts a front of o over the shared MinIO and returns a client of each kind through it.
func open(t *testing.T, o unsafestore.Options) map[store.Client]store.Store {
	t.Helper()
	f, err := unsafestore.Open(testenv.MinIO(t).Config(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.Close)
	out := map[store.Client]store.Store{}
	for _, c := range store.Clients {
		if out[c], err = s3store.New(c, f.Config()); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// TestOptionsChecked: a front without the setting its mode needs is not started.
func TestOptionsChecked(t *testing.T) {
	cfg := testenv.MinIO(t).Config()
	for _, o := range []unsafestore.Options{{Mode: unsafestore.IgnoreUnderLoad}, {Mode: unsafestore.StaleAfterCAS}, {Mode: 9}} {
		if f, err := unsafestore.Open(cfg, o); err == nil {
			f.Close()
			t.Errorf("%+v: started, want an error", o)
		}
	}
}

// TestCreateOnIfMatch: through the front, If-Match on a missing key answers 2xx and creates
// the object; a stale If-Match on an existing key is still refused.
func TestCreateOnIfMatch(t *testing.T) {
	ctx := context.Background()
	for c, s := range open(t, unsafestore.Options{Mode: unsafestore.CreateOnIfMatch}) {
		k := testenv.Prefix(t) + "missing"
		if _, err := s.PutIfMatch(ctx, k, []byte("created"), "6f5902ac237024bdd0c176cb93063dc4"); err != nil {
			t.Errorf("%s: PUT If-Match on a missing key: %v, want 2xx", c, err)
		}
		if o, err := s.Get(ctx, k); err != nil || string(o.Body) != "created" {
			t.Errorf("%s: GET afterwards: %q %v, want the created object", c, o.Body, err)
		}
		if _, err := s.PutIfMatch(ctx, k, []byte("stale"), "6f5902ac237024bdd0c176cb93063dc4"); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Errorf("%s: stale If-Match on an existing key: %v, want 412", c, err)
		}
	}
}

// TestStaleAfterCAS: right after a PUT If-Match, GET returns the replaced version; once the
// window has passed it returns the new one.
func TestStaleAfterCAS(t *testing.T) {
	ctx := context.Background()
	for c, s := range open(t, unsafestore.Options{Mode: unsafestore.StaleAfterCAS, Stale: 300 * time.Millisecond}) {
		k := testenv.Prefix(t) + "key"
		e0, err := s.Put(ctx, k, []byte("v0"))
		if err != nil {
			t.Fatal(err)
		}
		e1, err := s.PutIfMatch(ctx, k, []byte("v1"), e0)
		if err != nil {
			t.Fatalf("%s: CAS: %v", c, err)
		}
		if o, err := s.Get(ctx, k); err != nil || o.ETag != e0 || string(o.Body) != "v0" {
			t.Errorf("%s: GET right after the CAS: %q %s %v, want the replaced v0 %s", c, o.Body, o.ETag, err, e0)
		}
		time.Sleep(400 * time.Millisecond)
		if o, err := s.Get(ctx, k); err != nil || o.ETag != e1 || string(o.Body) != "v1" {
			t.Errorf("%s: GET after the window: %q %s %v, want v1 %s", c, o.Body, o.ETag, err, e1)
		}
	}
}

// TestIgnoreUnderLoad: one request at a time the conditions hold; 16 racing creates on one
// key, above the front's limit of 2 in flight, have more than one winner on some key.
func TestIgnoreUnderLoad(t *testing.T) {
	ctx := context.Background()
	for c, s := range open(t, unsafestore.Options{Mode: unsafestore.IgnoreUnderLoad, MaxInFlight: 2}) {
		prefix := testenv.Prefix(t)
		if _, err := s.PutIfAbsent(ctx, prefix+"one", []byte("a")); err != nil {
			t.Fatal(err)
		}
		if _, err := s.PutIfAbsent(ctx, prefix+"one", []byte("b")); !errors.Is(err, store.ErrPreconditionFailed) {
			t.Errorf("%s: sequential create on an existing key: %v, want 412", c, err)
		}
		most := 0
		for i := 0; i < 8 && most < 2; i++ {
			most = max(most, race(ctx, s, prefix+"race"+string(rune('a'+i))))
		}
		if most < 2 {
			t.Errorf("%s: no race of 16 creates had more than one winner", c)
		}
	}
}

func race(ctx context.Context, s store.Store, key string) int {
	var mu sync.Mutex
	var wg sync.WaitGroup
	wins := 0
	start := make(chan struct{})
	for range 16 {
		wg.Go(func() {
			<-start
			if _, err := s.PutIfAbsent(ctx, key, []byte("x")); err == nil {
				mu.Lock()
				wins++
				mu.Unlock()
			}
		})
	}
	close(start)
	wg.Wait()
	return wins
}
