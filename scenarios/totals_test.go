package scenarios

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writersDoc declares n standby writers after a primary (n >= 1 in all), plus restarts
// restart steps that each create one more.
func writersDoc(n, restarts int) string {
	var b strings.Builder
	b.WriteString("name: many\nduration: 2s\nwriters:\n  - {id: a, role: primary, term: 1}\n")
	for i := 1; i < n; i++ {
		fmt.Fprintf(&b, "  - {id: w%d}\n", i)
	}
	if restarts > 0 {
		b.WriteString("steps:\n")
	}
	for i := range restarts {
		fmt.Fprintf(&b, "  - at: 1s\n    restart: {writer: a, as: r%d, term: %d}\n", i, i+2)
	}
	return b.String()
}

func repeatDoc(head, item string, n int) string {
	return head + strings.Repeat(item, n)
}

const oneWriter = "name: t\nduration: 2s\nwriters:\n  - {id: a, role: primary, term: 1}\n"

// TestTotalsBounded: the quantities summed over a scenario are bounded too. Each case is an
// edge: a value just inside (want "") and just outside (want the error, with its position
// and range).
func TestTotalsBounded(t *testing.T) {
	killsDoc := func(n int) string {
		var b strings.Builder
		b.WriteString(oneWriter + "kills:\n")
		for i := range n {
			fmt.Fprintf(&b, "  - v%d\n", i)
		}
		return b.String()
	}
	cases := []struct {
		name, doc, want string
	}{
		{"no writers", "name: t\nduration: 2s\nwriters: []\n", "t.yaml:3:1: writers: expected 1 to 64 writers (restart steps count as writers), got 0"},
		{"5001 writers", writersDoc(5001, 0), "t.yaml:3:1: writers: expected 1 to 64 writers (restart steps count as writers), got 5001"},
		{"64 writers", writersDoc(64, 0), ""},
		{"63 writers and a restart", writersDoc(63, 1), ""},
		{"64 writers and a restart", writersDoc(64, 1), "t.yaml:3:1: writers: expected 1 to 64 writers (restart steps count as writers), got 65"},
		{"256 steps", repeatDoc(oneWriter+"steps:\n", "  - {at: 1s, heal: a}\n", 256), ""},
		{"257 steps", repeatDoc(oneWriter+"steps:\n", "  - {at: 1s, heal: a}\n", 257), "t.yaml:5:1: steps: expected 0 to 256 steps, got 257"},
		{"64 kills", killsDoc(64), ""},
		{"65 kills", killsDoc(65), "t.yaml:5:1: kills: expected 0 to 64 kills, got 65"},
		{"200000 ops", strings.Replace(oneWriter, "2s", "40s", 1) + "traffic: {clients: 1, rate: 5000/s}\n", ""},
		{"205000 ops", strings.Replace(oneWriter, "2s", "41s", 1) + "traffic: {clients: 1, rate: 5000/s}\n",
			"t.yaml:5:23: traffic.rate: expected 0 to 200000 ops over the duration (rate × duration), got 5000/s × 41s = 205000"},
		{"no clients, no ops", strings.Replace(oneWriter, "2s", "41s", 1) + "traffic: {clients: 0, rate: 5000/s}\n", ""},
		// A flap's toggles: at most 2 per (on+off)/2 of its window, plus 2; the step itself is
		// one more. 20ms/20ms over 99.96s: 1 + 2*(4998+1) = 9999; over 99.98s: 10001.
		{"9999 planned", "name: t\nduration: 99.96s\nwriters:\n  - {id: a, role: primary, term: 1}\nsteps:\n  - at: 0s\n    flap: {writer: a, on: 20ms, off: 20ms}\n", ""},
		{"10001 planned", "name: t\nduration: 99.98s\nwriters:\n  - {id: a, role: primary, term: 1}\nsteps:\n  - at: 0s\n    flap: {writer: a, on: 20ms, off: 20ms}\n",
			"t.yaml:6:5: steps[0]: expected 0 to 10000 planned actions, got up to 10001 by this step"},
		{"flap 1us", oneWriter + "steps:\n  - at: 0s\n    flap: {writer: a, on: 1us, off: 1us}\n",
			"t.yaml:7:27: steps[0].flap.on: expected 10ms to 10m, got 1µs"},
		{"flap 10ms for 10 minutes", "name: t\nduration: 10m\nwriters:\n  - {id: a, role: primary, term: 1}\nsteps:\n  - at: 0s\n    flap: {writer: a, on: 10ms, off: 10ms}\n",
			"t.yaml:6:5: steps[0]: expected 0 to 10000 planned actions"},
		{"rate 1e10/s", oneWriter + "traffic: {rate: 1e10/s}\n", "t.yaml:5:17: traffic.rate: expected 0.1/s to 5000/s, got 1e+10/s"},
		{"rate 1e-300/s", oneWriter + "traffic: {rate: 1e-300/s}\n", "t.yaml:5:17: traffic.rate: expected 0.1/s to 5000/s, got 1e-300/s"},
		{"rate 6/min", oneWriter + "traffic: {rate: 6/min}\n", ""},
		{"rate 5/ms", oneWriter + "traffic: {rate: 5/ms}\n", ""},
		{"rate 6/ms", oneWriter + "traffic: {rate: 6/ms}\n", "t.yaml:5:17: traffic.rate: expected 0.1/s to 5000/s, got 6000/s"},
		{"clients 10000000", oneWriter + "traffic: {clients: 10000000}\n", "t.yaml:5:20: traffic.clients: expected 0 to 64, got 10000000"},
		{"file of 1 MiB", oneWriter + "#" + strings.Repeat("x", 1<<20-len(oneWriter)-2) + "\n", ""},
		{"file over 1 MiB", oneWriter + "#" + strings.Repeat("x", 1<<20-len(oneWriter)-1) + "\n", "t.yaml:1:1: expected a file of 0 to 1048576 bytes, got 1048577"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("t.yaml", []byte(c.doc), Options{})
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("rejected a scenario inside every bound: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// TestValidateOutput is what `fencebench validate` prints for a file with unbounded values:
// Resolve's error, one line per problem, each with file, line, column, field and range.
func TestValidateOutput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "unbounded.yaml")
	doc := `name: unbounded
duration: 2s
writers:
  - {id: a, role: primary, term: 1}
traffic: {clients: 10000000, rate: 1e10/s}
steps:
  - at: 0s
    flap: {writer: a, on: 1us, off: 1us}
`
	if err := os.WriteFile(path, []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Resolve([]string{path}, Options{Variants: testVariants})
	if err == nil {
		t.Fatal("an unbounded scenario validated")
	}
	want := []string{
		path + ":5:20: traffic.clients: expected 0 to 64, got 10000000",
		path + ":5:36: traffic.rate: expected 0.1/s to 5000/s, got 1e+10/s",
		path + ":8:27: steps[0].flap.on: expected 10ms to 10m, got 1µs",
		path + ":8:37: steps[0].flap.off: expected 10ms to 10m, got 1µs",
		path + ":5:30: traffic.rate: expected 0 to 200000 ops over the duration (rate × duration), got 1e+10/s × 2s = 20000000000; lower the rate or shorten the duration",
		path + ":7:5: steps[0]: expected 0 to 10000 planned actions, got up to 4000003 by this step (window ends and flap toggles included); lengthen the flap's on/off or shorten its window",
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Fatalf("validate prints\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// TestDocsListBounds: docs/scenarios.md's field reference shows the same ranges as Bounds, one
// row per bound, and no other.
func TestDocsListBounds(t *testing.T) {
	data, err := os.ReadFile("../docs/scenarios.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, found := strings.Cut(string(data), "\n### Field ranges\n")
	if !found {
		t.Fatal("docs/scenarios.md has no section ### Field ranges")
	}
	section, _, _ = strings.Cut(section, "\n#")
	rows := strings.Count(section, "\n| `")
	for _, b := range Bounds {
		row := fmt.Sprintf("| `%s` | %s | %s |", b.Field, b.Range(), b.What)
		if !strings.Contains(section, row+"\n") {
			t.Errorf("docs/scenarios.md lacks the row\n%s", row)
		}
	}
	if rows != len(Bounds) {
		t.Errorf("docs/scenarios.md's field reference has %d rows, Bounds %d", rows, len(Bounds))
	}
}
