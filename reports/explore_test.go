package reports

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/outcome"
)

// richExploration is an exploration with two groups of failures, every confirmation state,
// links inside and outside its folder, markup in every free text, a coverage table with
// unreached phases and a few harness errors.
func richExploration() *outcome.Exploration {
	x := &outcome.Exploration{
		ID: "explore-20260301-120000", Started: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC),
		Duration: 95 * time.Second, Stack: "sim", Confirm: "local", Variant: "correct", Client: "minio-go",
		Seed: 1000, Budget: "2000 schedules", Schedules: 2000, Passed: 1990, Failed: 4, Inconclusive: 3, Errors: 3,
		Rate: 21.05, FirstFailure: 17, Stopped: "budget",
		ErrorSamples: []string{"seed 1042: store died " + xssScript},
	}
	x.Coverage = outcome.Coverage{
		Faults:    []string{"partition", "drop-response", "status-409"},
		Phases:    []string{"claim", "seal", "cas", "handoff", "gc", "hydrate"},
		PhaseSeen: map[string]int{"claim": 2000, "seal": 1990, "cas": 1985, "handoff": 120},
	}
	x.Coverage.Add("partition", "claim", 310)
	x.Coverage.Add("partition", "cas", 7)
	x.Coverage.Add("drop-response", "cas", 1450)
	x.Coverage.Add("drop-response", "seal", 1)
	x.Failures = []outcome.ExploredFailure{
		{Invariants: []string{"MutualExclusion", "NoAckedWriteLoss"}, Target: "NoAckedWriteLoss", Seed: 1016, Index: 17,
			Steps: 7, ShrunkSteps: 2, Writers: 2, Rate: 200, ShrinkRuns: 41,
			Scenario: "failures/explore-1016.yaml", Original: "schedules/explore-1016.yaml", YAML: "name: explore-1016\n# " + xssScript + "\nsteps: []\n",
			Cell: "explore-1016", Narrative: "a acked op 12 " + xssScript + " after b sealed",
			Replays: 5, ReplayHits: 5, Confirmed: "reproduced", ConfirmCell: "confirm/explore-1016",
			Rerun: "fencebench run --scenario failures/explore-1016.yaml --stack local"},
		{Invariants: []string{"NoAckedWriteLoss"}, Target: "NoAckedWriteLoss", Seed: 1230, Index: 231,
			Steps: 5, ShrunkSteps: 3, Writers: 3, Rate: 100, ShrinkRuns: 18,
			Scenario: "../outside.yaml", Cell: "/etc", Narrative: "lost", Replays: 4, ReplayHits: 2,
			Confirmed: "not reproduced", ConfirmCell: "javascript:alert(1)", Rerun: "fencebench run --seed '" + xssImg + "'"},
		{Invariants: []string{"NoAckedWriteLoss", "MutualExclusion"}[:1], Target: "NoAckedWriteLoss", Seed: 1500, Index: 501,
			Steps: 4, ShrunkSteps: 2, Scenario: "https://example.com/x.yaml", Cell: "cells/a b", Replays: 3, ReplayHits: 0,
			Confirmed: "error: local store " + xssScript},
		{Invariants: []string{"MutualExclusion", "NoAckedWriteLoss"}, Seed: 1800, Index: 801, Steps: 9, ShrunkSteps: 9,
			Scenario: "failures/explore-1800.yaml", Confirmed: "not tried"},
	}
	return x
}

func writeExploration(t *testing.T, x *outcome.Exploration) (dir, page string) {
	t.Helper()
	dir = t.TempDir()
	if err := WriteExploration(dir, x); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ExplorePage))
	if err != nil {
		t.Fatal(err)
	}
	return dir, string(b)
}

