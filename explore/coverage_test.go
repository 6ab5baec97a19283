package explore

import (
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

const coverageScenario = `name: coverage
duration: 2s
store: {drives: 4}
writers:
  - {id: a, role: primary, term: 5}
  - {id: b, role: standby}
  - {id: c, role: standby}
steps:
  - at: 100ms
    http:
      writer: a
      name: lost-cas
      match: {method: PUT, key: "*fence__*", header: If-Match}
      action: drop-response
  - at: 200ms
    partition: {writer: a, mode: blackhole}
    for: 300ms
  - at: 300ms
    crash: b
  - at: 900ms
    pause: a
    for: 50ms
  - at: 250ms
    promote: {writer: b, term: 6}
  - at: 600ms
    drive-offline: {drive: 1}
    for: 50ms
`

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func TestCoverageOfAHandBuiltHistory(t *testing.T) {
	sc, err := scenarios.Parse("coverage.yaml", []byte(coverageScenario), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ev := func(w string, k history.Kind, from, to int, detail string, term int64) history.Event {
		return history.Event{Writer: w, Kind: k, Invoke: ms(from), Complete: ms(to), Detail: detail, Term: term}
	}
	events := []history.Event{
		ev("a", history.Claim, 0, 50, "", 5),
		ev("a", history.FaultStart, 100, 100, "lost-cas", 0), // a request rule: counted from the ledger only
		ev("a", history.Sync, 100, 400, "", 5),
		ev("a", history.FaultStart, 200, 200, sc.Steps[1].FaultName(), 0),
		ev("b", history.Claim, 250, 320, "seal", 6),
		ev("b", history.Hydrate, 320, 500, "", 6),
		ev("b", history.FaultStart, 330, 330, sc.Steps[2].FaultName(), 0),
		ev("a", history.CAS, 350, 380, "", 5),
		ev("a", history.FaultEnd, 500, 500, sc.Steps[1].FaultName(), 0),
		ev("", history.FaultStart, 600, 600, sc.Steps[5].FaultName(), 0),
		ev("c", history.RestoreRead, 600, 700, "", 0),
		ev("", history.FaultEnd, 650, 650, sc.Steps[5].FaultName(), 0),
		ev("a", history.FaultStart, 900, 900, sc.Steps[3].FaultName(), 0),
		ev("a", history.FaultEnd, 950, 950, sc.Steps[3].FaultName(), 0),
	}
	ledger := []history.LedgerEntry{
		{Writer: "a", Rule: "lost-cas", Time: ms(10)},
		{Writer: "a", Rule: "lost-cas", Time: ms(360)},
		{Writer: "a", Rule: "someone-else", Time: ms(360)},
		{Writer: "a", Time: ms(360)},
	}
	cov := CoverageOf(sc, events, ledger)
	want := map[string]map[string]int{
		"drop-response":       {"claim": 1, "sync": 1, "cas": 1},
		"partition-blackhole": {"sync": 1, "cas": 1},
		"crash":               {"hydrate": 1},
		"drive-offline":       {"recover": 1},
	}
	if !reflect.DeepEqual(cov.Hits, want) {
		t.Errorf("hits\n got %v\nwant %v", cov.Hits, want)
	}
	seen := map[string]int{"claim": 1, "seal": 1, "sync": 1, "cas": 1, "hydrate": 1, "recover": 1}
	if !reflect.DeepEqual(cov.PhaseSeen, seen) {
		t.Errorf("phases seen\n got %v\nwant %v", cov.PhaseSeen, seen)
	}
	if !slices.Equal(cov.Phases, []string{"claim", "seal", "sync", "cas", "transfer", "handoff", "revert", "gc", "hydrate", "recover"}) {
		t.Errorf("phases %v", cov.Phases)
	}
	if !slices.Equal(cov.Faults, Kinds()) {
		t.Errorf("faults %v, want Kinds()", cov.Faults)
	}
}

func TestCoverageOfAnOpenWindowLastsToTheEnd(t *testing.T) {
	sc, err := scenarios.Parse("coverage.yaml", []byte(coverageScenario), scenarios.Options{})
	if err != nil {
		t.Fatal(err)
	}
	name := sc.Steps[1].FaultName()
	events := []history.Event{
		{Writer: "a", Kind: history.FaultStart, Invoke: ms(100), Complete: ms(100), Detail: name},
		{Writer: "a", Kind: history.Transfer, Invoke: ms(800), Complete: ms(900)},
		{Writer: "a", Kind: history.Handoff, Invoke: ms(950), Complete: ms(960)},
		{Writer: "b", Kind: history.Collect, Invoke: ms(950), Complete: ms(960)},
	}
	cov := CoverageOf(sc, events, nil)
	want := map[string]map[string]int{"partition-blackhole": {"transfer": 1, "handoff": 1}}
	if !reflect.DeepEqual(cov.Hits, want) {
		t.Errorf("hits\n got %v\nwant %v", cov.Hits, want)
	}
	if cov.PhaseSeen["gc"] != 1 || cov.PhaseSeen["revert"] != 0 {
		t.Errorf("phases seen %v", cov.PhaseSeen)
	}
}

// Every fault kind the generator draws is a coverage row, and every row is drawn.
func TestKindsAreWhatGenerateDraws(t *testing.T) {
	drawn := map[string]bool{}
	for seed := uint64(1); seed <= 3000; seed++ {
		o := GenOptions{Drives: true, Misdirect: seed%3 == 0}
		if seed%2 == 0 {
			o.Variant = unenforcedVariant
		}
		sc, err := Generate(seed, o)
		if err != nil {
			t.Fatalf("seed %d: %v", seed, err)
		}
		for _, st := range sc.Steps {
			if k := FaultKind(st); k != "" {
				if !slices.Contains(Kinds(), k) {
					t.Fatalf("seed %d draws fault kind %q, which is not a coverage row", seed, k)
				}
				drawn[k] = true
			}
		}
	}
	for _, k := range Kinds() {
		if !drawn[k] {
			t.Errorf("coverage row %q is never drawn", k)
		}
	}
}
