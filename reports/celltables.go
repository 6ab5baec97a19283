package reports

import (
	"slices"
	"strings"

	"github.com/fencebench/fencebench/history"
)

// opTable counts requests per S3 operation and outcome.
type opTable struct {
	Columns []string `json:"columns"`
	Rows    []opRow  `json:"rows,omitempty"`
	Total   opRow    `json:"total"`
}

type opRow struct {
	Op     string `json:"op"`
	Counts []int  `json:"counts"`
	Sum    int    `json:"sum"`
}

// Outcome columns of the request tables.
const (
	col2xx       = "2xx"
	col412       = "412"
	col404       = "404"
	col409       = "409"
	col5xx       = "5xx"
	colAmbiguous = "ambiguous"
	colInjected  = "injected"
	colOther     = "other"
)

var (
	baseColumns = []string{col2xx, col412, col404, col409, col5xx, colAmbiguous}
	opOrder     = []string{"get", "put", "put-if-absent", "put-if-match", "delete", "delete-many", "list", "head"}
)

func statusColumn(status int) string {
	switch {
	case status >= 200 && status < 300:
		return col2xx
	case status == 412:
		return col412
	case status == 404:
		return col404
	case status == 409:
		return col409
	case status >= 500:
		return col5xx
	}
	return colOther
}

// eventOpTable counts store calls as the client saw them, from store.* events: by HTTP status
// when one arrived, else ambiguous (no answer) or other.
func eventOpTable(ev []history.Event) opTable {
	t := newOpCounter()
	for i := range ev {
		e := &ev[i]
		op, ok := strings.CutPrefix(string(e.Kind), "store.")
		if !ok {
			continue
		}
		col := colOther
		switch {
		case e.Status != 0:
			col = statusColumn(e.Status)
		case e.Outcome == history.OK:
			col = col2xx
		case e.Outcome == history.Ambiguous:
			col = colAmbiguous
		}
		t.add(op, col)
	}
	return t.table()
}

// ledgerOpTable counts requests as the fault proxy saw them: by the store's status, ambiguous
// when the client never received the answer, injected when the store never saw the request.
func ledgerOpTable(ledger []history.LedgerEntry) opTable {
	t := newOpCounter()
	for i := range ledger {
		l := &ledger[i]
		col := statusColumn(l.Status)
		switch {
		case !l.Forwarded:
			col = colInjected
		case !l.Delivered:
			col = colAmbiguous
		}
		t.add(ledgerOp(l), col)
	}
	return t.table()
}

type opCounter struct {
	counts map[string]map[string]int
	cols   map[string]bool
}

func newOpCounter() *opCounter {
	return &opCounter{counts: map[string]map[string]int{}, cols: map[string]bool{}}
}

func (c *opCounter) add(op, col string) {
	m := c.counts[op]
	if m == nil {
		m = map[string]int{}
		c.counts[op] = m
	}
	m[col]++
	c.cols[col] = true
}

func (c *opCounter) table() opTable {
	t := opTable{Columns: slices.Clone(baseColumns)}
	for _, extra := range []string{colInjected, colOther} {
		if c.cols[extra] {
			t.Columns = append(t.Columns, extra)
		}
	}
	if len(c.counts) == 0 {
		return opTable{}
	}
	ops := slices.Clone(opOrder)
	var extra []string
	for op := range c.counts {
		if !slices.Contains(ops, op) {
			extra = append(extra, op)
		}
	}
	slices.Sort(extra)
	t.Total = opRow{Op: "total", Counts: make([]int, len(t.Columns))}
	for _, op := range append(ops, extra...) {
		m := c.counts[op]
		if m == nil {
			continue
		}
		r := opRow{Op: op, Counts: make([]int, len(t.Columns))}
		for i, col := range t.Columns {
			r.Counts[i] = m[col]
			r.Sum += m[col]
			t.Total.Counts[i] += m[col]
		}
		t.Total.Sum += r.Sum
		t.Rows = append(t.Rows, r)
	}
	return t
}
