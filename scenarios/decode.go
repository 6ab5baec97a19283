package scenarios

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/fencebench/fencebench/history"
)

var nameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,62}$`)
var idRE = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_'-]{0,31}$`)

func (p *parser) scenario(n *yaml.Node) *Scenario {
	s := &Scenario{Protocol: history.CorrectVariant, Expect: Expect{Verdict: "pass", FaultsMustFire: "all"},
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
		sf := p.fields(v, "store", "allow_unenforced", "drives")
		if b, ok := sf["allow_unenforced"]; ok {
			s.Store.AllowUnenforced = p.boolean(b, "store.allow_unenforced")
		}
		if n, ok := sf["drives"]; ok {
			s.Store.Drives = int(p.integer(n, "store.drives"))
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
	f := p.fields(n, "expect", "verdict", "violated", "fenced", "serving", "min_acked", "faults_must_fire", "max_time_to_fence",
		"max_time_to_ack", "serves_after_heal")
	if v, ok := f["verdict"]; ok {
		e.Verdict = p.oneOf(v, "expect.verdict", []string{"pass", "fail"})
	}
	if v, ok := f["violated"]; ok {
		e.Violated = p.invariantList(v, "expect.violated")
	}
	if v, ok := f["fenced"]; ok {
		e.Fenced = p.strList(v, "expect.fenced")
	}
	if v, ok := f["serving"]; ok {
		if e.Serving = p.str(v, "expect.serving"); e.Serving == "" && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
			p.errf(v, "expect.serving", "expected a writer id, got an empty string")
		}
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
	if v, ok := f["max_time_to_ack"]; ok {
		e.MaxTimeToAck = p.duration(v, "expect.max_time_to_ack")
	}
	if v, ok := f["serves_after_heal"]; ok {
		e.ServesAfterHeal = p.boolean(v, "expect.serves_after_heal")
	}
}
