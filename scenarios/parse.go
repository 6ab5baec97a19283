package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Options tune validation.
type Options struct {
	// Variants are the protocol variant names the bench knows; nil skips that check.
	Variants []string
}

// Parse decodes and validates one scenario. file names the source in error messages. The
// returned error, if any, is an Errors listing every problem.
func Parse(file string, data []byte, opts Options) (*Scenario, error) {
	p := &parser{file: file}
	if size := Limit("file"); !size.Holds(int64(len(data))) {
		return nil, Errors{{File: file, Line: 1, Col: 1, Msg: fmt.Sprintf("expected a file of %s bytes, got %d", size.Range(), len(data))}}
	}
	var doc yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(&doc); err != nil {
		return nil, Errors{p.yamlErr(err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		p.errf(&extra, "", "a scenario file holds one document; found a second one")
	}
	if len(doc.Content) == 0 {
		return nil, Errors{{File: file, Msg: "empty scenario file"}}
	}
	s := p.scenario(doc.Content[0])
	p.validate(s, opts)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	s.Source = file
	s.Raw = append([]byte(nil), data...)
	return s, nil
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (p *parser) yamlErr(err error) *Error {
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		l, _ := strconv.Atoi(m[1])
		return &Error{File: p.file, Line: l, Col: 1, Msg: "not valid YAML: " + m[2]}
	}
	return &Error{File: p.file, Msg: "not valid YAML: " + strings.TrimPrefix(err.Error(), "yaml: ")}
}

type parser struct {
	file string
	errs Errors
	pos  map[string]Pos // where each field path was seen, for errors found after decoding
}

func (p *parser) errf(n *yaml.Node, field, format string, a ...any) {
	e := &Error{File: p.file, Field: field, Msg: fmt.Sprintf(format, a...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	p.errs = append(p.errs, e)
}

func pos(n *yaml.Node) Pos { return Pos{Line: n.Line, Col: n.Column} }

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// fields checks that n is a mapping whose keys are all allowed, reporting unknown and
// duplicate keys, and returns the value node of each key present.
func (p *parser) fields(n *yaml.Node, path string, allowed ...string) map[string]*yaml.Node {
	out := map[string]*yaml.Node{}
	if n.Kind != yaml.MappingNode {
		p.errf(n, path, "expected a mapping with fields %s, got %s", strings.Join(allowed, ", "), kindName(n))
		return out
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(allowed, k.Value) {
			msg := fmt.Sprintf("unknown field %q; expected one of %s", k.Value, strings.Join(allowed, ", "))
			if s := closest(k.Value, allowed); s != "" {
				msg = fmt.Sprintf("unknown field %q (did you mean %q?); expected one of %s", k.Value, s, strings.Join(allowed, ", "))
			}
			p.errf(k, join(path, k.Value), "%s", msg)
			continue
		}
		if _, dup := out[k.Value]; dup {
			p.errf(k, join(path, k.Value), "field given twice")
			continue
		}
		out[k.Value] = v
		if p.pos == nil {
			p.pos = map[string]Pos{}
		}
		p.pos[join(path, k.Value)] = pos(k)
	}
	return out
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "nothing"
		}
		return fmt.Sprintf("%q", n.Value)
	case yaml.AliasNode:
		return "an alias"
	}
	return "something else"
}

func (p *parser) str(n *yaml.Node, field string) string {
	if n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		p.errf(n, field, "expected a string, got %s", kindName(n))
		return ""
	}
	return n.Value
}

// integer decodes a whole number and checks it against the field's bound.
func (p *parser) integer(n *yaml.Node, field string) int64 {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, field, "expected a whole number, got %s", kindName(n))
		return 0
	}
	v, err := strconv.ParseInt(n.Value, 10, 64)
	if err != nil {
		p.errf(n, field, "expected a whole number, got %q", n.Value)
		return 0
	}
	p.inRange(n, field, v)
	return v
}

func (p *parser) boolean(n *yaml.Node, field string) bool {
	if n.Kind == yaml.ScalarNode {
		switch n.Value {
		case "true":
			return true
		case "false":
			return false
		}
	}
	p.errf(n, field, "expected true or false, got %s", kindName(n))
	return false
}

func (p *parser) duration(n *yaml.Node, field string) time.Duration {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, field, "expected a duration like 1500ms or 2s, got %s", kindName(n))
		return 0
	}
	d, err := time.ParseDuration(n.Value)
	if err != nil || d < 0 {
		p.errf(n, field, "expected a duration like 1500ms or 2s, got %q", n.Value)
		return 0
	}
	p.inRange(n, field, int64(d))
	return d
}

func (p *parser) oneOf(n *yaml.Node, field string, allowed []string) string {
	return oneOf(p, n, field, allowed)
}

// oneOf reads a scalar that must be one of allowed, the names of a vocabulary T.
func oneOf[T ~string](p *parser, n *yaml.Node, field string, allowedNames []T) T {
	allowed := namesOf(allowedNames)
	v := p.str(n, field)
	if v != "" && !slices.Contains(allowed, v) {
		msg := fmt.Sprintf("unknown value %q; expected one of %s", v, strings.Join(allowed, ", "))
		if s := closest(v, allowed); s != "" {
			msg = fmt.Sprintf("unknown value %q (did you mean %q?); expected one of %s", v, s, strings.Join(allowed, ", "))
		}
		p.errf(n, field, "%s", msg)
		return ""
	}
	return T(v)
}

// namesOf are a vocabulary's names as strings.
func namesOf[T ~string](xs []T) []string {
	out := make([]string, len(xs))
	for i, x := range xs {
		out[i] = string(x)
	}
	return out
}

// joinNames lists a vocabulary's names, comma-separated.
func joinNames[T ~string](xs []T) string { return strings.Join(namesOf(xs), ", ") }

func (p *parser) strList(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, field, "expected a list, got %s", kindName(n))
		return nil
	}
	var out []string
	for i, c := range n.Content {
		out = append(out, p.str(c, fmt.Sprintf("%s[%d]", field, i)))
	}
	return out
}

// rate parses "300/s", "300" or "20/ms" into ops per second.
func (p *parser) rate(n *yaml.Node, field string) float64 {
	if n.Kind != yaml.ScalarNode {
		p.errf(n, field, "expected a rate like 300/s, got %s", kindName(n))
		return 0
	}
	num, unit, hasUnit := strings.Cut(n.Value, "/")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if err != nil || v <= 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		p.errf(n, field, "expected a rate like 300/s, got %q", n.Value)
		return 0
	}
	switch strings.TrimSpace(unit) {
	case "s":
	case "ms":
		v *= 1000
	case "m", "min":
		v /= 60
	default:
		if hasUnit {
			p.errf(n, field, "expected a rate like 300/s (per s, ms or min), got %q", n.Value)
			return 0
		}
	}
	p.rateInRange(n, field, v)
	return v
}

// count parses "20ops", "20" into 20 and checks it against the field's bound.
func (p *parser) count(n *yaml.Node, field string) int {
	if n.Kind == yaml.ScalarNode {
		if v, err := strconv.Atoi(strings.TrimSuffix(n.Value, "ops")); err == nil {
			p.inRange(n, field, int64(v))
			return v
		}
	}
	p.errf(n, field, "expected an op count like 20ops, got %s", kindName(n))
	return 0
}
