package scenarios

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

// HTTPActions lists the L7 actions a rule can take.
var HTTPActions = []string{string(faults.DropResponse), string(faults.SyntheticStatus), string(faults.Delay),
	string(faults.Duplicate), string(faults.StripConditions), string(faults.FailDeleteKeys), string(faults.DropRequest), string(faults.Misdirect)}

// decoder reads the parameter mapping of one step's action.
type decoder struct {
	p      *parser
	action Action
	n      *yaml.Node
	path   string
	f      map[string]*yaml.Node
}

// opt returns an optional field's node.
func (d *decoder) opt(field string) (*yaml.Node, bool) {
	v, ok := d.f[field]
	return v, ok
}

// req returns a required field's node, reporting it missing.
func (d *decoder) req(field string) (*yaml.Node, bool) {
	v, ok := d.f[field]
	if !ok && d.n.Kind == yaml.MappingNode {
		d.p.errf(d.n, d.path+"."+field, "missing: %s needs %s", d.action, field)
	}
	return v, ok
}

func (d *decoder) at(field string) string { return d.path + "." + field }

// params decodes an action's parameter mapping, or the short form `crash: a` of the actions
// that take only a writer.
func (p *parser) params(spec Spec, n *yaml.Node, path string) Params {
	var pr Params
	if spec.Short && n.Kind == yaml.ScalarNode {
		pr.Writer = p.str(n, path)
		return pr
	}
	if spec.Store {
		f := p.fields(n, path, spec.Params...)
		if spec.decode != nil {
			spec.decode(&decoder{p: p, action: spec.Name, n: n, path: path, f: f}, &pr)
		}
		return pr
	}
	f := p.fields(n, path, append([]string{"writer"}, spec.Params...)...)
	if v, ok := f["writer"]; ok {
		pr.Writer = p.str(v, path+".writer")
	} else if n.Kind == yaml.MappingNode {
		p.errf(n, path+".writer", "missing: name the writer this %s applies to", spec.Name)
	}
	if spec.decode != nil {
		spec.decode(&decoder{p: p, action: spec.Name, n: n, path: path, f: f}, &pr)
	}
	return pr
}

func decodePartition(d *decoder, pr *Params) {
	pr.Mode = "refuse"
	if v, ok := d.opt("mode"); ok {
		pr.Mode = d.p.oneOf(v, d.at("mode"), []string{"refuse", "blackhole"})
	}
}

func decodeDelay(d *decoder, pr *Params) {
	if v, ok := d.req("delay"); ok {
		pr.Delay = d.p.duration(v, d.at("delay"))
	}
}

func decodeBandwidth(d *decoder, pr *Params) {
	if v, ok := d.req("kbps"); ok {
		pr.KBps = d.p.integer(v, d.at("kbps"))
	}
}

func decodeFlap(d *decoder, pr *Params) {
	if v, ok := d.req("on"); ok {
		pr.On = d.p.duration(v, d.at("on"))
	}
	if v, ok := d.req("off"); ok {
		pr.Off = d.p.duration(v, d.at("off"))
	}
}

func decodePromote(d *decoder, pr *Params) {
	if v, ok := d.req("term"); ok {
		pr.Term = d.p.integer(v, d.at("term"))
	}
	if v, ok := d.opt("twin"); ok {
		pr.Twin = d.p.boolean(v, d.at("twin"))
	}
}

func decodeRestart(d *decoder, pr *Params) {
	if v, ok := d.req("term"); ok {
		pr.Term = d.p.integer(v, d.at("term"))
	}
	if v, ok := d.opt("as"); ok {
		pr.As = d.p.str(v, d.at("as"))
	} else {
		pr.As = pr.Writer + "2"
	}
}

