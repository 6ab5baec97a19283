package deps

import (
	"fmt"
	"go/ast"
	"go/token"
	"path"
	"slices"
	"strconv"
	"strings"
)

// Vocabulary is a set of names spelled once: the string constants of one named type, declared
// in one package of the module. Every other spelling of one of its names as a string literal is
// what [Literals] finds.
type Vocabulary struct {
	// What the names are, for messages ("protocol variant").
	What string
	// Dir is the declaring package's directory inside the module ("fence").
	Dir string
	// Type is the name of the names' type in that package ("Variant").
	Type string
}

// Name is one name of a vocabulary: the constant that spells it and where.
type Name struct {
	Vocabulary Vocabulary
	Const      string
	Value      string
	Pos        token.Position
}

// Source is one parsed Go file of the module; Path is its slash path inside the module
// ("writers/bus.go").
type Source struct {
	Path string
	File *ast.File
}

func (s Source) dir() string { return path.Dir(s.Path) }

// Names collects the names of every vocabulary from the constant declarations of its type in
// its package, in declaration order. A constant of the type whose value is not a string
// literal, a name spelled twice, and a vocabulary without a name are problems. The empty
// string (a zero value such as history.AbortNone) is no name: it is never looked for.
func Names(fset *token.FileSet, srcs []Source, vocabs []Vocabulary) ([]Name, []string) {
	var out []Name
	var problems []string
	for _, v := range vocabs {
		seen := map[string]Name{}
		for _, s := range srcs {
			if s.dir() != v.Dir {
				continue
			}
			forConstSpecs(s.File, func(sp *ast.ValueSpec) {
				if id, ok := sp.Type.(*ast.Ident); !ok || id.Name != v.Type {
					return
				}
				for i, id := range sp.Names {
					val, ok := stringValue(sp, i)
					pos := fset.Position(id.Pos())
					if !ok {
						problems = append(problems, fmt.Sprintf("%s: %s %s is not a string literal", pos, v.What, id.Name))
						continue
					}
					if val == "" {
						continue
					}
					n := Name{Vocabulary: v, Const: id.Name, Value: val, Pos: pos}
					if prev, dup := seen[val]; dup {
						problems = append(problems, fmt.Sprintf("%s: %s %q is spelled by %s and by %s (%s)", pos, v.What, val, prev.Const, id.Name, prev.Pos))
						continue
					}
					seen[val] = n
					out = append(out, n)
				}
			})
		}
		if len(seen) == 0 {
			problems = append(problems, fmt.Sprintf("%s: no constant of type %s declares a %s name", v.Dir, v.Type, v.What))
		}
	}
	return out, problems
}

// Mirror is a name spelled a second time on purpose: the constant Const of the package in Dir,
// for the packages that may not import the vocabulary's. A test must hold its value equal to
// the name it mirrors.
type Mirror struct {
	Dir, Const string
}

// Literal is a string literal that spells a vocabulary's name outside its definition.
type Literal struct {
	Pos  token.Position
	Path string
	Name Name
}

func (l Literal) String() string {
	return fmt.Sprintf("%s: %q spells the %s %s.%s (%s); use the constant", l.Pos, l.Name.Value,
		l.Name.Vocabulary.What, path.Base(l.Name.Vocabulary.Dir), l.Name.Const, l.Name.Pos)
}

// TypeName names a named type by its package's directory inside the module and its name.
type TypeName struct {
	Dir, Type string
}

