package deps

import (
	"bufio"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Rule is one line of the boundary table: what a module package may reach.
type Rule struct {
	// Package is the package's path inside the module ("store", "cmd/fencebench").
	Package string
	// May, unless Any, lists every module package Package may depend on, directly or not.
	May []string
	// Any marks a package that may depend on every module package but those in MayNot.
	Any bool
	// MayNot lists module packages Package must never depend on.
	MayNot []string
	// OnlyBy, unless Anyone, lists the only module packages that may import Package directly.
	OnlyBy []string
	// Anyone marks a package every other may depend on.
	Anyone bool
}

// Graph maps a module package to the module packages it imports.
type Graph map[string]Imports

// Imports are a package's module imports: Direct as written in its files, Deps with
// everything they import in turn.
type Imports struct {
	Direct []string
	Deps   []string
}

// Check returns one sentence per broken rule, sorted; none when g keeps every rule.
func Check(g Graph, rules []Rule) []string {
	var out []string
	for _, r := range rules {
		imp, ok := g[r.Package]
		if !ok {
			out = append(out, fmt.Sprintf("%s: a rule names a package the module does not have", r.Package))
			continue
		}
		for _, d := range imp.Deps {
			switch {
			case slices.Contains(r.MayNot, d):
				out = append(out, fmt.Sprintf("%s imports %s, which it may not", r.Package, d))
			case !r.Any && !slices.Contains(r.May, d):
				out = append(out, fmt.Sprintf("%s imports %s; it may import only %s", r.Package, d, orNothing(r.May)))
			}
		}
		if r.Anyone {
			continue
		}
		for p, other := range g {
			if p != r.Package && slices.Contains(other.Direct, r.Package) && !slices.Contains(r.OnlyBy, p) {
				out = append(out, fmt.Sprintf("%s imports %s; only %s may", p, r.Package, orNothing(r.OnlyBy)))
			}
		}
	}
	slices.Sort(out)
	return out
}

func orNothing(xs []string) string {
	if len(xs) == 0 {
		return "nothing of the module"
	}
	return strings.Join(xs, ", ")
}

// Parse reads the boundary table of an architecture document: the markdown table whose
// header row starts with "| package | may import |". Its columns are the package, what it may import
// ("nothing", "anything", or package names), what it may not import, and who may import it
// ("anyone", "nobody", or package names). Package names are written in backquotes.
func Parse(r io.Reader) ([]Rule, error) {
	var rules []Rule
	in := false
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case strings.HasPrefix(line, "| package | may import |"):
			in = true
			continue
		case !in:
			continue
		case !strings.HasPrefix(line, "|"):
			in = false
			continue
		case strings.HasPrefix(line, "|--") || strings.HasPrefix(line, "| --"):
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 4 {
			return nil, fmt.Errorf("boundary table: %q: want 4 columns", line)
		}
		pkg := names(cells[0])
		if len(pkg) != 1 {
			return nil, fmt.Errorf("boundary table: %q: want one package in the first column", line)
		}
		rules = append(rules, Rule{Package: pkg[0], May: names(cells[1]), Any: strings.Contains(cells[1], "anything"),
			MayNot: names(cells[2]), OnlyBy: names(cells[3]), Anyone: strings.Contains(cells[3], "anyone")})
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(rules) == 0 {
		return nil, fmt.Errorf("no boundary table (a table whose header starts with %q)", "| package | may import |")
	}
	return rules, nil
}

// names are the backquoted words of a table cell.
func names(cell string) []string {
	var out []string
	parts := strings.Split(cell, "`")
	for i := 1; i < len(parts); i += 2 {
		out = append(out, parts[i])
	}
	return out
}
