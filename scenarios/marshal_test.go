package scenarios

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

// bare returns a copy of sc without what a round trip does not keep: positions, Source
// and Raw.
func bare(sc *Scenario) Scenario {
	c := *sc
	c.Source, c.Raw = "", nil
	c.Writers = append([]Writer(nil), sc.Writers...)
	for i := range c.Writers {
		c.Writers[i].Pos = Pos{}
	}
	c.Kills = append([]Kill(nil), sc.Kills...)
	for i := range c.Kills {
		c.Kills[i].Pos = Pos{}
	}
	c.Steps = append([]Step(nil), sc.Steps...)
	for i := range c.Steps {
		c.Steps[i].Pos = Pos{}
	}
	return c
}

// roundTrip marshals sc, parses the text back and fails unless the two are equal.
func roundTrip(t *testing.T, sc *Scenario) []byte {
	t.Helper()
	data, err := Marshal(sc)
	if err != nil {
		t.Fatalf("%s: marshal: %v", sc.Name, err)
	}
	back, err := Parse(sc.Name+".yaml", data, Options{Variants: variantsOf(sc)})
	if err != nil {
		t.Fatalf("%s: parse of the marshalled text: %v\n%s", sc.Name, err, data)
	}
	want, got := bare(sc), bare(back)
	if !reflect.DeepEqual(want, got) {
		wv, gv := reflect.ValueOf(want), reflect.ValueOf(got)
		for i := 0; i < wv.NumField(); i++ {
			if !reflect.DeepEqual(wv.Field(i).Interface(), gv.Field(i).Interface()) {
				t.Errorf("%s: field %s differs after a round trip:\nwant %#v\n got %#v", sc.Name,
					wv.Type().Field(i).Name, wv.Field(i).Interface(), gv.Field(i).Interface())
			}
		}
		t.Fatalf("%s: text was\n%s", sc.Name, data)
	}
	return data
}

func TestMarshalRoundTripsTheCatalogue(t *testing.T) {
	cat, err := Catalogue(Options{Variants: testVariants})
	if err != nil {
		t.Fatal(err)
	}
	if len(cat) < 20 {
		t.Fatalf("expected the whole catalogue, got %d scenarios", len(cat))
	}
	for _, sc := range cat {
		roundTrip(t, sc)
	}
}

// everyAction is a scenario with one step of every action, with every parameter set away
// from its default where it has one.
func everyAction() *Scenario {
	rule := faults.Rule{Name: "cas 503 \"quoted\"", Method: "PUT", Key: "*fence__*", Header: "If-Match",
		Value: `"etag-1"`, Nth: 2, Count: 3, Action: faults.SyntheticStatus, Status: 503, Code: "SlowDown", Delay: 5 * time.Millisecond}
	steps := []Step{
		{Action: Partition, Params: Params{Writer: "a", Mode: "blackhole"}, For: 300 * time.Millisecond},
		{Action: Heal, Params: Params{Writer: "a"}},
		{Action: Latency, Params: Params{Writer: "a", Delay: 1500 * time.Microsecond}, For: time.Second},
		{Action: Bandwidth, Params: Params{Writer: "a", KBps: 64}},
		{Action: Reset, Params: Params{Writer: "a"}, For: 100 * time.Millisecond},
		{Action: SlowClose, Params: Params{Writer: "a", Delay: 2 * time.Second}},
		{Action: Flap, Params: Params{Writer: "a", On: 50 * time.Millisecond, Off: 70 * time.Millisecond}, For: 500 * time.Millisecond},
		{Action: HTTP, Params: Params{Writer: "a", Rule: rule}},
		{Action: HTTP, Params: Params{Writer: "b", Rule: faults.Rule{Name: "http@step8", Action: faults.DropRequest}}},
		{Action: HTTP, Params: Params{Writer: "b", Rule: faults.Rule{Name: "held", Action: faults.Delay},
			Until: &EventTrigger{Writer: "c", Event: history.SigClaimed, Count: 2}}},
		{Action: OneWay, Params: Params{Writer: "a"}, For: 200 * time.Millisecond},
		{Action: Promote, Params: Params{Writer: "b", Term: 7}},
		{Action: Promote, Params: Params{Writer: "c", Term: 7, Twin: true}},
		{Action: Relocate, Params: Params{Writer: "b", Target: "c", AbortAt: "after-target-acks", LoseHandoff: true, Prehydrate: true}},
		{Action: Crash, Params: Params{Writer: "a"}},
		{Action: Restart, Params: Params{Writer: "a", As: "a'", Term: 9}},
		{Action: Pause, Params: Params{Writer: "b"}, For: 40 * time.Millisecond},
		{Action: Resume, Params: Params{Writer: "b"}},
		{Action: Refresh, Params: Params{Writer: "b"}},
		{Action: GC, Params: Params{Writer: "b"}},
		{Action: Recover, Params: Params{Writer: "d", From: "b"}},
		{Action: DriveOffline, Params: Params{Drive: 2}, For: time.Second},
		{Action: DriveOnline, Params: Params{Drive: 2}},
		{Action: DriveSlow, Params: Params{Drive: 3, Delay: 200 * time.Millisecond}, For: 750 * time.Millisecond},
		{Action: StoreRestart, Params: Params{Down: 250 * time.Millisecond}},
		{Action: StoreRestart},
	}
	for i := range steps {
		steps[i].Index = i
		if i%2 == 0 {
			steps[i].Trigger, steps[i].At = TriggerAt, time.Duration(i)*100*time.Millisecond
		} else {
			steps[i].Trigger, steps[i].After = TriggerAfter, &EventTrigger{Writer: "a", Event: Events[i%len(Events)], Count: 1 + i%3, Delay: time.Duration(i%2) * time.Millisecond}
		}
	}
	return &Scenario{
		Name: "every-action", Seed: 42, Duration: 4 * time.Second, Protocol: "no-sweep", Client: "aws-sdk",
		Description: "Line one: with a colon.\nLine two, with  two spaces and a # hash.",
		Writers: []Writer{{ID: "a", Role: "primary", Term: 5}, {ID: "b", Role: "standby"},
			{ID: "c", Role: "standby"}, {ID: "d", Role: "standby"}},
		Traffic: Traffic{Clients: 0, Rate: 150, SyncEvery: 7, SyncInterval: 20 * time.Millisecond},
		Kills:   []Kill{{Variant: "no-sweep", Violates: []string{"NoAckedWriteLoss", "FencedTerminal"}}, {Variant: "no-seq"}},
		Store:   StoreSpec{AllowUnenforced: true, Drives: 4},
		Steps:   steps,
		Expect: Expect{Verdict: "fail", Violated: []string{"NoAckedWriteLoss"}, Fenced: []string{"a", "a'"}, Serving: "b",
			MinAcked: 3, FaultsMustFire: "none", MaxTimeToFence: 1500 * time.Millisecond},
	}
}