// Literals returns, in source order, every string literal of srcs that spells one of names,
// except the names' own definitions (the constants Names read), the mirrors, and the values of
// the constants of the homonyms: other vocabularies' types, whose words may be spelled alike
// (history.CAS, the event kind "cas", beside the signal history.SigCAS). A constant declared
// with a vocabulary's own type outside its package, or with any other type, is found. module
// is the module path, which resolves the srcs' imports to module directories.
func Literals(fset *token.FileSet, module string, srcs []Source, names []Name, mirrors []Mirror, homonyms []TypeName) []Literal {
	byValue := map[string]Name{}
	for _, n := range names {
		byValue[n.Value] = n
	}
	var out []Literal
	for _, s := range srcs {
		allowed := map[*ast.BasicLit]bool{}
		imports := importDirs(module, s.File)
		forConstSpecs(s.File, func(sp *ast.ValueSpec) {
			for i, id := range sp.Names {
				if slices.Contains(mirrors, Mirror{Dir: s.dir(), Const: id.Name}) {
					allowLiterals(allowed, sp, i)
				}
			}
			if sp.Type == nil {
				return // untyped: a spelling like any other
			}
			dir, typ, ok := typeOf(sp.Type, s.dir(), imports)
			if !ok {
				return
			}
			own := isVocabularyType(names, dir, typ) && dir == s.dir()
			if own || slices.Contains(homonyms, TypeName{Dir: dir, Type: typ}) {
				for i := range sp.Names {
					allowLiterals(allowed, sp, i)
				}
			}
		})
		ast.Inspect(s.File, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING || allowed[lit] {
				return true
			}
			v, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			if name, ok := byValue[v]; ok {
				out = append(out, Literal{Pos: fset.Position(lit.Pos()), Path: s.Path, Name: name})
			}
			return true
		})
	}
	return out
}

// Emitted returns the names of v's constants that the calls to fn in srcs pass as their first
// argument, each with the first call that does, and a problem for every call whose argument it
// cannot trace to a constant: the argument must be the constant itself (history.SigClaimed),
// or a variable every assignment of which in the calling function is one. The calls are those
// with as many arguments as the declaration of fn whose first parameter is of type v.Type
// (a method of any receiver); another function of the same name and arity is taken for it.
func Emitted(fset *token.FileSet, module string, srcs []Source, v Vocabulary, fn string) (map[string]token.Position, []string) {
	arity := -1
	for _, s := range srcs {
		imports := importDirs(module, s.File)
		for _, d := range s.File.Decls {
			f, ok := d.(*ast.FuncDecl)
			if !ok || f.Name.Name != fn || len(f.Type.Params.List) == 0 {
				continue
			}
			if dir, typ, ok := typeOf(f.Type.Params.List[0].Type, s.dir(), imports); ok && dir == v.Dir && typ == v.Type {
				arity = 0
				for _, p := range f.Type.Params.List {
					arity += max(1, len(p.Names))
				}
			}
		}
	}
	if arity < 0 {
		return nil, []string{fmt.Sprintf("no function %s takes a %s.%s first", fn, v.Dir, v.Type)}
	}
	out := map[string]token.Position{}
	var problems []string
	for _, s := range srcs {
		imports := importDirs(module, s.File)
		constOf := func(e ast.Expr) (string, bool) {
			sel, ok := e.(*ast.SelectorExpr)
			if !ok {
				return "", false
			}
			x, ok := sel.X.(*ast.Ident)
			if !ok || imports[x.Name] != v.Dir {
				return "", false
			}
			return sel.Sel.Name, true
		}
		for _, d := range s.File.Decls {
			f, ok := d.(*ast.FuncDecl)
			if !ok || f.Body == nil {
				continue
			}
			ast.Inspect(f.Body, func(n ast.Node) bool {
				call, ok := n.(*ast.CallExpr)
				if !ok || len(call.Args) != arity || calleeName(call.Fun) != fn {
					return true
				}
				pos := fset.Position(call.Pos())
				arg := call.Args[0]
				consts, ok := []string(nil), false
				if c, isConst := constOf(arg); isConst {
					consts, ok = []string{c}, true
				} else if id, isIdent := arg.(*ast.Ident); isIdent {
					consts, ok = assignedConsts(f.Body, id.Name, constOf)
				}
				if !ok {
					problems = append(problems, fmt.Sprintf("%s: %s passes %s, which is not traceable to a %s constant", pos, fn, exprString(arg), v.Type))
					return true
				}
				for _, c := range consts {
					if _, seen := out[c]; !seen {
						out[c] = pos
					}
				}
				return true
			})
		}
	}
	return out, problems
}

