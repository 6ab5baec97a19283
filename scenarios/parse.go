package scenarios

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
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
	v := p.str(n, field)
	if v != "" && !slices.Contains(allowed, v) {
		msg := fmt.Sprintf("unknown value %q; expected one of %s", v, strings.Join(allowed, ", "))
		if s := closest(v, allowed); s != "" {
			msg = fmt.Sprintf("unknown value %q (did you mean %q?); expected one of %s", v, s, strings.Join(allowed, ", "))
		}
		p.errf(n, field, "%s", msg)
		return ""
	}
	return v
}

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

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
var idRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_'-]{0,31}$`)

func (p *parser) scenario(n *yaml.Node) *Scenario {
	s := &Scenario{Protocol: "correct", Expect: Expect{Verdict: "pass", FaultsMustFire: "all"},
		Traffic: Traffic{Clients: 2, Rate: 200, SyncEvery: 20, SyncInterval: 50 * time.Millisecond}}
	f := p.fields(n, "", "name", "description", "seed", "duration", "writers", "traffic", "client",
		"protocol", "kills", "store", "steps", "expect")
	if v, ok := f["name"]; ok {
		s.Name = p.str(v, "name")
		if s.Name != "" && !nameRE.MatchString(s.Name) {
			p.errf(v, "name", "expected lower-case letters, digits and dashes (it names report folders), got %q", s.Name)
		}
	} else {
		p.errf(n, "name", "missing: every scenario needs a unique name")
	}
	if v, ok := f["description"]; ok {
		s.Description = strings.TrimSpace(p.str(v, "description"))
	}
	if v, ok := f["seed"]; ok {
		s.Seed = uint64(p.integer(v, "seed"))
	}
	if v, ok := f["duration"]; ok {
		s.Duration = p.duration(v, "duration")
	} else {
		p.errf(n, "duration", "missing: every scenario needs a hard cap like 5s")
	}
	if v, ok := f["writers"]; ok {
		s.Writers = p.writers(v)
	} else {
		p.errf(n, "writers", "missing: declare at least one writer")
	}
	if v, ok := f["traffic"]; ok {
		p.traffic(v, &s.Traffic)
	}
	if v, ok := f["client"]; ok {
		s.Client = p.oneOf(v, "client", []string{"minio-go", "aws-sdk"})
	}
	if v, ok := f["protocol"]; ok {
		s.Protocol = p.str(v, "protocol")
	}
	if v, ok := f["kills"]; ok {
		s.Kills = p.kills(v)
	}
	if v, ok := f["store"]; ok {
		sf := p.fields(v, "store", "allow_unenforced")
		if b, ok := sf["allow_unenforced"]; ok {
			s.Store.AllowUnenforced = p.boolean(b, "store.allow_unenforced")
		}
	}
	if v, ok := f["steps"]; ok {
		s.Steps = p.steps(v)
	}
	if v, ok := f["expect"]; ok {
		p.expect(v, &s.Expect)
	}
	return s
}

func (p *parser) writers(n *yaml.Node) []Writer {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "writers", "expected a list of writers like {id: a, role: primary, term: 5}, got %s", kindName(n))
		return nil
	}
	var out []Writer
	for i, c := range n.Content {
		path := fmt.Sprintf("writers[%d]", i)
		f := p.fields(c, path, "id", "role", "term")
		w := Writer{Role: "standby", Pos: pos(c)}
		if v, ok := f["id"]; ok {
			w.ID = p.str(v, path+".id")
			if w.ID != "" && !idRE.MatchString(w.ID) {
				p.errf(v, path+".id", "expected a short identifier (letters, digits, _ - '), got %q", w.ID)
			}
		} else if c.Kind == yaml.MappingNode {
			p.errf(c, path+".id", "missing: every writer needs an id")
		}
		if v, ok := f["role"]; ok {
			w.Role = p.oneOf(v, path+".role", []string{"primary", "standby"})
		}
		if v, ok := f["term"]; ok {
			w.Term = p.integer(v, path+".term")
		}
		out = append(out, w)
	}
	return out
}

