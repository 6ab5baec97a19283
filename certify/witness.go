package certify

import (
	"fmt"
	"strings"

	"github.com/fencebench/fencebench/checker"
)

// witnessLines renders a witness for the text report: a heading, the operations' table and
// the reason, one line each.
func witnessLines(w *checker.Witness) []string {
	head := fmt.Sprintf("witness: %d of the %d operations on %s, not linearizable on their own", len(w.Ops), w.Of, w.Key)
	if !w.Minimal {
		head += " (shrinking stopped at its time budget)"
	}
	return append([]string{head}, strings.Split(w.Text(), "\n")...)
}
