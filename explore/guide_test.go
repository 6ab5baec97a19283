package explore

import (
	"slices"
	"testing"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

func TestFeaturesOfAHandBuiltHistory(t *testing.T) {
	sc, err := scenarios.Parse("coverage.yaml", []byte(coverageScenario), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(w string, k history.Kind, from, to int, o history.Outcome, err string) history.Event {
		return history.Event{Writer: w, Kind: k, Invoke: ms(from), Complete: ms(to), Outcome: o, Err: err}
	}
	const key = "run-1/explore-7/idx1f/0/translog/metadata/fence__9223372036854775801"
	events := []history.Event{
		ev("a", history.Claim, 0, 50, history.OK, ""),
		ev("a", history.Sync, 60, 70, history.OK, ""),
		ev("a", history.Sync, 80, 90, history.OK, ""),
		ev("a", history.Sync, 100, 400, history.Ambiguous, "fence advance "+key+": retryable: write outcome unknown"),
		ev("b", history.Claim, 250, 320, history.FencedOut,
			"fence claim "+key+": fenced: taken over mid-claim by allocation c-alloc3 (node c, seq 4)"),
		ev("b", history.StoreGet, 260, 300, history.Fail, "get "+key+": HTTP 500 InternalError"),
		ev("c", history.Claim, 270, 330, history.FencedOut,
			"fence claim "+key+": fenced: taken over mid-claim by allocation b-alloc9 (node b, seq 12)"),
		ev("a", history.Op, 300, 310, history.Fail, "not serving"),
	}
	ledger := []history.LedgerEntry{{Writer: "a", Rule: "lost-cas", Time: ms(150)}}
	got := Features(sc, events, ledger)
	for _, want := range []string{
		"rule:drop-response:PUT/sync/primary",
		"fail:store.get/claim",
		"seq:claim:ok>sync:ok/self",
		"seq:claim:fenced>claim:fenced/other",
		"depth:2",
		"why:sync/ambiguous:fence advance retryable: write outcome unknown",
		// Two copies taking the same branch for different keys, allocations and seqs: one feature.
		"why:claim/fenced:fence claim fenced: taken over mid-claim by allocation # (node # seq",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("features lack %q:\n%q", want, got)
		}
	}
	whys := 0
	for _, f := range got {
		if len(f) > 4 && f[:4] == "why:" {
			whys++
		}
	}
	if whys != 2 {
		t.Errorf("%d why: features, want 2 (a client op's failure is not a branch of the protocol): %q", whys, got)
	}
}

func TestReasonKeepsTheBranchAndDropsTheDetails(t *testing.T) {
	for _, c := range []struct{ err, want string }{
		{"fence verify a/b/fence__12: fenced: key gone: the term's key was swept (no fence key is present)",
			"fence verify fenced: key gone: the term's key was swept (no fence"},
		{"put a/b/data/3/7__b-alloc2.tlog: ambiguous outcome (HTTP 500 InternalError)",
			"put ambiguous outcome (HTTP # InternalError)"},
		{"lost equal-term arbitration 3 times, last 412 12", "lost equal-term arbitration # times, last #"},
		{"taken over by allocation b-alloc1 (node b, seq 4)", "taken over by allocation # (node # seq #"},
	} {
		if got := reason(c.err, map[string]bool{"b": true}); got != c.want {
			t.Errorf("reason(%q)\n got %q\nwant %q", c.err, got, c.want)
		}
	}
}
