package scenarios

import (
	"fmt"
	"slices"
	"strings"

	"github.com/fencebench/fencebench/history"
)

// at records an error found after decoding. A zero ps is filled from the position where the
// field (or its nearest enclosing field) was seen.
func (p *parser) at(ps Pos, field, format string, a ...any) {
	for f := field; ps.Line == 0 && f != ""; {
		if q, ok := p.pos[f]; ok {
			ps = q
			break
		}
		i := strings.LastIndexAny(f, ".[")
		if i < 0 {
			break
		}
		f = f[:i]
	}
	if ps.Line == 0 {
		ps = Pos{Line: 1, Col: 1}
	}
	p.errs = append(p.errs, &Error{File: p.file, Line: ps.Line, Col: ps.Col, Field: field, Msg: fmt.Sprintf(format, a...)})
}

func (p *parser) validate(s *Scenario, opts Options) {
	p.totals(s)
	known := map[string]bool{}
	terms := map[int64]string{}
	primaries := 0
	for i, w := range s.Writers {
		field := fmt.Sprintf("writers[%d]", i)
		if known[w.ID] {
			p.at(w.Pos, field+".id", "writer %q declared twice", w.ID)
		}
		known[w.ID] = true
		switch w.Role {
		case "primary":
			primaries++
			if w.Term == 0 {
				p.at(w.Pos, field+".term", "missing: a primary needs a term >= 1")
			}
			if other, ok := terms[w.Term]; ok {
				p.at(w.Pos, field+".term", "term clash: writer %q already starts at term %d", other, w.Term)
			}
			terms[w.Term] = w.ID
		case "standby":
			if w.Term != 0 {
				p.at(w.Pos, field+".term", "a standby has no term until a promote step gives it one")
			}
		}
	}
	if len(s.Writers) > 0 && primaries == 0 {
		hasPromote := false
		for _, st := range s.Steps {
			hasPromote = hasPromote || st.Action == Promote
		}
		if !hasPromote {
			p.at(Pos{}, "writers", "no primary: declare a writer with role primary or promote one in a step")
		}
	}
	if opts.Variants != nil {
		if !slices.Contains(opts.Variants, s.Protocol) {
			p.at(Pos{}, "protocol", "unknown protocol variant %q%s; expected one of %s", s.Protocol,
				suggest(s.Protocol, opts.Variants), strings.Join(opts.Variants, ", "))
		}
		for i, k := range s.Kills {
			if k.Variant == history.CorrectVariant {
				p.at(k.Pos, fmt.Sprintf("kills[%d].variant", i), "the correct protocol is not a variant to kill")
			} else if !slices.Contains(opts.Variants, k.Variant) {
				p.at(k.Pos, fmt.Sprintf("kills[%d].variant", i), "unknown protocol variant %q%s; expected one of %s",
					k.Variant, suggest(k.Variant, opts.Variants), strings.Join(opts.Variants, ", "))
			}
		}
	}
	seenKill := map[string]bool{}
	for i, k := range s.Kills {
		if seenKill[k.Variant] {
			p.at(k.Pos, fmt.Sprintf("kills[%d].variant", i), "variant %q listed twice", k.Variant)
		}
		seenKill[k.Variant] = true
	}

	// Writers created by restart steps exist from that step on.
	v := &validation{p: p, s: s, known: known, terms: terms, ruleNames: map[string]bool{}}
	for i := range s.Steps {
		p.step(v, s, i)
	}
	for i, w := range s.Expect.Fenced {
		if !known[w] {
			p.at(Pos{}, fmt.Sprintf("expect.fenced[%d]", i), "unknown writer %q; declared writers: %s", w, strings.Join(sortedKeys(known), ", "))
		}
	}
	if w := s.Expect.Serving; w != "" {
		switch {
		case !known[w]:
			p.at(Pos{}, "expect.serving", "unknown writer %q; declared writers: %s", w, strings.Join(sortedKeys(known), ", "))
		case slices.Contains(s.Expect.Fenced, w):
			p.at(Pos{}, "expect.serving", "writer %q is expected both to end serving and to end fenced", w)
		}
	}
	if len(s.Expect.Violated) > 0 && s.Expect.Verdict != "fail" {
		p.at(Pos{}, "expect.violated", "listing violated invariants needs verdict: fail")
	}
}

// step checks one step against the scenario: its trigger, its window, its writers and what
// its action's spec checks.
func (p *parser) step(v *validation, s *Scenario, i int) {
	st := &s.Steps[i]
	v.field = fmt.Sprintf("steps[%d].%s", i, st.Action)
	if st.Trigger == TriggerAt && st.At > s.Duration && s.Duration > 0 {
		p.at(st.Pos, fmt.Sprintf("steps[%d].at", i), "step at %v is after the scenario's duration %v", st.At, s.Duration)
	}
	if st.After != nil && st.After.Writer != "" && !v.known[st.After.Writer] {
		v.unknownWriter(st, fmt.Sprintf("steps[%d].after.writer", i), st.After.Writer)
	}
	spec, ok := Lookup(st.Action)
	if !ok {
		return
	}
	if st.For > 0 && !spec.Window {
		p.at(st.Pos, fmt.Sprintf("steps[%d].for", i), "a window (for) applies to faults and pause; %s is a one-off action", st.Action)
	}
	if w := st.Params.Writer; w != "" && !v.known[w] {
		v.unknownWriter(st, v.field+".writer", w)
	}
	if spec.check != nil {
		spec.check(v, st)
	}
}
