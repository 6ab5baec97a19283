package netpath_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/store"
)

func TestLedgerBucketLevelAndNoSecrets(t *testing.T) {
	ctx := context.Background()
	srv := testenv.MinIO(t)
	for _, c := range store.Clients {
		t.Run(string(c), func(t *testing.T) {
			b := newBench(t)
			s, _ := client(t, b, "w", c, 5*time.Second)
			pre := testenv.Prefix(t)
			for _, k := range []string{"a", "b/c"} {
				if _, err := s.Put(ctx, pre+k, []byte(k)); err != nil {
					t.Fatal(err)
				}
			}
			l, err := s.List(ctx, pre)
			if err != nil || len(l) != 2 {
				t.Fatalf("list: %v %v", l, err)
			}
			if failed, err := s.DeleteMany(ctx, []string{pre + "a", pre + "b/c"}); err != nil || len(failed) != 0 {
				t.Fatalf("delete-many: %v %v", failed, err)
			}
			var list, del bool
			for _, e := range b.Ledger() {
				if e.Key == "" && e.Method == "GET" && strings.Contains(e.Query, "list-type=2") &&
					strings.Contains(e.Query, "prefix=") {
					list = true
				}
				if e.Key == "" && e.Method == "POST" && strings.Contains(e.Query, "delete") {
					del = true
				}
			}
			if !list || !del {
				t.Fatalf("bucket-level calls missing from the ledger (list %v, delete %v): %+v", list, del, b.Ledger())
			}
			if got := byKey(b.Ledger(), pre+"b/c"); len(got) != 1 || got[0].Status != 200 {
				t.Fatalf("key with a slash: %+v", got)
			}
			var buf bytes.Buffer
			if err := b.WriteLedger(&buf); err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{srv.SecretKey, "Signature", "Credential", "AWS4-HMAC"} {
				if strings.Contains(buf.String(), secret) {
					t.Fatalf("the ledger leaks %q", secret)
				}
			}
			back, err := history.DecodeLedger(&buf)
			if err != nil || len(back) != len(b.Ledger()) {
				t.Fatalf("decode: %d entries, %v", len(back), err)
			}
			for i := 1; i < len(back); i++ {
				if back[i].ID <= back[i-1].ID {
					t.Fatalf("ledger not ordered by ID")
				}
			}
		})
	}
}
