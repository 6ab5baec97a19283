package mutate

import (
	"bytes"
	"fmt"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Kind names one kind of mutation; it ends a mutant's ID.
type Kind string

// The kinds of mutation, described in the package documentation.
const (
	FlipCmp        Kind = "flip-cmp"
	AndOr          Kind = "and-or"
	NegateCond     Kind = "negate-cond"
	NegateErrorsIs Kind = "negate-errors-is"
	DropCall       Kind = "drop-call"
	ReturnErr      Kind = "return-err"
	ReturnNil      Kind = "return-nil"
	SwapCase       Kind = "swap-case"
	DropCase       Kind = "drop-case"
)

// Kinds lists every kind of mutation.
var Kinds = []Kind{FlipCmp, AndOr, NegateCond, NegateErrorsIs, DropCall, ReturnErr, ReturnNil, SwapCase, DropCase}

// Mutant is one changed copy of one file.
type Mutant struct {
	// ID is File:Line:Col:Kind.
	ID   string
	File string // slash-separated, relative to the module directory given to Packages
	Line int
	Col  int
	Kind Kind
	// Original and Mutated are the line of the mutation before and after, trimmed. A change
	// spanning lines (a case body) shows the case line and what replaced its body; a removed
	// line (a dropped call) is an empty Mutated.
	Original string
	Mutated  string
	// Source is the whole mutated file.
	Source []byte
}

// edit replaces src[off:end] with text.
type edit struct {
	off, end int
	text     string
}

// point is a mutation found in a file before it is applied.
type point struct {
	pos   token.Pos
	kind  Kind
	edits []edit
	// note, when set, is what the mutated line shows after the original line's text, for
	// changes that span lines.
	note string
}

// File returns the mutants of one Go source file, name being how IDs name it.
func File(name string, src []byte) ([]Mutant, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, name, src, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return nil, err
	}
	pts := collect(f, fset, src)
	tf := fset.File(f.Pos())
	slices.SortStableFunc(pts, func(a, b point) int {
		if a.pos != b.pos {
			return int(a.pos - b.pos)
		}
		return strings.Compare(string(a.kind), string(b.kind))
	})
	var out []Mutant
	seen := map[string]bool{string(src): true}
	ids := map[string]int{}
	for _, p := range pts {
		mut := apply(src, p.edits)
		if seen[string(mut)] {
			continue
		}
		seen[string(mut)] = true
		if _, err := parser.ParseFile(token.NewFileSet(), name, mut, parser.SkipObjectResolution); err != nil {
			return nil, fmt.Errorf("mutate: %s mutant at %s does not parse: %v", p.kind, fset.Position(p.pos), err)
		}
		pos := tf.Position(p.pos)
		id := fmt.Sprintf("%s:%d:%d:%s", name, pos.Line, pos.Column, p.kind)
		if ids[id]++; ids[id] > 1 {
			id = fmt.Sprintf("%s:%d", id, ids[id])
		}
		orig, mline := lineAt(src, pos.Offset), lineAt(mut, pos.Offset)
		if p.note != "" {
			mline = orig + " " + p.note
		}
		out = append(out, Mutant{ID: id, File: name, Line: pos.Line, Col: pos.Column, Kind: p.kind,
			Original: orig, Mutated: mline, Source: mut})
	}
	return out, nil
}

// apply returns a copy of src with the edits, which do not overlap, made.
func apply(src []byte, edits []edit) []byte {
	es := slices.Clone(edits)
	slices.SortFunc(es, func(a, b edit) int { return a.off - b.off })
	var b bytes.Buffer
	last := 0
	for _, e := range es {
		b.Write(src[last:e.off])
		b.WriteString(e.text)
		last = e.end
	}
	b.Write(src[last:])
	return b.Bytes()
}

// lineAt is the trimmed line of src holding offset off.
func lineAt(src []byte, off int) string {
	start := bytes.LastIndexByte(src[:off], '\n') + 1
	end := bytes.IndexByte(src[off:], '\n')
	if end < 0 {
		end = len(src)
	} else {
		end += off
	}
	return strings.TrimSpace(string(src[start:end]))
}

// Packages returns the mutants of the non-test Go files, built on this platform, of the
// package directories pkgs (relative to moduleDir), in the order of pkgs, then file name.
func Packages(moduleDir string, pkgs []string) ([]Mutant, error) {
	var out []Mutant
	for _, p := range pkgs {
		dir := filepath.Join(moduleDir, filepath.FromSlash(p))
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("mutate: package %s: %w", p, err)
		}
		for _, e := range ents {
			n := e.Name()
			if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
				continue
			}
			if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
				continue
			}
			src, err := os.ReadFile(filepath.Join(dir, n))
			if err != nil {
				return nil, err
			}
			ms, err := File(pathJoin(p, n), src)
			if err != nil {
				return nil, err
			}
			out = append(out, ms...)
		}
	}
	return out, nil
}

func pathJoin(dir, name string) string {
	dir = strings.Trim(filepath.ToSlash(dir), "/")
	if dir == "" || dir == "." {
		return name
	}
	return strings.TrimPrefix(dir, "./") + "/" + name
}
