package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// statuses in the order reports list them.
var statuses = []string{killed, timedOut, harness, variantKill, testKill, survived, equiv, invalid, errStatus}

// report is mutate.json.
type report struct {
	ModuleDir      string   `json:"module_dir"`
	Packages       []string `json:"packages"`
	Main           string   `json:"main"`
	Explore        string   `json:"explore"`
	Test           string   `json:"test,omitempty"`
	TimeoutSeconds float64  `json:"timeout_seconds"`
	// ExploreTimeoutSeconds bounds each mutant's exploration (killed-by-timeout beyond it).
	ExploreTimeoutSeconds float64        `json:"explore_timeout_seconds"`
	BaselineSeconds       float64        `json:"baseline_explore_seconds"`
	Counts                map[string]int `json:"counts"`
	// Score is (killed + killed-by-timeout + killed-by-harness + killed-by-variant +
	// killed-by-test) / (that + survived); absent when nothing was scored.
	Score *float64 `json:"score,omitempty"`
	// ExploreScore is the same without the test kills in the numerator: what the exploration
	// alone noticed. It equals Score when there was no test stage.
	ExploreScore *float64 `json:"explore_score,omitempty"`
	Min          float64  `json:"min"`
	// Reach says whether --reach measured where the unmutated code runs; Unexplored counts
	// the mutants whose changed statement the exploration never ran (not explored), NoTest
	// those whose statement no test of their package ran.
	Reach      bool `json:"reach"`
	Unexplored int  `json:"unexplored"`
	// Variants is the file declaring the broken variants of the variants' stage, "" without it.
	Variants string       `json:"variants,omitempty"`
	NoTest   int          `json:"no_test"`
	Mutants  []jsonResult `json:"mutants"`
}

type jsonResult struct {
	ID       string `json:"id"`
	File     string `json:"file"`
	Line     int    `json:"line"`
	Col      int    `json:"col"`
	Kind     string `json:"kind"`
	Original string `json:"original"`
	Mutated  string `json:"mutated"`
	Status   string `json:"status"`
	Exit     *int   `json:"exit,omitempty"`
	Detail   string `json:"detail,omitempty"`
	// Why is what a person found when examining a survivor (the survivors file).
	Why     string  `json:"why,omitempty"`
	Seconds float64 `json:"seconds"`
	// Unexplored: the unmutated exploration never ran the changed statement, so the mutant
	// was not explored. Tests are the tests it met when they were chosen by what they run;
	// NoTest: no test of its package runs the changed statement.
	Unexplored bool     `json:"unexplored,omitempty"`
	Tests      []string `json:"tests,omitempty"`
	NoTest     bool     `json:"no_test,omitempty"`
	// Variants are the broken variants whose explorations it met (the variants' stage).
	Variants []string `json:"variants,omitempty"`
}

func newReport(c config, d *driver, rs []result, examined map[string]string) report {
	r := report{ModuleDir: c.moduleDir, Packages: c.pkgs, Main: c.main, Explore: strings.Join(c.explore, " "),
		Test:           strings.Join(c.test, " "),
		TimeoutSeconds: c.timeout.Seconds(), ExploreTimeoutSeconds: d.exploreTimeout.Seconds(), BaselineSeconds: d.baseDur.Seconds(), Counts: map[string]int{}, Min: c.min,
		Reach: d.reach != nil, Variants: c.variants}
	for _, s := range statuses {
		r.Counts[s] = 0
	}
	for _, x := range rs {
		r.Counts[x.Status]++
		m := jsonResult{ID: x.ID, File: x.File, Line: x.Line, Col: x.Col, Kind: string(x.Kind),
			Original: x.Original, Mutated: x.Mutated, Status: x.Status, Exit: x.Exit, Detail: x.Detail, Seconds: x.Seconds,
			Unexplored: x.Unexplored, Tests: x.Tests, NoTest: x.NoTest, Variants: x.Variants}
		if x.Status == survived {
			m.Why = examined[x.ID]
		}
		if x.Unexplored {
			r.Unexplored++
		}
		if x.NoTest {
			r.NoTest++
		}
		r.Mutants = append(r.Mutants, m)
	}
	k := r.Counts[killed] + r.Counts[timedOut] + r.Counts[harness] + r.Counts[variantKill]
	if n := k + r.Counts[testKill] + r.Counts[survived]; n > 0 {
		s, e := float64(k+r.Counts[testKill])/float64(n), float64(k)/float64(n)
		r.Score, r.ExploreScore = &s, &e
	}
	return r
}

func (r report) exitCode() int {
	switch {
	case r.Score == nil:
		return exitNoScore
	case *r.Score < r.Min:
		return exitFail
	}
	return exitPass
}

