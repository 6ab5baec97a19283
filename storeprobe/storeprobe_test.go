package storeprobe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
	"github.com/fencebench/fencebench/storeprobe"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func options(t *testing.T, cfg store.Config) storeprobe.Options {
	t.Helper()
	reader, err := s3store.New(store.ClientMinio, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return storeprobe.Options{Reader: reader, Prefix: testenv.Prefix(t), Origin: "test",
		NewClient: func() (store.Store, error) { return s3store.New(store.ClientMinio, cfg) }}
}

// TestMinIOPasses: the pinned MinIO has exactly one winner in every race of both probes.
func TestMinIOPasses(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := storeprobe.Run(ctx, options(t, testenv.MinIO(t).Config()))
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	for _, r := range res {
		want := storeprobe.DefaultKeys * len(storeprobe.DefaultRacers)
		// A starved machine may spend a racer count's share of the deadline first: then fewer
		// races, with the cut named.
		judged := (r.Races == want && r.Cut == "") || (r.Races < want && r.Cut != "")
		if r.Unsafe() || !judged || r.Wins != r.Races {
			t.Errorf("%s: %+v; want %d races (or fewer with the cut named), one win each, no witness", r.ID, r, want)
		}
	}
}

// TestCheckThenActFails: a store that checks before it acts answers the sequential
// conditional-write probe correctly, and the create race shows two winners.
func TestCheckThenActFails(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	front, err := unsafestore.Start(testenv.MinIO(t).Config(), 5*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	o := options(t, front.Config())
	seq, _ := o.NewClient()
	if err := fence.Probe(ctx, seq, o.Prefix+"sequential/"); err != nil {
		t.Fatalf("the sequential probe refused the check-then-act store: %v", err)
	}
	res, err := storeprobe.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !res[0].Unsafe() || res[0].ID != "B9" {
		t.Fatalf("results %+v; want B9 unsafe and the CAS race skipped", res)
	}
	if w := res[0].Witness; !strings.Contains(w, "racers got 2xx") || !strings.Contains(w, "not atomic") {
		t.Errorf("witness %q names no winners", w)
	}
	t.Logf("witness: %s", res[0].Witness)
	o.Prefix, o.Kinds = testenv.Prefix(t), []storeprobe.Kind{storeprobe.CASRace}
	if res, err = storeprobe.Run(ctx, o); err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !res[0].Unsafe() || !strings.HasPrefix(res[0].Witness, "B10 CAS race: N=8 key ") {
		t.Fatalf("results %+v; want B10 unsafe with N=8", res)
	}
	t.Logf("witness: %s", res[0].Witness)
}

// slowStore answers each conditional write only after a delay, as a store that cannot keep
// up with the bench's load does.
type slowStore struct {
	store.Store
	delay time.Duration
}

func (s slowStore) PutIfAbsent(ctx context.Context, key string, body []byte) (string, error) {
	time.Sleep(s.delay)
	return s.Store.PutIfAbsent(ctx, key, body)
}

func (s slowStore) PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error) {
	time.Sleep(s.delay)
	return s.Store.PutIfMatch(ctx, key, body, etag)
}

// TestSlowStoreJudgedOnFewerKeys: a store that answers each conditional write in 300ms cannot
// race every key within a deadline of a few seconds; each racer count is judged on the races
// its share of the time allowed, the cut is said, and the run is not an error.
func TestSlowStoreJudgedOnFewerKeys(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	o := options(t, testenv.MinIO(t).Config())
	fast := o.NewClient
	o.NewClient = func() (store.Store, error) {
		s, err := fast()
		return slowStore{Store: s, delay: 300 * time.Millisecond}, err
	}
	res, err := storeprobe.Run(ctx, o)
	if err != nil {
		t.Fatalf("a slow store was not judged: %v", err)
	}
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	for _, r := range res {
		full := storeprobe.DefaultKeys * len(storeprobe.DefaultRacers)
		if r.Unsafe() || r.Wins != r.Races || r.Races < len(storeprobe.DefaultRacers) || r.Races >= full {
			t.Errorf("%s: %+v; want fewer than %d races, at least one per racer count, one win each", r.ID, r, full)
		}
		if !strings.Contains(r.Cut, "N=8: ") || !strings.Contains(r.Cut, "N=32: ") {
			t.Errorf("%s: cut %q, want both racer counts named", r.ID, r.Cut)
		}
		t.Logf("%s: %d races in %v, cut %s", r.ID, r.Races, r.Duration.Round(time.Millisecond), r.Cut)
	}
}
