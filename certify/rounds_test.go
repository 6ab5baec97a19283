package certify

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/fencebench/fencebench/internal/testenv"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// TestAggregateOneFailingRound: one failing round of five fails a HARD probe; the result
// shows that round's number, observation, details and facts, its rate is 1/5, and it says
// that the verdict flipped. The report built from it is not certified, in every format.
func TestAggregateOneFailingRound(t *testing.T) {
	p := Probes()
	var b11 Probe
	for _, x := range p {
		if x.ID == "B11" {
			b11 = x
		}
	}
	var rounds []Result
	for i := 1; i <= 5; i++ {
		r := b11.result(store.ClientMinio)
		r.Verdict, r.Observed, r.Duration = Pass, "linearizable", time.Second
		r.Facts = map[string]string{"linearizable": "true", "acked": "40"}
		if i == 3 {
			r.Verdict, r.Observed = Fail, "the history is not linearizable"
			r.Details = []string{"FAIL: the history is not linearizable", "witness: w1 wrote 7 over E3 at 12ms, w2 read 6 at 14ms"}
			r.Facts = map[string]string{"linearizable": "false", "acked": "41"}
		}
		rounds = append(rounds, r)
	}
	got := aggregate(rounds)
	if got.Verdict != Fail || got.Round != 3 || got.Rounds != 5 || got.Failed != 1 || got.FailureRate != 0.2 || got.Rate() != "1/5" {
		t.Fatalf("aggregate: verdict %s, round %d of %d, failed %d, rate %v %s", got.Verdict, got.Round, got.Rounds, got.Failed,
			got.FailureRate, got.Rate())
	}
	if got.Observed != rounds[2].Observed || len(got.Details) != 2 || !strings.Contains(got.Details[1], "witness: w1") ||
		got.Facts["linearizable"] != "false" {
		t.Fatalf("aggregate shows %q %v %v, not the failing round's witness", got.Observed, got.Details, got.Facts)
	}
	if !got.Flipped || !strings.Contains(got.Variation, "flipped: failed 1 of 5 rounds (round 3)") ||
		!strings.Contains(got.Variation, "passed 4 of 5 rounds (rounds 1, 2, 4, 5)") {
		t.Fatalf("variation %q (flipped %v)", got.Variation, got.Flipped)
	}
	if strings.Contains(got.Variation, "acked") {
		t.Fatalf("a HARD probe's varying counters are not an observation that differs: %q", got.Variation)
	}
	if got.Duration != 5*time.Second || len(got.PerRound) != 5 || got.PerRound[2].Verdict != Fail {
		t.Fatalf("duration %v, per round %+v", got.Duration, got.PerRound)
	}

	rep := &Report{Prefix: "p/", Clients: []string{"minio-go"}, Rounds: 5, Results: []Result{got}}
	rep.judge()
	if rep.Verdict != NotCertified || rep.ExitCode() != outcome.ExitFail {
		t.Fatalf("verdict %s, exit %d", rep.Verdict, rep.ExitCode())
	}
	var text, js, page bytes.Buffer
	if err := rep.WriteText(&text, false); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteHTML(&page); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string][]string{
		"text": {"5 rounds", "FAILED", "1/5", "flipped: failed 1 of 5 rounds", "round 3 of 5:", "witness: w1",
			"B11 (minio-go, failed 1 of 5 rounds)"},
		"json": {`"failed": 1`, `"failure_rate": 0.2`, `"round": 3`, `"flipped": true`, "flipped: failed 1 of 5 rounds", "witness: w1"},
		"html": {"5 rounds", "1/5", "flipped: failed 1 of 5 rounds", "round 3 of 5", "witness: w1"},
	} {
		out := map[string]string{"text": text.String(), "json": js.String(), "html": page.String()}[name]
		for _, w := range want {
			if !strings.Contains(out, w) {
				t.Errorf("the %s report lacks %q:\n%s", name, w, out)
			}
		}
	}
}

