package main

import (
	"context"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fencebench/fencebench/internal/mutate"
)

// The variants' stage (--variants). The protocol carries its deliberately broken variants as
// switches in its own code (`if f.o.Variant == RecreateOn404 {`, `sweep && f.o.Variant !=
// NoSurvivorCheck`). A mutant of such a switch, or of the code only a broken variant runs,
// often leaves the correct protocol as it was: the exploration of the correct protocol cannot
// tell it apart, yet it changes what the broken variant does. The bench has an exploration
// that can: the variant's own, which fails on the unmutated code. When it passes on the
// mutant, the mutant took away a bug the bench must catch, and the exploration noticed: the
// mutant is killed-by-variant, an exploration kill (no package test ran).
//
// A mutant meets the explorations of the variants named where it sits: on the statement it
// changes (the condition only, for an if, a switch or a loop), in the condition of every if
// whose branch holds it, and in the case list of every case clause that holds it. A variant
// is usable when its unmutated exploration fails within half the exploration's budget (the
// schedules of --explore), so a mutant whose exploration of it passes the whole budget has
// changed it, not met the luck of one seed.

// variantKill is the status of a mutant the exploration of a broken variant noticed.
const variantKill = "killed-by-variant"

// variantSet is what the stage knows: the variants declared in the variants file, by the
// name of their constant, and those whose unmutated exploration fails (usable).
type variantSet struct {
	byIdent map[string]string   // constant name -> variant name
	usable  map[string]bool     // variant name -> its unmutated exploration fails in time
	of      map[string][]string // mutant id -> the variants named where it sits
	// files caches the parsed mutated files.
	files map[string]*ast.File
	fset  *token.FileSet
}

// readVariants parses the Go file path and returns the string constants declared with the
// type named typ, by constant name, leaving out the value skip (the exploration's own
// variant).
func readVariants(path, typ, skip string) (map[string]string, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			vs := s.(*ast.ValueSpec)
			id, ok := vs.Type.(*ast.Ident)
			if !ok || id.Name != typ || len(vs.Values) != len(vs.Names) {
				continue
			}
			for i, n := range vs.Names {
				lit, ok := vs.Values[i].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					continue
				}
				v, err := strconv.Unquote(lit.Value)
				if err != nil || v == skip {
					continue
				}
				out[n.Name] = v
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%s declares no string constant of type %s", path, typ)
	}
	return out, nil
}