func decodeRelocate(d *decoder, pr *Params) {
	if v, ok := d.req("target"); ok {
		pr.Target = d.p.str(v, d.at("target"))
	}
	if v, ok := d.opt("abort"); ok {
		// `none` is the file's spelling of history.AbortNone (the empty string).
		pr.AbortAt = oneOf(d.p, v, d.at("abort"), []history.AbortPoint{"none", history.AbortBeforeTargetWrites, history.AbortAfterTargetAcks})
		if pr.AbortAt == "none" {
			pr.AbortAt = history.AbortNone
		}
	}
	if v, ok := d.opt("lose_handoff"); ok {
		// true (or answer) loses the target's answer, message the message itself.
		switch v.Value {
		case "answer":
			pr.LoseHandoff = true
		case "message":
			pr.LoseMessage = true
		default:
			if v.Kind == yaml.ScalarNode && v.Value != "true" && v.Value != "false" {
				d.p.errf(v, d.at("lose_handoff"), "expected true, false, answer or message, got %q", v.Value)
				break
			}
			pr.LoseHandoff = d.p.boolean(v, d.at("lose_handoff"))
		}
	}
	if v, ok := d.opt("prehydrate"); ok {
		pr.Prehydrate = d.p.boolean(v, d.at("prehydrate"))
	}
}

func decodeRecover(d *decoder, pr *Params) {
	if v, ok := d.opt("from"); ok {
		pr.From = d.p.str(v, d.at("from"))
	}
}

func decodeHTTP(d *decoder, pr *Params) {
	p, path, r := d.p, d.path, &pr.Rule
	if v, ok := d.opt("name"); ok {
		r.Name = p.str(v, path+".name")
	}
	if v, ok := d.opt("match"); ok {
		p.match(v, path+".match", r)
	}
	if v, ok := d.opt("action"); ok {
		r.Action = faults.Action(p.oneOf(v, path+".action", HTTPActions))
	} else if d.n.Kind == yaml.MappingNode {
		p.errf(d.n, path+".action", "missing: expected one of %s", strings.Join(HTTPActions, ", "))
	}
	if v, ok := d.opt("status"); ok {
		r.Status = int(p.integer(v, path+".status"))
	}
	if v, ok := d.opt("code"); ok {
		r.Code = p.str(v, path+".code")
	}
	if v, ok := d.opt("delay"); ok {
		r.Delay = p.duration(v, path+".delay")
	}
	if v, ok := d.opt("until"); ok {
		pr.Until = p.until(v, path+".until")
	}
	if r.Action == faults.SyntheticStatus && r.Status == 0 && d.n.Kind == yaml.MappingNode {
		p.errf(d.n, path+".status", "missing: action status needs a status like 409 (and a code like ConditionalRequestConflict)")
	}
	if _, given := d.f["delay"]; r.Action == faults.Delay && !given && pr.Until == nil && d.n.Kind == yaml.MappingNode {
		p.errf(d.n, path+".delay", "missing: action delay needs a delay like 500ms, or an until like {writer: c, event: claimed}")
	}
	if r.Action == faults.FailDeleteKeys && r.Method != "" && r.Method != "POST" {
		p.errf(d.n, path+".match.method", "action fail-delete-keys fails keys of a DeleteObjects batch (POST): method %s never carries one", r.Method)
	}
}

// match decodes a rule's request criteria.
func (p *parser) match(n *yaml.Node, path string, r *faults.Rule) {
	m := p.fields(n, path, "method", "key", "header", "value", "nth", "count")
	if x, ok := m["method"]; ok {
		r.Method = p.oneOf(x, path+".method", []string{"GET", "PUT", "POST", "DELETE", "HEAD"})
	}
	if x, ok := m["key"]; ok {
		r.Key = p.str(x, path+".key")
	}
	if x, ok := m["header"]; ok {
		r.Header = p.oneOf(x, path+".header", []string{"If-Match", "If-None-Match"})
	}
	if x, ok := m["value"]; ok {
		r.Value = p.str(x, path+".value")
	}
	if x, ok := m["nth"]; ok {
		r.Nth = int(p.integer(x, path+".nth"))
	}
	if x, ok := m["count"]; ok {
		r.Count = int(p.integer(x, path+".count"))
	}
}