func (p *parser) traffic(n *yaml.Node, t *Traffic) {
	f := p.fields(n, "traffic", "clients", "rate", "sync_every", "sync_interval")
	if v, ok := f["clients"]; ok {
		t.Clients = int(p.integer(v, "traffic.clients"))
	}
	if v, ok := f["rate"]; ok {
		t.Rate = p.rate(v, "traffic.rate")
	}
	if v, ok := f["sync_every"]; ok {
		t.SyncEvery = p.count(v, "traffic.sync_every")
	}
	if v, ok := f["sync_interval"]; ok {
		t.SyncInterval = p.duration(v, "traffic.sync_interval")
	}
}

func (p *parser) kills(n *yaml.Node) []Kill {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "kills", "expected a list like [{variant: no-sweep, violates: [NoAckedWriteLoss]}], got %s", kindName(n))
		return nil
	}
	var out []Kill
	for i, c := range n.Content {
		path := fmt.Sprintf("kills[%d]", i)
		k := Kill{Pos: pos(c)}
		if c.Kind == yaml.ScalarNode {
			k.Variant = p.str(c, path)
		} else {
			f := p.fields(c, path, "variant", "violates")
			if v, ok := f["variant"]; ok {
				k.Variant = p.str(v, path+".variant")
			} else if c.Kind == yaml.MappingNode {
				p.errf(c, path+".variant", "missing: name the variant to kill")
			}
			if v, ok := f["violates"]; ok {
				k.Violates = p.invariantList(v, path+".violates")
			}
		}
		out = append(out, k)
	}
	return out
}

func (p *parser) invariantList(n *yaml.Node, field string) []string {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, field, "expected a list of invariant names, got %s", kindName(n))
		return nil
	}
	var out []string
	for i, c := range n.Content {
		out = append(out, p.oneOf(c, fmt.Sprintf("%s[%d]", field, i), Invariants))
	}
	return out
}

func (p *parser) expect(n *yaml.Node, e *Expect) {
	f := p.fields(n, "expect", "verdict", "violated", "fenced", "min_acked", "faults_must_fire", "max_time_to_fence")
	if v, ok := f["verdict"]; ok {
		e.Verdict = p.oneOf(v, "expect.verdict", []string{"pass", "fail"})
	}
	if v, ok := f["violated"]; ok {
		e.Violated = p.invariantList(v, "expect.violated")
	}
	if v, ok := f["fenced"]; ok {
		e.Fenced = p.strList(v, "expect.fenced")
	}
	if v, ok := f["min_acked"]; ok {
		e.MinAcked = int(p.integer(v, "expect.min_acked"))
	}
	if v, ok := f["faults_must_fire"]; ok {
		e.FaultsMustFire = p.oneOf(v, "expect.faults_must_fire", []string{"all", "none"})
	}
	if v, ok := f["max_time_to_fence"]; ok {
		e.MaxTimeToFence = p.duration(v, "expect.max_time_to_fence")
	}
}

func actionNames() []string {
	out := make([]string, len(Actions))
	for i, a := range Actions {
		out[i] = a.Name
	}
	return out
}

func (p *parser) steps(n *yaml.Node) []Step {
	if n.Kind != yaml.SequenceNode {
		p.errf(n, "steps", "expected a list of steps, got %s", kindName(n))
		return nil
	}
	var out []Step
	for i, c := range n.Content {
		path := fmt.Sprintf("steps[%d]", i)
		st := Step{Index: i, Pos: pos(c)}
		allowed := append([]string{"at", "after", "for"}, actionNames()...)
		f := p.fields(c, path, allowed...)
		if c.Kind != yaml.MappingNode {
			continue
		}
		at, hasAt := f["at"]
		after, hasAfter := f["after"]
		switch {
		case hasAt && hasAfter:
			p.errf(after, path+".after", "a step has one trigger: give either at or after, not both")
		case hasAt:
			st.Trigger, st.At = TriggerAt, p.duration(at, path+".at")
		case hasAfter:
			st.Trigger, st.After = TriggerAfter, p.after(after, path+".after")
		default:
			p.errf(c, path, "missing trigger: give at (a time like 1s) or after ({writer: b, event: claimed})")
		}
		if v, ok := f["for"]; ok {
			st.For = p.duration(v, path+".for")
		}
		var acts []string
		for _, a := range actionNames() {
			if _, ok := f[a]; ok {
				acts = append(acts, a)
			}
		}
		switch len(acts) {
		case 0:
			p.errf(c, path, "missing action: expected one of %s", strings.Join(actionNames(), ", "))
		case 1:
			st.Action = acts[0]
			st.Params = p.params(acts[0], f[acts[0]], path+"."+acts[0])
		default:
			p.errf(c, path, "a step has one action, found %s", strings.Join(acts, " and "))
		}
		out = append(out, st)
	}
	return out
}