// variantsOf returns the variants named where m sits, sorted.
func (vs *variantSet) variantsOf(moduleDir string, m mutate.Mutant) ([]string, error) {
	f, ok := vs.files[m.File]
	if !ok {
		var err error
		f, err = parser.ParseFile(vs.fset, filepath.Join(moduleDir, filepath.FromSlash(m.File)), nil, parser.SkipObjectResolution)
		if err != nil {
			return nil, err
		}
		vs.files[m.File] = f
	}
	tf := vs.fset.File(f.Pos())
	if m.Line < 1 || m.Line > tf.LineCount() {
		return nil, fmt.Errorf("%s: no line %d", m.File, m.Line)
	}
	pos := tf.LineStart(m.Line) + token.Pos(m.Col-1)
	found := map[string]bool{}
	name := func(n ast.Node) {
		if n == nil {
			return
		}
		ast.Inspect(n, func(x ast.Node) bool {
			if id, ok := x.(*ast.Ident); ok {
				if v, ok := vs.byIdent[id.Name]; ok {
					found[v] = true
				}
			}
			return true
		})
	}
	in := func(n ast.Node) bool { return n != nil && n.Pos() <= pos && pos < n.End() }
	innermost := true // the first statement met, walking outward from the mutant
	var path []ast.Node
	ast.Inspect(f, func(x ast.Node) bool {
		if x == nil || !in(x) {
			return x == nil
		}
		path = append(path, x)
		return true
	})
	for i := len(path) - 1; i >= 0; i-- {
		switch s := path[i].(type) {
		case *ast.IfStmt:
			if innermost && (in(s.Cond) || in(s.Init)) {
				name(s.Init)
				name(s.Cond)
			} else if in(s.Body) || in(s.Else) {
				name(s.Cond)
			}
			innermost = false
		case *ast.CaseClause:
			if innermost {
				name(s)
			} else {
				for _, e := range s.List {
					name(e)
				}
			}
			innermost = false
		case *ast.SwitchStmt:
			if innermost {
				name(s.Init)
				name(s.Tag)
				if s.Tag == nil || in(s.Body) {
					// A swapped or dropped case names its clauses' lists.
					for _, c := range s.Body.List {
						for _, e := range c.(*ast.CaseClause).List {
							name(e)
						}
					}
				}
			}
			innermost = false
		case *ast.ForStmt:
			if innermost {
				name(s.Init)
				name(s.Cond)
				name(s.Post)
			}
			innermost = false
		case *ast.RangeStmt, *ast.BlockStmt, *ast.TypeSwitchStmt, *ast.SelectStmt, *ast.CommClause, *ast.LabeledStmt:
			// Containers: the statement inside them is what the mutant changes.
		case ast.Stmt:
			if innermost {
				name(s)
			}
			innermost = false
		}
	}
	out := make([]string, 0, len(found))
	for v := range found {
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

// schedulesRun reads "N schedules of" from an exploration's output: how many it ran.
var schedulesRun = regexp.MustCompile(`(?m)^(\d+) schedules? of `)

// budgetOf is the --schedules value of an exploration's arguments, 0 when absent.
func budgetOf(args []string) int {
	for i, a := range args {
		v, ok := strings.CutPrefix(a, "--schedules=")
		if !ok && (a == "--schedules" || a == "-schedules") && i+1 < len(args) {
			v, ok = args[i+1], true
		}
		if ok {
			n, _ := strconv.Atoi(v)
			return n
		}
	}
	return 0
}

// prepareVariants reads the variants file and explores each variant some mutant is named
// under with no mutant active (bin, n 0), keeping those that fail within half the budget.
func (d *driver) prepareVariants(ctx context.Context, work, bin string, ms []mutate.Mutant) error {
	byIdent, err := readVariants(filepath.Join(d.dir, filepath.FromSlash(d.c.variants)), "Variant", d.c.ownVariant)
	if err != nil {
		return fmt.Errorf("--variants: %v", err)
	}
	vs := &variantSet{byIdent: byIdent, usable: map[string]bool{}, of: map[string][]string{}, files: map[string]*ast.File{}, fset: token.NewFileSet()}
	named := map[string]bool{}
	for _, m := range ms {
		vv, err := vs.variantsOf(d.dir, m)
		if err != nil {
			return err
		}
		vs.of[m.ID] = vv
		for _, v := range vv {
			named[v] = true
		}
	}
	budget := budgetOf(d.c.explore)
	var names []string
	for v := range named {
		names = append(names, v)
	}
	slices.Sort(names)
	var left []string
	for _, v := range names {
		code, timeout, out, err := d.exploreWith(ctx, work, bin, 0, d.c.timeout, d.variantArgs(v))
		if err != nil {
			return fmt.Errorf("the unmutated exploration of variant %s did not run: %v", v, err)
		}
		ran := 0
		if m := schedulesRun.FindStringSubmatch(out); m != nil {
			ran, _ = strconv.Atoi(m[1])
		}
		if timeout || code != 1 || budget > 0 && (ran == 0 || 2*ran > budget) {
			left = append(left, fmt.Sprintf("%s (exit %d, %d schedules)", v, code, ran))
			continue
		}
		vs.usable[v] = true
	}
	d.variants = vs
	d.logf("the variants' stage: %d of %d variants named at mutants fail unmutated within half the budget", len(vs.usable), len(names))
	if len(left) > 0 {
		d.logf("variants left out of the stage (their unmutated exploration does not fail in time): %s", strings.Join(left, ", "))
	}
	return nil
}

// variantArgs are the exploration's arguments with variant v chosen (a later flag wins).
func (d *driver) variantArgs(v string) []string {
	return append(slices.Clone(d.c.explore), d.c.variantFlag, v)
}

// exploreVariants meets a mutant the correct exploration did not kill with the explorations
// of the usable variants named where it sits; the first that no longer fails kills it.
func (d *driver) exploreVariants(ctx context.Context, work, bin string, n int, r *result) {
	for _, v := range d.variants.of[r.ID] {
		if !d.variants.usable[v] {
			continue
		}
		r.Variants = append(r.Variants, v)
		code, timeout, out, err := d.exploreWith(ctx, work, bin, n, d.exploreTimeout, d.variantArgs(v))
		switch {
		case err != nil:
			r.Status, r.Detail = errStatus, err.Error()
			return
		case timeout:
			r.Status, r.Detail = variantKill, fmt.Sprintf("the exploration of variant %s outlived %s (unmutated, it fails)", v, d.exploreTimeout)
			return
		case code == 0:
			r.Status, r.Detail = variantKill, fmt.Sprintf("the exploration of variant %s passes (unmutated, it fails)", v)
			return
		case code != 1:
			r.Status, r.Detail = variantKill, fmt.Sprintf("the exploration of variant %s exits %d (unmutated, it fails with 1)\n%s", v, code, out)
			return
		}
	}
}
