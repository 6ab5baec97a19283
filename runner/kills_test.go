package runner

import (
	"flag"
	"fmt"
	"os"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite runner/testdata/kills.golden from the catalogue")

const killsGolden = "testdata/kills.golden"

// TestKillsGolden pins the kill matrix: every (scenario, variant, invariants it must break)
// cell of the shipped catalogue is listed in testdata/kills.golden, so deleting or weakening
// a kill entry shows in review even when another scenario still kills the variant. Every kill
// names at least one invariant: a kill that accepts any failure would pass on a checker that
// fails for the wrong reason. Regenerate with `go test ./runner/ -run TestKillsGolden -update`.
func TestKillsGolden(t *testing.T) {
	var b strings.Builder
	b.WriteString("# scenario variant invariants-it-must-violate (go test ./runner/ -run TestKillsGolden -update)\n")
	for _, s := range catalogue(t) {
		for _, k := range s.Kills {
			if len(k.Violates) == 0 {
				t.Errorf("%s: the kill of %s names no invariant it violates", s.Name, k.Variant)
			}
			fmt.Fprintf(&b, "%s %s %s\n", s.Name, k.Variant, strings.Join(k.Violates, ","))
		}
	}
	got := b.String()
	if *update {
		if err := os.WriteFile(killsGolden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(killsGolden)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if got != string(want) {
		t.Errorf("the catalogue's kill matrix differs from %s (rerun with -update if the change is meant):\n%s",
			killsGolden, lineDiff(string(want), got))
	}
}

// lineDiff lists the lines only in want (-) and only in got (+).
func lineDiff(want, got string) string {
	count := map[string]int{}
	for _, l := range strings.Split(got, "\n") {
		count[l]++
	}
	var out []string
	for _, l := range strings.Split(want, "\n") {
		if count[l] > 0 {
			count[l]--
			continue
		}
		out = append(out, "- "+l)
	}
	for _, l := range strings.Split(got, "\n") {
		if count[l] > 0 {
			count[l]--
			out = append(out, "+ "+l)
		}
	}
	return strings.Join(out, "\n")
}
