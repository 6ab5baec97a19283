package mutate

import (
	"go/ast"
	"go/token"
	"strings"
)

// params records a function's parameters and named results called err as in scope in its
// body.
func (c *collector) params(ft *ast.FuncType, body *ast.BlockStmt) {
	if body == nil {
		return
	}
	for _, fl := range []*ast.FieldList{ft.Params, ft.Results} {
		if fl == nil {
			continue
		}
		for _, f := range fl.List {
			for _, n := range f.Names {
				if n.Name == "err" {
					c.errScopes = append(c.errScopes, [2]token.Pos{body.Pos(), body.End()})
				}
			}
		}
	}
}

// assign records err declared by :=, in scope from the statement's end to the end of what
// encloses it, and the names defined from an expression that mentions an error.
func (c *collector) assign(n *ast.AssignStmt) {
	if n.Tok != token.DEFINE {
		return
	}
	fromErr := false
	for _, r := range n.Rhs {
		fromErr = fromErr || mentionsErr(r)
	}
	for _, l := range n.Lhs {
		if isName(l, "err") {
			c.declared(n.End())
		}
		if id, ok := l.(*ast.Ident); ok && fromErr {
			c.errDefs[id.Name] = true
		}
	}
}

func (c *collector) declare(n *ast.DeclStmt) {
	g, ok := n.Decl.(*ast.GenDecl)
	if !ok || g.Tok != token.VAR {
		return
	}
	for _, s := range g.Specs {
		for _, id := range s.(*ast.ValueSpec).Names {
			if id.Name == "err" {
				c.declared(n.End())
			}
		}
	}
}

// declared records err in scope from from to the end of the node enclosing the statement.
func (c *collector) declared(from token.Pos) {
	if p := c.parent(); p != nil {
		c.errScopes = append(c.errScopes, [2]token.Pos{from, p.End()})
	}
}

func (c *collector) errInScope(at token.Pos) bool {
	for _, s := range c.errScopes {
		if s[0] <= at && at < s[1] {
			return true
		}
	}
	return false
}

// returnsError reports whether the innermost function around the visited node has error as
// its last result.
func (c *collector) returnsError() bool {
	var ft *ast.FuncType
	for i := len(c.stack) - 1; i >= 0 && ft == nil; i-- {
		if fl, ok := c.stack[i].(*ast.FuncLit); ok {
			ft = fl.Type
		}
	}
	if ft == nil {
		ft = c.decl
	}
	return lastIsError(ft)
}

func lastIsError(ft *ast.FuncType) bool {
	if ft.Results == nil || len(ft.Results.List) == 0 {
		return false
	}
	return isName(ft.Results.List[len(ft.Results.List)-1].Type, "error")
}

func (c *collector) ret(n *ast.ReturnStmt) {
	if len(n.Results) == 0 || !c.returnsError() {
		return
	}
	last := n.Results[len(n.Results)-1]
	p, end := c.off(last.Pos()), c.off(last.End())
	switch {
	case isName(last, "nil") && c.errInScope(n.Pos()):
		c.add(last.Pos(), ReturnErr, "", edit{p, end, "err"})
	case isName(last, "err"):
		c.add(last.Pos(), ReturnNil, "", edit{p, end, "nil"})
	}
}

// mentionsErr reports whether an expression mentions an error (see the package doc).
func mentionsErr(e ast.Expr) bool {
	found := false
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.Ident:
			s := n.Name
			found = found || strings.HasSuffix(s, "err") || strings.HasSuffix(s, "Err") || strings.HasPrefix(s, "Err")
		case *ast.CallExpr:
			found = found || isErrorsCall(n, "Is") || isErrorsCall(n, "As")
		}
		return !found
	})
	return found
}

func (c *collector) overErrors(n *ast.SwitchStmt) bool {
	if n.Tag != nil && (mentionsErr(n.Tag) || isIdentIn(n.Tag, c.errDefs)) {
		return true
	}
	for _, s := range n.Body.List {
		for _, e := range s.(*ast.CaseClause).List {
			if mentionsErr(e) {
				return true
			}
		}
	}
	return false
}

func isIdentIn(e ast.Expr, names map[string]bool) bool {
	id, ok := e.(*ast.Ident)
	return ok && names[id.Name]
}

// switchCases adds, for each case of a switch over errors, its body dropped and its body
// swapped with the next case's.
func (c *collector) switchCases(n *ast.SwitchStmt) {
	if !c.overErrors(n) {
		return
	}
	cl := n.Body.List
	for i, s := range cl {
		cc := s.(*ast.CaseClause)
		from, to := c.body(cc)
		if len(cc.Body) > 0 {
			c.add(cc.Pos(), DropCase, "(body dropped)", edit{from, to, ""})
		}
		if i+1 == len(cl) {
			continue
		}
		next := cl[i+1].(*ast.CaseClause)
		nfrom, nto := c.body(next)
		if string(c.src[from:to]) == string(c.src[nfrom:nto]) {
			continue
		}
		note := "(body of `" + lineAt(c.src, c.off(next.Pos())) + "`)"
		c.add(cc.Pos(), SwapCase, note, edit{from, to, string(c.src[nfrom:nto])}, edit{nfrom, nto, string(c.src[from:to])})
	}
}

// body is the byte range of a case clause's body: after its colon to the end of its last
// statement.
func (c *collector) body(cc *ast.CaseClause) (int, int) {
	from := c.off(cc.Colon) + 1
	if len(cc.Body) == 0 {
		return from, from
	}
	return from, c.off(cc.Body[len(cc.Body)-1].End())
}