func (r report) summary() string {
	var b strings.Builder
	b.WriteString("mutate:")
	for _, s := range statuses {
		fmt.Fprintf(&b, " %s %d,", s, r.Counts[s])
	}
	if r.Score == nil {
		fmt.Fprintf(&b, " no mutant scored (minimum %.2f)", r.Min)
	} else {
		fmt.Fprintf(&b, " score %.3f (minimum %.2f)", *r.Score, r.Min)
		if r.Test != "" {
			fmt.Fprintf(&b, ", exploration alone %.3f", *r.ExploreScore)
		}
	}
	return b.String()
}

func (r report) text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "mutation score of %s, explored by %q (timeout %s a mutant, %s a package's tests)\n",
		strings.Join(r.Packages, ", "), r.Explore, time.Duration(r.ExploreTimeoutSeconds*float64(time.Second)),
		time.Duration(r.TimeoutSeconds*float64(time.Second)))
	if r.Test != "" {
		fmt.Fprintf(&b, "survivors of the exploration then tested by %q on the mutated package\n", r.Test)
	}
	b.WriteString("\n" + r.summary() + "\n")
	b.WriteString("score = (killed + killed-by-timeout + killed-by-harness + killed-by-variant + killed-by-test) / (those + survived)\n")
	if r.Test != "" {
		b.WriteString("exploration alone = (killed + killed-by-timeout + killed-by-harness + killed-by-variant) / (those + killed-by-test + survived)\n")
	}
	if r.Variants != "" {
		fmt.Fprintf(&b, "variants' stage: a mutant the exploration did not kill met the explorations of the broken variants (%s) named where it sits\n", r.Variants)
	}
	if r.Reach {
		fmt.Fprintf(&b, "reach: the unmutated exploration never ran the changed statement of %d mutants, which were not explored", r.Unexplored)
		if r.Test != "" {
			fmt.Fprintf(&b, "; no test ran that of %d, whose tests did not run; the others met only the tests that run it", r.NoTest)
		}
		b.WriteString("\n")
	}
	n := 0
	for _, m := range r.Mutants {
		if m.Status == survived && m.Why != "" {
			n++
		}
	}
	r.list(&b, survived, fmt.Sprintf("Survivors (examined: %d): the exploration passed with these changes", n))
	r.list(&b, timedOut, "Killed by timeout: the exploration did not finish")
	r.list(&b, harness, "Killed by the harness: the exploration ended with harness errors (exit 255)")
	r.list(&b, variantKill, "Killed by a variant: the correct protocol's exploration passed, a broken variant's no longer fails")
	r.list(&b, testKill, "Killed by test: the exploration passed, the mutated package's tests failed")
	r.list(&b, errStatus, "Errors: the exploration ended neither 0 nor 1")
	return b.String()
}

func (r report) list(b *strings.Builder, status, title string) {
	if r.Counts[status] == 0 {
		return
	}
	fmt.Fprintf(b, "\n%s (%d)\n", title, r.Counts[status])
	for _, m := range r.Mutants {
		if m.Status != status {
			continue
		}
		mutated := m.Mutated
		if mutated == "" {
			mutated = "(line removed)"
		}
		fmt.Fprintf(b, "\n%s:%d  %s\n  - %s\n  + %s\n", m.File, m.Line, m.ID, m.Original, mutated)
		if status == survived {
			why := m.Why
			if why == "" {
				why = "not examined yet"
			}
			fmt.Fprintf(b, "  why: %s\n", why)
			switch {
			case m.Unexplored && m.NoTest:
				b.WriteString("  reach: neither the exploration nor any test runs this statement\n")
			case m.Unexplored:
				b.WriteString("  reach: the exploration never runs this statement\n")
			case m.NoTest:
				b.WriteString("  reach: no test runs this statement\n")
			}
		} else if status == testKill && m.Unexplored {
			b.WriteString("  reach: the exploration never runs this statement\n")
		}
		detail := m.Detail
		if status == testKill {
			// The first failure's first lines say which test noticed it, and why.
			if lines := strings.SplitN(detail, "\n", 5); len(lines) > 4 {
				detail = strings.Join(lines[:4], "\n") + "\n…"
			}
		}
		if len(m.Variants) > 0 && status != variantKill {
			fmt.Fprintf(b, "  variants explored: %s (each still fails)\n", strings.Join(m.Variants, ", "))
		}
		if detail != "" && (status == errStatus || status == testKill || status == variantKill) {
			fmt.Fprintf(b, "  %s\n", strings.ReplaceAll(detail, "\n", "\n  "))
		}
	}
}

// write writes mutate.json and mutate.txt into dir.
func (r report) write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	js, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "mutate.json"), append(js, '\n'), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "mutate.txt"), []byte(r.text()), 0o644)
}