func (p *parser) after(n *yaml.Node, path string) *EventTrigger {
	f := p.fields(n, path, "writer", "event", "count", "delay")
	t := &EventTrigger{Count: 1}
	if v, ok := f["writer"]; ok {
		t.Writer = p.str(v, path+".writer")
	} else if n.Kind == yaml.MappingNode {
		p.errf(n, path+".writer", "missing: name the writer whose event triggers the step")
	}
	if v, ok := f["event"]; ok {
		t.Event = p.oneOf(v, path+".event", Events)
	} else if n.Kind == yaml.MappingNode {
		p.errf(n, path+".event", "missing: expected one of %s", strings.Join(Events, ", "))
	}
	if v, ok := f["count"]; ok {
		t.Count = int(p.integer(v, path+".count"))
	}
	if v, ok := f["delay"]; ok {
		t.Delay = p.duration(v, path+".delay")
	}
	return t
}

// params decodes an action's parameter mapping. Writer-only actions also accept the short
// form `crash: a`.
func (p *parser) params(action string, n *yaml.Node, path string) Params {
	var pr Params
	writerOnly := map[string]bool{"heal": true, "reset": true, "crash": true, "pause": true,
		"resume": true, "refresh": true, "gc": true}
	if writerOnly[action] && n.Kind == yaml.ScalarNode {
		pr.Writer = p.str(n, path)
		return pr
	}
	var allowed []string
	switch action {
	case "partition":
		allowed = []string{"writer", "mode"}
	case "latency", "slow-close":
		allowed = []string{"writer", "delay"}
	case "bandwidth":
		allowed = []string{"writer", "kbps"}
	case "flap":
		allowed = []string{"writer", "on", "off"}
	case "http":
		allowed = []string{"writer", "name", "match", "action", "status", "code", "delay"}
	case "promote":
		allowed = []string{"writer", "term", "twin"}
	case "restart":
		allowed = []string{"writer", "as", "term"}
	case "relocate":
		allowed = []string{"writer", "target", "abort", "lose_handoff"}
	case "recover":
		allowed = []string{"writer", "from"}
	default:
		allowed = []string{"writer"}
	}
	f := p.fields(n, path, allowed...)
	if v, ok := f["writer"]; ok {
		pr.Writer = p.str(v, path+".writer")
	} else if n.Kind == yaml.MappingNode {
		p.errf(n, path+".writer", "missing: name the writer this %s applies to", action)
	}
	req := func(field string) (*yaml.Node, bool) {
		v, ok := f[field]
		if !ok && n.Kind == yaml.MappingNode {
			p.errf(n, path+"."+field, "missing: %s needs %s", action, field)
		}
		return v, ok
	}
	switch action {
	case "partition":
		pr.Mode = "refuse"
		if v, ok := f["mode"]; ok {
			pr.Mode = p.oneOf(v, path+".mode", []string{"refuse", "blackhole"})
		}
	case "latency", "slow-close":
		if v, ok := req("delay"); ok {
			pr.Delay = p.duration(v, path+".delay")
		}
	case "bandwidth":
		if v, ok := req("kbps"); ok {
			pr.KBps = p.integer(v, path+".kbps")
		}
	case "flap":
		if v, ok := req("on"); ok {
			pr.On = p.duration(v, path+".on")
		}
		if v, ok := req("off"); ok {
			pr.Off = p.duration(v, path+".off")
		}
	case "http":
		pr.Rule = p.httpRule(f, n, path)
	case "promote":
		if v, ok := req("term"); ok {
			pr.Term = p.integer(v, path+".term")
		}
		if v, ok := f["twin"]; ok {
			pr.Twin = p.boolean(v, path+".twin")
		}
	case "restart":
		if v, ok := req("term"); ok {
			pr.Term = p.integer(v, path+".term")
		}
		if v, ok := f["as"]; ok {
			pr.As = p.str(v, path+".as")
		} else {
			pr.As = pr.Writer + "2"
		}
	case "relocate":
		if v, ok := req("target"); ok {
			pr.Target = p.str(v, path+".target")
		}
		if v, ok := f["abort"]; ok {
			pr.AbortAt = p.oneOf(v, path+".abort", []string{"none", "before-target-writes", "after-target-acks"})
			if pr.AbortAt == "none" {
				pr.AbortAt = ""
			}
		}
		if v, ok := f["lose_handoff"]; ok {
			pr.LoseHandoff = p.boolean(v, path+".lose_handoff")
		}
	case "recover":
		if v, ok := f["from"]; ok {
			pr.From = p.str(v, path+".from")
		}
	}
	return pr
}