// TestAggregateInfoDiffers: an INFO probe whose facts differ between rounds says which, and
// by which rounds; rounds that agree say nothing.
func TestAggregateInfoDiffers(t *testing.T) {
	var a5, c14 Probe
	for _, x := range Probes() {
		switch x.ID {
		case "A5":
			a5 = x
		case "C14":
			c14 = x
		}
	}
	mk := func(p Probe, facts ...string) []Result {
		var out []Result
		for _, f := range facts {
			r := p.result(store.ClientAWS)
			r.Verdict, r.Facts = Info, map[string]string{"identical_etag": f}
			out = append(out, r)
		}
		return out
	}
	got := aggregate(mk(c14, "true", "false", "true"))
	if got.Verdict != Info || got.Flipped || got.Rate() != "0/3" ||
		got.Variation != "observation differs between rounds: identical_etag=true in rounds 1, 3; identical_etag=false in round 2" {
		t.Fatalf("C14 over three rounds: %s flipped %v rate %s variation %q", got.Verdict, got.Flipped, got.Rate(), got.Variation)
	}
	if got := aggregate(mk(c14, "true", "true")); got.Variation != "" || got.Flipped {
		t.Fatalf("rounds that agree: %q", got.Variation)
	}
	one := aggregate(mk(a5, "x"))
	if one.Rounds != 1 || one.Round != 1 || one.PerRound != nil || one.Variation != "" {
		t.Fatalf("one round: %+v", one)
	}
}

// TestRoundsOnMinIO: three rounds on the real MinIO, where the store clients of the second
// round drop their conditions: A1 fails with that round's observation, its rate is 1/3 and
// it flipped; A4, which a condition-dropping store passes, passes every round; each round
// wrote under keys of its own.
func TestRoundsOnMinIO(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	e := minioEnv(t)
	prefix := testenv.Prefix(t)
	var made atomic.Int32
	var rounds []int
	rep, err := Run(ctx, e, Options{Clients: []store.Client{store.ClientMinio}, Rounds: 3, Probes: []string{"A1"},
		Prefix: prefix, Progress: func(r Result) { rounds = append(rounds, r.Round) },
		Wrap: func(_ store.Client, s store.Store) store.Store {
			// A1 builds two clients per round: the third and fourth belong to round 2.
			if n := made.Add(1); n == 3 || n == 4 {
				return lyingStore{s}
			}
			return s
		}})
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	_ = rep.WriteText(&text, false)
	t.Logf("\n%s", text.String())
	a1 := find(t, rep, "A1", store.ClientMinio)
	if rep.Verdict != NotCertified || rep.Rounds != 3 || a1.Verdict != Fail || a1.Round != 2 || a1.Rate() != "1/3" || !a1.Flipped ||
		!strings.Contains(a1.Variation, "flipped: failed 1 of 3 rounds (round 2)") {
		t.Fatalf("report %s rounds %d; A1 %s round %d rate %s variation %q", rep.Verdict, rep.Rounds, a1.Verdict, a1.Round, a1.Rate(), a1.Variation)
	}
	if a1.PerRound[0].Verdict != Pass || a1.PerRound[2].Verdict != Pass || len(rounds) != 3 || rounds[2] != 3 {
		t.Fatalf("per round %+v, progress rounds %v", a1.PerRound, rounds)
	}
	s, err := s3store.New(store.ClientMinio, e.Config())
	if err != nil {
		t.Fatal(err)
	}
	for _, under := range []string{"minio-go/A1/", "round-2/minio-go/A1/", "round-3/minio-go/A1/"} {
		if es, err := s.List(ctx, prefix+under); err != nil || len(es) == 0 {
			t.Errorf("nothing under %s (err %v): a round did not get keys of its own", under, err)
		}
	}
	var js bytes.Buffer
	_ = rep.WriteJSON(&js)
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.Results[0].Failed != 1 || back.Results[0].Rounds != 3 {
		t.Fatalf("JSON round trip: %v %+v", err, back.Results)
	}
}

// TestRoundsBounds: Rounds outside 1 to MaxRounds is refused before anything runs.
func TestRoundsBounds(t *testing.T) {
	for _, n := range []int{-1, MaxRounds + 1} {
		o := Options{Rounds: n, Prefix: "p/"}
		if err := o.normalize(); err == nil || !strings.Contains(err.Error(), "want 1 to 100") {
			t.Errorf("rounds %d: %v", n, err)
		}
	}
	o := Options{Prefix: "p/"}
	if err := o.normalize(); err != nil || o.Rounds != 1 {
		t.Fatalf("default rounds %d, %v", o.Rounds, err)
	}
}
