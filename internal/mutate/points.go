package mutate

import (
	"go/ast"
	"go/token"
	"strings"
)

// collector gathers the mutation points of one file.
type collector struct {
	tf  *token.File
	src []byte
	pts []point
	// Per function: the scopes in which a variable err is declared, and the names the
	// function defines (:=) from an expression that mentions an error.
	errScopes [][2]token.Pos
	errDefs   map[string]bool
	stack     []ast.Node
	decl      *ast.FuncType // the type of the function declaration being walked
}

func collect(f *ast.File, fset *token.FileSet, src []byte) []point {
	c := &collector{tf: fset.File(f.Pos()), src: src}
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || skipped(fd) {
			continue
		}
		c.errScopes, c.errDefs, c.stack, c.decl = nil, map[string]bool{}, nil, fd.Type
		c.params(fd.Type, fd.Body)
		ast.Inspect(fd.Body, c.visit)
	}
	return c.pts
}

// skipped reports whether a function's doc comment has a line "mutate:skip".
func skipped(fd *ast.FuncDecl) bool {
	if fd.Doc == nil {
		return false
	}
	for _, c := range fd.Doc.List {
		if strings.TrimSpace(strings.TrimPrefix(c.Text, "//")) == "mutate:skip" {
			return true
		}
	}
	return false
}

func (c *collector) off(p token.Pos) int { return c.tf.Offset(p) }

func (c *collector) add(pos token.Pos, k Kind, note string, es ...edit) {
	c.pts = append(c.pts, point{pos: pos, kind: k, edits: es, note: note})
}

// parent is the node enclosing the one being visited.
func (c *collector) parent() ast.Node {
	if len(c.stack) < 2 {
		return nil
	}
	return c.stack[len(c.stack)-2]
}

func (c *collector) visit(n ast.Node) bool {
	if n == nil {
		c.stack = c.stack[:len(c.stack)-1]
		return true
	}
	c.stack = append(c.stack, n)
	switch n := n.(type) {
	case *ast.FuncLit:
		c.params(n.Type, n.Body)
	case *ast.BinaryExpr:
		c.binary(n)
	case *ast.IfStmt:
		c.negate(n.Cond, NegateCond)
	case *ast.ForStmt:
		if n.Cond != nil {
			c.negate(n.Cond, NegateCond)
		}
	case *ast.CallExpr:
		if isErrorsCall(n, "Is") {
			if u, ok := c.parent().(*ast.UnaryExpr); ok && u.Op == token.NOT {
				c.add(n.Pos(), NegateErrorsIs, "", edit{c.off(u.Pos()), c.off(n.Pos()), ""})
			} else {
				c.add(n.Pos(), NegateErrorsIs, "", edit{c.off(n.Pos()), c.off(n.Pos()), "!"})
			}
		}
	case *ast.ExprStmt:
		if call, ok := ast.Unparen(n.X).(*ast.CallExpr); ok && !keepCall(call) {
			c.add(n.Pos(), DropCall, "", edit{c.off(n.Pos()), c.off(n.End()), ""})
		}
	case *ast.AssignStmt:
		c.assign(n)
	case *ast.DeclStmt:
		c.declare(n)
	case *ast.RangeStmt:
		if n.Tok == token.DEFINE && (isName(n.Key, "err") || isName(n.Value, "err")) {
			c.errScopes = append(c.errScopes, [2]token.Pos{n.Body.Pos(), n.Body.End()})
		}
	case *ast.ReturnStmt:
		c.ret(n)
	case *ast.SwitchStmt:
		c.switchCases(n)
	}
	return true
}

func (c *collector) binary(n *ast.BinaryExpr) {
	flips := map[token.Token]token.Token{
		token.EQL: token.NEQ, token.NEQ: token.EQL, token.LSS: token.LEQ, token.LEQ: token.LSS,
		token.GTR: token.GEQ, token.GEQ: token.GTR, token.LAND: token.LOR, token.LOR: token.LAND,
	}
	to, ok := flips[n.Op]
	if !ok {
		return
	}
	k := FlipCmp
	if n.Op == token.LAND || n.Op == token.LOR {
		k = AndOr
	}
	o := c.off(n.OpPos)
	c.add(n.OpPos, k, "", edit{o, o + len(n.Op.String()), to.String()})
}

// negate adds the negation of e: a leading ! removed, or one added.
func (c *collector) negate(e ast.Expr, k Kind) {
	p, end := c.off(e.Pos()), c.off(e.End())
	switch x := e.(type) {
	case *ast.UnaryExpr:
		if x.Op == token.NOT {
			c.add(e.Pos(), k, "", edit{p, c.off(x.X.Pos()), ""})
			return
		}
	case *ast.Ident, *ast.CallExpr, *ast.SelectorExpr, *ast.ParenExpr, *ast.IndexExpr:
		c.add(e.Pos(), k, "", edit{p, p, "!"})
		return
	}
	c.add(e.Pos(), k, "", edit{p, p, "!("}, edit{end, end, ")"})
}

// isErrorsCall reports whether call is errors.<name>(...).
func isErrorsCall(call *ast.CallExpr, name string) bool {
	sel, ok := call.Fun.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != name {
		return false
	}
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "errors"
}

func isName(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// keepCall reports whether a call statement is never dropped (see the package doc).
func keepCall(call *ast.CallExpr) bool {
	fun := ast.Unparen(call.Fun)
	switch f := fun.(type) {
	case *ast.IndexExpr:
		fun = f.X
	case *ast.IndexListExpr:
		fun = f.X
	}
	var name string
	switch f := fun.(type) {
	case *ast.Ident:
		name = f.Name
	case *ast.SelectorExpr:
		name = f.Sel.Name
		if isName(f.X, "log") || isName(f.X, "slog") {
			return true
		}
	}
	lower := strings.ToLower(name)
	for _, p := range []string{"record", "log", "emit"} {
		if strings.HasPrefix(lower, p) {
			return true
		}
	}
	for _, p := range []string{"Debug", "Warn", "Info", "Error"} {
		if strings.HasPrefix(name, p) {
			return true
		}
	}
	switch name {
	case "panic", "End", "Lock", "Unlock", "RLock", "RUnlock", "Add", "Done", "Wait":
		return true
	}
	return false
}
