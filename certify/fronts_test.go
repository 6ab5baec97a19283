package certify

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/internal/unsafestore"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
)

// TestUnsafeFrontsRefused: certify refuses every front of package unsafestore (exit 1),
// with the probes that catch its defect failing for both clients and the probes it cannot
// break passing; the pinned MinIO, certified by the same probes, passes every one (exit 0).
func TestUnsafeFrontsRefused(t *testing.T) {
	type want struct{ fail, pass []string }
	wants := map[unsafestore.Mode]want{
		unsafestore.CheckThenAct:    {fail: []string{"B9", "B10"}, pass: []string{"A5"}},
		unsafestore.IgnoreUnderLoad: {fail: []string{"B9", "B10"}, pass: []string{"A5"}},
		unsafestore.CreateOnIfMatch: {fail: []string{"A5"}, pass: []string{"B9", "B10", "B11", "D17"}},
		unsafestore.StaleAfterCAS:   {fail: []string{"B10", "B11", "D17"}, pass: []string{"A5", "B9"}},
	}
	cases := []struct {
		name  string
		front *unsafestore.Options
		want
	}{{name: "pinned MinIO", want: want{pass: []string{"A5", "B9", "B10", "B11", "D17"}}}}
	for _, o := range unsafestore.Every() {
		cases = append(cases, struct {
			name  string
			front *unsafestore.Options
			want
		}{o.Mode.String(), &o, wants[o.Mode]})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			prefix := testenv.Prefix(t)
			cfg, name := unsafestore.Serve(t, testenv.MinIO(t).Config(), tc.front)
			e := testenv.External(t, cfg, name, prefix)
			rep, err := Run(ctx, e, Options{Keys: 4, Racers: []int{8}, Probes: []string{"A5", "B9", "B10", "B11", "D17"}, Prefix: prefix, Cleanup: true})
			if err != nil {
				t.Fatal(err)
			}
			wantExit := outcome.ExitPass
			if len(tc.fail) > 0 {
				wantExit = outcome.ExitFail
			}
			if rep.ExitCode() != wantExit {
				t.Errorf("verdict %s, exit %d; want exit %d", rep.Verdict, rep.ExitCode(), wantExit)
			}
			for _, c := range store.Clients {
				for _, r := range rep.Results {
					if r.Client != string(c) {
						continue
					}
					switch {
					case slices.Contains(tc.fail, r.ID) && r.Verdict != Fail:
						t.Errorf("%s/%s: %s %s; want fail", r.ID, c, r.Verdict, r.Observed)
					case slices.Contains(tc.pass, r.ID) && r.Verdict != Pass:
						t.Errorf("%s/%s: %s %s; want pass", r.ID, c, r.Verdict, r.Observed)
					case r.Verdict == Fail:
						t.Logf("%s/%s caught it: %.300s", r.ID, c, r.Observed)
					}
				}
			}
		})
	}
}
