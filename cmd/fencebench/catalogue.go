package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/scenarios"
)

func variantNames() []string {
	var out []string
	for _, v := range fence.Variants() {
		out = append(out, string(v.Name))
	}
	return out
}

func loadOptions() scenarios.Options { return scenarios.Options{Variants: variantNames()} }

func validate(args []string, stdout, stderr io.Writer) int {
	names, code := positional("validate", "[files | dirs | scenario names]", args, stderr)
	if code >= 0 {
		return code
	}
	scs, err := scenarios.Resolve(names, loadOptions())
	if err != nil {
		fmt.Fprintln(stderr, err)
		return outcome.ExitBadInput
	}
	for _, s := range scs {
		src := s.Source
		fmt.Fprintf(stdout, "ok  %-28s %s (%d writers, %d steps, kills %d variants)\n", s.Name, src, len(s.Writers), len(s.Steps), len(s.Kills))
	}
	return outcome.ExitPass
}

func list(stdout io.Writer) int {
	scs, err := scenarios.Catalogue(loadOptions())
	if err != nil {
		fmt.Fprintln(stdout, err)
		return outcome.ExitHarness
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tDURATION\tKILLS\tDESCRIPTION")
	for _, s := range scs {
		var kills []string
		for _, k := range s.Kills {
			kills = append(kills, k.Variant)
		}
		fmt.Fprintf(tw, "%s\t%v\t%s\t%s\n", s.Name, s.Duration, strings.Join(kills, ","), firstSentence(s.Description))
	}
	tw.Flush()
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "VARIANT\tREAD BY\tDESCRIPTION")
	for _, v := range fence.Variants() {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", v.Name, v.Reader, v.Description)
	}
	tw.Flush()
	return outcome.ExitPass
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i+1]
	}
	return s
}