func TestMarshalRoundTripsEveryAction(t *testing.T) {
	sc := everyAction()
	seen := map[Action]bool{}
	for _, st := range sc.Steps {
		seen[st.Action] = true
	}
	for _, a := range Actions {
		if !seen[a.Name] {
			t.Fatalf("the every-action scenario lacks %s", a.Name)
		}
	}
	roundTrip(t, sc)
}

func TestMarshalCatalogueStyle(t *testing.T) {
	cat, err := Catalogue(Options{Variants: testVariants})
	if err != nil {
		t.Fatal(err)
	}
	var sc *Scenario
	for _, s := range cat {
		if s.Name == "lost-cas-response" {
			sc = s
		}
	}
	if sc == nil {
		t.Fatal("lost-cas-response is not in the catalogue")
	}
	text := string(roundTrip(t, sc))
	for _, want := range []string{
		"description: >\n  The store applies",
		"duration: 3s\n",
		"  - {id: a, role: primary, term: 5}\n",
		"traffic: {clients: 4, rate: 300/s, sync_every: 20ops, sync_interval: 50ms}\n",
		"  - at: 1s\n    http:\n      writer: a\n      name: drop-cas-answer\n",
		`      match: {method: PUT, key: "*fence__*", header: If-Match, nth: 3, count: 1}` + "\n",
		"      action: drop-response\n",
		"expect:\n  verdict: pass\n  min_acked: 200\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("marshalled text lacks %q:\n%s", want, text)
		}
	}
}

func TestFormatDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{
		0: "0s", 2 * time.Second: "2s", 1500 * time.Millisecond: "1500ms", 50 * time.Millisecond: "50ms",
		90 * time.Second: "90s", 1500 * time.Microsecond: "1500us", 7: "7ns",
	} {
		if got := FormatDuration(d); got != want {
			t.Errorf("FormatDuration(%v) = %q, want %q", d, got, want)
		}
		if back, err := time.ParseDuration(FormatDuration(d)); err != nil || back != d {
			t.Errorf("FormatDuration(%v) = %q reads back as %v (%v)", d, FormatDuration(d), back, err)
		}
	}
}

// FuzzMarshalRoundTrip: whatever text Parse accepts, its scenario marshals to text that
// Parse reads back equal, and marshalling that gives the same text again.
func FuzzMarshalRoundTrip(f *testing.F) {
	entries, err := catalogueFS.ReadDir("catalogue")
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range entries {
		data, err := catalogueFS.ReadFile("catalogue/" + e.Name())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	if data, err := Marshal(everyAction()); err == nil {
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("fuzz.yaml", data, Options{})
		if err != nil {
			return
		}
		once := roundTrip(t, withDefaults(sc))
		back, err := Parse("fuzz.yaml", once, Options{})
		if err != nil {
			t.Fatal(err)
		}
		twice, err := Marshal(back)
		if err != nil || string(twice) != string(once) {
			t.Fatalf("marshal is not stable (%v):\n%s\n---\n%s", err, once, twice)
		}
	})
}

// variantsOf checks variants against the registered ones, unless sc names others (a fuzzed
// scenario may).
func variantsOf(sc *Scenario) []string {
	for _, k := range sc.Kills {
		if !slices.Contains(testVariants, k.Variant) {
			return nil
		}
	}
	if !slices.Contains(testVariants, sc.Protocol) {
		return nil
	}
	return testVariants
}

// withDefaults fills the fields the loader accepts empty (an empty enum value such as
// `verdict: ""`) with the default Marshal leaves them to, as Marshal's doc says.
func withDefaults(sc *Scenario) *Scenario {
	c := *sc
	if c.Expect.Verdict == "" {
		c.Expect.Verdict = "pass"
	}
	if c.Expect.FaultsMustFire == "" {
		c.Expect.FaultsMustFire = "all"
	}
	if c.Protocol == "" {
		c.Protocol = "correct"
	}
	c.Writers = append([]Writer(nil), sc.Writers...)
	for i := range c.Writers {
		if c.Writers[i].Role == "" {
			c.Writers[i].Role = "standby"
		}
	}
	c.Steps = append([]Step(nil), sc.Steps...)
	for i := range c.Steps {
		if c.Steps[i].Action == Partition && c.Steps[i].Params.Mode == "" {
			c.Steps[i].Params.Mode = "refuse"
		}
	}
	return &c
}