// validation is the state the checks of a whole scenario share: the writers known so far
// (restart steps add theirs), the terms taken, the rule names used.
type validation struct {
	p         *parser
	known     map[string]bool
	terms     map[int64]string
	ruleNames map[string]bool
	s         *Scenario
	field     string // "steps[i].<action>"
}

func (v *validation) unknownWriter(st *Step, field, id string) {
	v.p.at(st.Pos, field, "unknown writer %q%s; declared writers: %s", id,
		suggest(id, sortedKeys(v.known)), strings.Join(sortedKeys(v.known), ", "))
}

func checkPromote(v *validation, st *Step) {
	pr := st.Params
	if other, ok := v.terms[pr.Term]; ok && other != pr.Writer && !pr.Twin {
		v.p.at(st.Pos, v.field+".term", "term clash: writer %q already holds term %d; set twin: true to promote an equal-term twin on purpose", other, pr.Term)
	}
	if _, ok := v.terms[pr.Term]; !ok {
		v.terms[pr.Term] = pr.Writer
	}
}

func checkRestart(v *validation, st *Step) {
	pr := st.Params
	if v.known[pr.As] {
		v.p.at(st.Pos, v.field+".as", "writer %q already exists; a restart creates a new incarnation with a new id", pr.As)
	}
	v.known[pr.As] = true
	if other, ok := v.terms[pr.Term]; ok {
		v.p.at(st.Pos, v.field+".term", "term clash: writer %q already holds term %d", other, pr.Term)
	}
	v.terms[pr.Term] = pr.As
}

func checkRelocate(v *validation, st *Step) {
	pr := st.Params
	if pr.Target != "" && !v.known[pr.Target] {
		v.p.at(st.Pos, v.field+".target", "unknown writer %q; declared writers: %s", pr.Target, strings.Join(sortedKeys(v.known), ", "))
	}
	if pr.Target == pr.Writer && pr.Target != "" {
		v.p.at(st.Pos, v.field+".target", "a writer cannot relocate to itself")
	}
}

func checkRecover(v *validation, st *Step) {
	if from := st.Params.From; from != "" && !v.known[from] {
		v.p.at(st.Pos, v.field+".from", "unknown writer %q", from)
	}
}

func checkHTTP(v *validation, st *Step) {
	r := &st.Params.Rule
	if r.Name == "" {
		r.Name = fmt.Sprintf("http@step%d", st.Index)
	}
	if v.ruleNames[r.Name] {
		v.p.at(st.Pos, v.field+".name", "rule name %q used twice; rule names must be unique", r.Name)
	}
	v.ruleNames[r.Name] = true
	if u := st.Params.Until; u != nil && u.Writer != "" && !v.known[u.Writer] {
		v.unknownWriter(st, v.field+".until.writer", u.Writer)
	}
}

func decodeDrive(d *decoder, pr *Params) {
	if v, ok := d.req("drive"); ok {
		pr.Drive = int(d.p.integer(v, d.at("drive")))
	}
}

func decodeDriveSlow(d *decoder, pr *Params) {
	decodeDrive(d, pr)
	decodeDelay(d, pr)
}

func decodeDown(d *decoder, pr *Params) {
	if v, ok := d.opt("down"); ok {
		pr.Down = d.p.duration(v, d.at("down"))
	}
}

// checkDrive: a drive step needs a scenario on an erasure-coded store with that drive.
func checkDrive(v *validation, st *Step) {
	switch n := v.s.Store.Drives; {
	case n < 2:
		v.p.at(st.Pos, v.field, "%s needs an erasure-coded store: declare store.drives (2 to %d)", st.Action, Limit("store.drives").Max)
	case st.Params.Drive > n:
		v.p.at(st.Pos, v.field+".drive", "no drive %d: the store has drives 1 to %d (store.drives)", st.Params.Drive, n)
	}
}
