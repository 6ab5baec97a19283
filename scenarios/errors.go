package scenarios

import (
	"fmt"
	"strings"
)

// Error is one problem in a scenario file, located precisely.
type Error struct {
	File  string
	Line  int
	Col   int
	Field string // dotted path, e.g. steps[2].partition.mode
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d:%d", e.Line, e.Col)
	}
	b.WriteString(": ")
	if e.Field != "" {
		b.WriteString(e.Field + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one or more files. Loading reports all of them at once so
// a user fixes a file in one pass.
type Errors []*Error

func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