// TestExplorationPage: the header, the banner, the grouping of failures, their confirmation
// and links, and that no free text reaches the page unescaped.
func TestExplorationPage(t *testing.T) {
	_, page := writeExploration(t, richExploration())
	for _, want := range []string{
		`4 failures in 2000 schedules`, `class="banner fail"`, `21.1 schedules/s`, `2000 schedules`, `95.00s`,
		`<span class="v pass">1990 pass</span>`, `<span class="v error">3 error</span>`, `href="#failure-1">schedule 17</a>`,
		`violated: <span class="mono">MutualExclusion, NoAckedWriteLoss</span> <span class="small">(2)</span>`,
		`violated: <span class="mono">NoAckedWriteLoss</span> <span class="small">(2)</span>`,
		`7 → 2 after 41 shrink runs`, `>5/5<`, `>2/4<`, `>0/3<`,
		`>reproduced on local<`, `>not reproduced on local<`, `class="v fail confirm"`, `>not tried<`,
		`href="explore-1016/report.html"`, `href="confirm/explore-1016/report.html"`,
		`href="failures/explore-1016.yaml"`, `href="schedules/explore-1016.yaml"`, `href="cells/a%20b/report.html"`,
		`seed 1042: store died &lt;script&gt;`, `<code class="cmd rerun">fencebench run --scenario failures/explore-1016.yaml --stack local</code>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("explore.html lacks %q", want)
		}
	}
	if !regexp.MustCompile(`(?s)<p class="narr">a acked op 12 &lt;script&gt;alert\(1\)&lt;/script&gt; after b sealed</p>`).MatchString(page) {
		t.Errorf("the narrative is missing or not escaped")
	}
	if !strings.Contains(page, "# &lt;script&gt;alert(1)&lt;/script&gt;\nsteps: []") {
		t.Errorf("the shrunk YAML is missing or not escaped")
	}
	for _, bad := range []string{xssScript, xssImg, `href="../`, `href="/etc`, `href="javascript:`, `href="https:`, `#ZgotmplZ`} {
		if strings.Contains(page, bad) {
			t.Errorf("explore.html holds %q", bad)
		}
	}
	// Failures are listed group by group: the two MutualExclusion ones first.
	order := regexp.MustCompile(`<h3>schedule (\d+) `).FindAllStringSubmatch(page, -1)
	var got []string
	for _, m := range order {
		got = append(got, m[1])
	}
	if want := []string{"17", "801", "231", "501"}; !reflect.DeepEqual(got, want) {
		t.Errorf("failures in order %v, want %v", got, want)
	}
	// Paths kept out of the links are still named as text.
	for _, text := range []string{`../outside.yaml`, `https://example.com/x.yaml`, `javascript:alert(1)`} {
		if !strings.Contains(page, text) {
			t.Errorf("explore.html does not name %q", text)
		}
	}
}