func (p *parser) httpRule(f map[string]*yaml.Node, n *yaml.Node, path string) HTTPRule {
	r := HTTPRule{}
	if v, ok := f["name"]; ok {
		r.Name = p.str(v, path+".name")
	}
	if v, ok := f["match"]; ok {
		m := p.fields(v, path+".match", "method", "key", "header", "value", "nth", "count")
		if x, ok := m["method"]; ok {
			r.Method = p.oneOf(x, path+".match.method", []string{"GET", "PUT", "POST", "DELETE", "HEAD"})
		}
		if x, ok := m["key"]; ok {
			r.Key = p.str(x, path+".match.key")
		}
		if x, ok := m["header"]; ok {
			r.Header = p.oneOf(x, path+".match.header", []string{"If-Match", "If-None-Match"})
		}
		if x, ok := m["value"]; ok {
			r.Value = p.str(x, path+".match.value")
		}
		if x, ok := m["nth"]; ok {
			r.Nth = int(p.integer(x, path+".match.nth"))
		}
		if x, ok := m["count"]; ok {
			r.Count = int(p.integer(x, path+".match.count"))
		}
	}
	if v, ok := f["action"]; ok {
		r.Action = p.oneOf(v, path+".action", HTTPActions)
	} else if n.Kind == yaml.MappingNode {
		p.errf(n, path+".action", "missing: expected one of %s", strings.Join(HTTPActions, ", "))
	}
	if v, ok := f["status"]; ok {
		r.Status = int(p.integer(v, path+".status"))
	}
	if v, ok := f["code"]; ok {
		r.Code = p.str(v, path+".code")
	}
	if v, ok := f["delay"]; ok {
		r.Delay = p.duration(v, path+".delay")
	}
	if r.Action == "status" && r.Status == 0 && n.Kind == yaml.MappingNode {
		p.errf(n, path+".status", "missing: action status needs a status like 409 (and a code like ConditionalRequestConflict)")
	}
	if _, given := f["delay"]; r.Action == "delay" && !given && n.Kind == yaml.MappingNode {
		p.errf(n, path+".delay", "missing: action delay needs a delay like 500ms")
	}
	return r
}

// closest suggests the allowed word nearest to s when it is a plausible typo.
func closest(s string, allowed []string) string {
	best, bestD := "", min(3, max(1, len(s)/3)+1)
	for _, a := range allowed {
		if d := editDistance(strings.ToLower(s), strings.ToLower(a)); d < bestD && d < len(s) {
			best, bestD = a, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev = cur
	}
	return prev[len(b)]
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
