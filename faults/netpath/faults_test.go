package netpath_test

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/faults/netpath"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// newBench starts a bench in front of the shared MinIO; it is closed when the test ends.
func newBench(t *testing.T) *netpath.Bench {
	t.Helper()
	srv := testenv.MinIO(t)
	b, err := netpath.New(netpath.Options{
		Upstream:  srv.Addr(),
		Bucket:    srv.Bucket,
		Rand:      rand.New(rand.NewPCG(7, 11)),
		Prefix:    "t/",
		AccessKey: srv.AccessKey,
		SecretKey: srv.SecretKey,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return b
}

// client returns a store client of kind c whose connections travel the writer's path.
func client(t *testing.T, b *netpath.Bench, writer string, c store.Client, timeout time.Duration) (store.Store, *netpath.Path) {
	t.Helper()
	p, err := b.Path(writer)
	if err != nil {
		t.Fatal(err)
	}
	cfg := pathConfig(t, p)
	cfg.DialContext = p.DialContext
	cfg.Timeout = timeout
	s, err := s3store.New(c, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s, p
}

// pathConfig is the shared MinIO's client configuration with the path's credential instead of
// the store's.
func pathConfig(t testing.TB, p *netpath.Path) store.Config {
	cfg := testenv.MinIO(t).Config()
	cfg.AccessKey, cfg.SecretKey = p.Credentials()
	return cfg
}

func direct(t *testing.T, c store.Client) store.Store {
	t.Helper()
	return testenv.Store(t, c, nil)
}

func byRule(l []history.LedgerEntry, rule string) []history.LedgerEntry {
	return ledgerWhere(l, func(e history.LedgerEntry) bool { return e.Rule == rule })
}

func byKey(l []history.LedgerEntry, key string) []history.LedgerEntry {
	return ledgerWhere(l, func(e history.LedgerEntry) bool { return e.Key == key })
}

// ledgerWhere keeps the entries of l that match, in order.
func ledgerWhere(l []history.LedgerEntry, match func(history.LedgerEntry) bool) []history.LedgerEntry {
	var out []history.LedgerEntry
	for _, e := range l {
		if match(e) {
			out = append(out, e)
		}
	}
	return out
}

func mustAdd(t *testing.T, p *netpath.Path, r faults.Rule) {
	t.Helper()
	if err := p.AddRule(r); err != nil {
		t.Fatal(err)
	}
}