// assignedConsts are the constants every assignment to the variable name in body gives it;
// ok is false when one assigns something else, or none does.
func assignedConsts(body *ast.BlockStmt, name string, constOf func(ast.Expr) (string, bool)) (consts []string, ok bool) {
	ok = true
	ast.Inspect(body, func(n ast.Node) bool {
		var lhs []ast.Expr
		var rhs []ast.Expr
		switch a := n.(type) {
		case *ast.AssignStmt:
			lhs, rhs = a.Lhs, a.Rhs
		case *ast.ValueSpec:
			for _, id := range a.Names {
				lhs = append(lhs, id)
			}
			rhs = a.Values
		default:
			return true
		}
		for i, l := range lhs {
			if id, isIdent := l.(*ast.Ident); !isIdent || id.Name != name {
				continue
			}
			if len(rhs) != len(lhs) {
				if len(rhs) > 0 {
					ok = false
				}
				continue // a declaration without a value: the zero value is never emitted
			}
			c, isConst := constOf(rhs[i])
			if !isConst {
				ok = false
				continue
			}
			consts = append(consts, c)
		}
		return true
	})
	return consts, ok && len(consts) > 0
}

func calleeName(e ast.Expr) string {
	switch f := e.(type) {
	case *ast.Ident:
		return f.Name
	case *ast.SelectorExpr:
		return f.Sel.Name
	}
	return ""
}

func exprString(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.Ident:
		return x.Name
	case *ast.SelectorExpr:
		return exprString(x.X) + "." + x.Sel.Name
	case *ast.CallExpr:
		return exprString(x.Fun) + "(...)"
	case *ast.BasicLit:
		return x.Value
	}
	return fmt.Sprintf("%T", e)
}

// forConstSpecs calls fn for every constant specification of f, at any depth.
func forConstSpecs(f *ast.File, fn func(*ast.ValueSpec)) {
	ast.Inspect(f, func(n ast.Node) bool {
		d, ok := n.(*ast.GenDecl)
		if !ok || d.Tok != token.CONST {
			return true
		}
		for _, sp := range d.Specs {
			fn(sp.(*ast.ValueSpec))
		}
		return false
	})
}

// stringValue is the i-th value of sp when it is a string literal.
func stringValue(sp *ast.ValueSpec, i int) (string, bool) {
	if i >= len(sp.Values) {
		return "", false
	}
	lit, ok := sp.Values[i].(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	v, err := strconv.Unquote(lit.Value)
	return v, err == nil
}

func allowLiterals(allowed map[*ast.BasicLit]bool, sp *ast.ValueSpec, i int) {
	if i < len(sp.Values) {
		if lit, ok := sp.Values[i].(*ast.BasicLit); ok {
			allowed[lit] = true
		}
	}
}

// typeOf names a type expression by its package directory inside the module (or the import
// path outside it) and its name; ok is false for anything but a named type.
func typeOf(e ast.Expr, dir string, imports map[string]string) (pkgDir, name string, ok bool) {
	switch t := e.(type) {
	case *ast.Ident:
		return dir, t.Name, true
	case *ast.SelectorExpr:
		x, isIdent := t.X.(*ast.Ident)
		if !isIdent {
			return "", "", false
		}
		if d, known := imports[x.Name]; known {
			return d, t.Sel.Name, true
		}
		return x.Name, t.Sel.Name, true
	}
	return "", "", false
}

func isVocabularyType(names []Name, dir, typ string) bool {
	return slices.ContainsFunc(names, func(n Name) bool { return n.Vocabulary.Dir == dir && n.Vocabulary.Type == typ })
}

// importDirs maps the names f imports packages under to their directory inside the module, or
// to their import path for packages outside it.
func importDirs(module string, f *ast.File) map[string]string {
	out := map[string]string{}
	for _, im := range f.Imports {
		p, err := strconv.Unquote(im.Path.Value)
		if err != nil {
			continue
		}
		name := path.Base(p)
		if im.Name != nil {
			name = im.Name.Name
		}
		if rest, ok := strings.CutPrefix(p, module+"/"); ok {
			p = rest
		}
		out[name] = p
	}
	return out
}
