package reports

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

// faultView is the fault attestation: what was declared, what fired at L7 (from the ledger)
// and which fault windows the history records.
type faultView struct {
	Declared []declaredRow `json:"declared,omitempty"`
	Rules    []ruleRow     `json:"rules,omitempty"`
	Windows  []windowRow   `json:"windows,omitempty"`
}

type declaredRow struct {
	Name  string `json:"name"`
	Layer string `json:"layer"`
	Fired badge  `json:"fired"`
	Count int    `json:"count"`
	First string `json:"first,omitempty"`
}

type ruleRow struct {
	Rule    string        `json:"rule"`
	Actions string        `json:"actions"`
	Count   int           `json:"count"`
	Writers string        `json:"writers"`
	Ops     string        `json:"ops"`
	First   string        `json:"first"`
	Last    string        `json:"last"`
	Effects []effectCount `json:"effects"`
	Entries []ledgerRow   `json:"entries"`
	More    int           `json:"more,omitempty"`
}

type effectCount struct {
	Effect string `json:"effect"`
	Count  int    `json:"count"`
}

type windowRow struct {
	Name   string `json:"name"`
	Writer string `json:"writer"`
	Start  string `json:"start"`
	End    string `json:"end"`
	Length string `json:"length"`
	Open   bool   `json:"open,omitempty"`
}

func faultRows(att []checker.FaultAttestation, ev []history.Event, ledger []history.LedgerEntry) faultView {
	var v faultView
	for _, a := range att {
		b := firedBadge(a)
		r := declaredRow{Name: a.Name, Layer: a.Layer, Fired: b, Count: a.Count}
		if a.Fired {
			r.First = fmtAt(a.First)
		}
		v.Declared = append(v.Declared, r)
	}

	type agg struct {
		row     ruleRow
		actions []string
		writers []string
		ops     map[string]int
		effects map[string]int
		first   time.Duration
		last    time.Duration
	}
	byRule := map[string]*agg{}
	var order []string
	for i := range ledger {
		l := &ledger[i]
		if l.Rule == "" {
			continue
		}
		a := byRule[l.Rule]
		if a == nil {
			a = &agg{row: ruleRow{Rule: l.Rule}, ops: map[string]int{}, effects: map[string]int{}, first: l.Time}
			byRule[l.Rule] = a
			order = append(order, l.Rule)
		}
		a.row.Count++
		if l.Action != "" && !slices.Contains(a.actions, l.Action) {
			a.actions = append(a.actions, l.Action)
		}
		if !slices.Contains(a.writers, l.Writer) {
			a.writers = append(a.writers, l.Writer)
		}
		a.ops[ledgerOp(l)]++
		a.effects[ledgerEffect(l)]++
		a.first = min(a.first, l.Time)
		a.last = max(a.last, l.Time)
		if len(a.row.Entries) < maxRuleRows {
			a.row.Entries = append(a.row.Entries, toLedgerRow(l))
		} else {
			a.row.More++
		}
	}
	for _, name := range order {
		a := byRule[name]
		a.row.Actions = strings.Join(a.actions, ", ")
		slices.Sort(a.writers)
		a.row.Writers = strings.Join(a.writers, ", ")
		a.row.Ops = countList(a.ops)
		a.row.First, a.row.Last = fmtAt(a.first), fmtAt(a.last)
		for _, e := range sortedCounts(a.effects) {
			a.row.Effects = append(a.row.Effects, effectCount{Effect: e.key, Count: e.n})
		}
		v.Rules = append(v.Rules, a.row)
	}

	end := time.Duration(0)
	for i := range ev {
		end = max(end, ev[i].Complete)
	}
	for _, w := range faultWindows(ev, end) {
		r := windowRow{Name: w.name, Writer: w.writer, Start: fmtAt(w.start), End: fmtAt(w.end),
			Length: fmtDur(w.end - w.start), Open: w.open}
		if w.writer == "" {
			r.Writer = "all"
		}
		v.Windows = append(v.Windows, r)
	}
	return v
}

type keyCount struct {
	key string
	n   int
}

func sortedCounts(m map[string]int) []keyCount {
	out := make([]keyCount, 0, len(m))
	for k, n := range m {
		out = append(out, keyCount{k, n})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].n != out[j].n {
			return out[i].n > out[j].n
		}
		return out[i].key < out[j].key
	})
	return out
}

func countList(m map[string]int) string {
	var parts []string
	for _, kc := range sortedCounts(m) {
		parts = append(parts, fmt.Sprintf("%s ×%d", kc.key, kc.n))
	}
	return strings.Join(parts, ", ")
}

// window is one fault window of one writer ("" for every writer).
type window struct {
	name, writer string
	start, end   time.Duration
	open         bool
}

// faultWindows pairs FaultStart with the next FaultEnd of the same writer and fault name; a
// window never closed lasts to end. Windows are ordered by start.
func faultWindows(ev []history.Event, end time.Duration) []window {
	type key struct{ writer, name string }
	open := map[key][]int{}
	var out []window
	for i := range ev {
		e := &ev[i]
		switch e.Kind {
		case history.FaultStart:
			k := key{e.Writer, e.Detail}
			open[k] = append(open[k], len(out))
			out = append(out, window{name: e.Detail, writer: e.Writer, start: e.Invoke, end: end, open: true})
		case history.FaultEnd:
			k := key{e.Writer, e.Detail}
			if s := open[k]; len(s) > 0 {
				w := &out[s[0]]
				w.end, w.open = max(e.Invoke, w.start), false
				open[k] = s[1:]
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].start < out[j].start })
	return out
}

// firedBadge says whether a declared fault fired, or why it could not (its event never came).
func firedBadge(a checker.FaultAttestation) badge {
	switch {
	case a.Fired:
		return badge{Label: "fired", Class: "pass"}
	case a.Missed != "":
		return badge{Label: "not reached: " + a.Missed, Class: "inconclusive"}
	}
	return badge{Label: "never fired", Class: "inconclusive"}
}