// TestExplorationCoverage: the hit counts land in their fault's row and phase's column,
// zeros read empty, the reach row comes from PhaseSeen, and the unreached phases are named.
func TestExplorationCoverage(t *testing.T) {
	x := richExploration()
	v := buildCoverage(x.Coverage)
	if want := []string{"claim", "seal", "cas", "handoff", "gc", "hydrate"}; !reflect.DeepEqual(v.Phases, want) {
		t.Fatalf("phases %v, want %v", v.Phases, want)
	}
	counts := func(cells []coverageCell) (ns, ls []int) {
		for _, c := range cells {
			ns, ls = append(ns, c.N), append(ls, c.Level)
		}
		return ns, ls
	}
	wantRows := map[string][]int{"partition": {310, 0, 7, 0, 0, 0}, "drop-response": {0, 1, 1450, 0, 0, 0}, "status-409": {0, 0, 0, 0, 0, 0}}
	for _, r := range v.Rows {
		ns, ls := counts(r.Cells)
		if !reflect.DeepEqual(ns, wantRows[r.Fault]) {
			t.Errorf("row %s: %v, want %v", r.Fault, ns, wantRows[r.Fault])
		}
		for i, n := range ns {
			if (n == 0) != (ls[i] == 0) {
				t.Errorf("row %s, %s: count %d has level %d", r.Fault, v.Phases[i], n, ls[i])
			}
		}
	}
	if _, ls := counts(v.Rows[1].Cells); ls[2] != coverageLevels || ls[1] != 1 {
		t.Errorf("drop-response levels %v: the peak is not the darkest, or 1 hit not the lightest", ls)
	}
	if ns, _ := counts(v.Seen); !reflect.DeepEqual(ns, []int{2000, 1990, 1985, 120, 0, 0}) {
		t.Errorf("schedules reaching the phases: %v", ns)
	}
	if !reflect.DeepEqual(v.NeverReached, []string{"gc", "hydrate"}) || !reflect.DeepEqual(v.NeverFaulted, []string{"handoff", "gc", "hydrate"}) {
		t.Errorf("never reached %v, never faulted %v", v.NeverReached, v.NeverFaulted)
	}

	_, page := writeExploration(t, x)
	for _, want := range []string{
		`<tr><td class="mono nowrap">partition</td><td class="c l4">310</td><td class="c l0"></td><td class="c l2">7</td>`,
		`<td class="c l0"></td><td class="num">317</td>`,
		`<td class="nowrap">schedules reaching the phase</td><td class="c l5">2000</td>`,
		`<dd id="never-reached"><b class="mono">gc</b>, <b class="mono">hydrate</b></dd>`,
		`<dd id="never-faulted"><b class="mono">handoff</b>, <b class="mono">gc</b>, <b class="mono">hydrate</b></dd>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("explore.html lacks %q", want)
		}
	}
}

// TestExplorationBanner: red with failures, purple with only harness errors, amber with
// nothing run, green otherwise.
func TestExplorationBanner(t *testing.T) {
	for _, tc := range []struct {
		x           outcome.Exploration
		class, text string
	}{
		{outcome.Exploration{Schedules: 500, Passed: 499, Failed: 1}, "fail", "1 failure in 500 schedules"},
		{outcome.Exploration{Schedules: 500, Passed: 498, Errors: 2}, "error", "no failure in 500 schedules, but 2 harness errors"},
		{outcome.Exploration{}, "inconclusive", "no schedule ran"},
		{outcome.Exploration{Schedules: 1, Passed: 1}, "pass", "no failure in 1 schedule"},
	} {
		b := exploreBanner(&tc.x)
		if b.Class != tc.class || b.Text != tc.text {
			t.Errorf("%+v: banner %q %q, want %q %q", tc.x, b.Class, b.Text, tc.class, tc.text)
		}
		_, page := writeExploration(t, &tc.x)
		if !strings.Contains(page, `<div class="banner `+tc.class+`" id="banner">`+tc.text+`</div>`) {
			t.Errorf("%+v: the page's banner is not %q", tc.x, tc.text)
		}
	}
}

func TestLocalHref(t *testing.T) {
	for in, want := range map[string]string{
		"a/report.html": "a/report.html", "./a//b.yaml": "a/b.yaml", "a b/c#d?.yaml": "a%20b/c%23d%3F.yaml",
		"x:y/z": "", "1:2/z": "1%3A2/z", "a/x:y": "a/x%3Ay",
		"": "", ".": "", "..": "", "../a": "", "a/../../b": "", "a/../b": "", "/etc/passwd": "",
		`a\b`: "", "https://example.com/": "", "javascript:alert(1)": "", "//host/x": "", "a\x00b": "",
	} {
		if got := localHref(in); got != want {
			t.Errorf("localHref(%q) = %q, want %q", in, got, want)
		}
	}
	if got := localPageHref("../up", "report.html"); got != "" {
		t.Errorf("a page in ../up is linked as %q", got)
	}
}

// TestExplorationRedacted: an endpoint's user information quoted in a rerun command, a
// narrative, a confirmation error or a harness error does not reach the page.
func TestExplorationRedacted(t *testing.T) {
	x := richExploration()
	ep := "https://AKIAEXAMPLE:s3cr3t@s3.example.com:9000"
	x.ErrorSamples = append(x.ErrorSamples, "seed 9: Put \""+ep+"/b/k\": EOF")
	x.Failures[0].Rerun += " --endpoint " + ep
	x.Failures[0].Narrative += " (" + ep + ")"
	x.Failures[2].Confirmed = "error: dial " + ep
	_, page := writeExploration(t, x)
	if strings.Contains(page, "s3cr3t") || strings.Contains(page, "AKIAEXAMPLE") {
		t.Errorf("explore.html shows an endpoint's user information")
	}
	if n := strings.Count(page, "https://REDACTED@s3.example.com:9000"); n != 5 {
		t.Errorf("%d redacted endpoints on the page, want 5 (the confirmation error twice: badge title and text)", n)
	}
}

// TestExplorationRoundTrip: explore.json holds the whole record, indented, and reads back
// equal; a folder without one is bad input.
func TestExplorationRoundTrip(t *testing.T) {
	x := richExploration()
	dir, _ := writeExploration(t, x)
	got, err := ReadExploration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, x) {
		t.Errorf("read back\n%+v\nwant\n%+v", got, x)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ExploreJSON))
	if !strings.HasPrefix(string(b), "{\n  \"id\": ") {
		t.Errorf("explore.json is not indented: %.40q", b)
	}
	if _, err := ReadExploration(t.TempDir()); !errors.Is(err, outcome.ErrBadInput) {
		t.Errorf("reading an empty folder: %v, want bad input", err)
	}
	os.WriteFile(filepath.Join(dir, ExploreJSON), []byte("{"), 0o644)
	if _, err := ReadExploration(dir); !errors.Is(err, outcome.ErrBadInput) {
		t.Errorf("reading a broken explore.json: %v, want bad input", err)
	}
	if err := WriteExploration(dir, nil); err == nil {
		t.Errorf("writing no exploration succeeded")
	}
}
