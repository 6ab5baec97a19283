package storeprobe_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/storeprobe"
)

// TestSequentialProbes: the pinned MinIO passes both sequential probes on every key, and
// every probe of the pre-flight, each with its duration recorded; a front
// that creates on If-Match to a missing key fails A5 and a front that serves the replaced
// version after a CAS fails D17, each with a witness that says what was sent and answered.
func TestSequentialProbes(t *testing.T) {
	cases := []struct {
		name    string
		front   *unsafestore.Options
		failing string
		witness string
	}{
		{name: "pinned MinIO"},
		{name: "creates on If-Match", front: &unsafestore.Options{Mode: unsafestore.CreateOnIfMatch},
			failing: "A5", witness: "on a missing key answered 2xx"},
		{name: "stale after CAS", front: &unsafestore.Options{Mode: unsafestore.StaleAfterCAS, Stale: 200 * time.Millisecond},
			failing: "D17", witness: "(the version the CAS replaced): the read does not see the acknowledged write"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			cfg := testenv.MinIO(t).Config()
			if tc.front != nil {
				f, err := unsafestore.Open(cfg, *tc.front)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cfg = f.Config()
			}
			o := options(t, cfg)
			o.Kinds = []storeprobe.Kind{storeprobe.MissingIfMatch, storeprobe.ReadAfterCAS}
			res, err := storeprobe.Run(ctx, o)
			if err != nil {
				t.Fatal(err)
			}
			last := res[len(res)-1]
			if tc.failing == "" {
				if len(res) != 2 || res[0].Unsafe() || last.Unsafe() || res[0].Refused != res[0].Races || last.Wins != last.Races ||
					last.Races != storeprobe.DefaultKeys {
					t.Fatalf("results %+v; want both passed on %d keys", res, storeprobe.DefaultKeys)
				}
				o.Prefix, o.Kinds = testenv.Prefix(t), storeprobe.Preflight
				if res, err = storeprobe.Run(ctx, o); err != nil || len(res) != 4 {
					t.Fatalf("the pre-flight's probes: %+v %v; want 4 results", res, err)
				}
				for _, r := range res {
					if r.Unsafe() || r.Duration <= 0 {
						t.Errorf("%s: %+v; want passed, with how long it took", r.ID, r)
					}
				}
				return
			}
			if !last.Unsafe() || last.ID != tc.failing || !strings.Contains(last.Witness, tc.witness) {
				t.Fatalf("results %+v; want %s failing with %q", res, tc.failing, tc.witness)
			}
			t.Logf("witness: %s", last.Witness)
		})
	}
}
