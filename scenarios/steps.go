package scenarios

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

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
		var acts []Spec
		for _, a := range Actions {
			if _, ok := f[string(a.Name)]; ok {
				acts = append(acts, a)
			}
		}
		switch len(acts) {
		case 0:
			p.errf(c, path, "missing action: expected one of %s", strings.Join(actionNames(), ", "))
		case 1:
			name := string(acts[0].Name)
			st.Action = acts[0].Name
			st.Params = p.params(acts[0], f[name], path+"."+name)
		default:
			names := make([]string, len(acts))
			for i, a := range acts {
				names[i] = string(a.Name)
			}
			p.errf(c, path, "a step has one action, found %s", strings.Join(names, " and "))
		}
		out = append(out, st)
	}
	return out
}

func (p *parser) after(n *yaml.Node, path string) *EventTrigger {
	return p.event(n, path, "triggers the step", "writer", "event", "count", "delay")
}

// until decodes an http rule's `until`: the event that releases the requests it holds.
func (p *parser) until(n *yaml.Node, path string) *EventTrigger {
	return p.event(n, path, "releases the held requests", "writer", "event", "or", "count")
}

// event decodes a writer's protocol event and its count (and, where allowed, a delay).
func (p *parser) event(n *yaml.Node, path, does string, allowed ...string) *EventTrigger {
	f := p.fields(n, path, allowed...)
	t := &EventTrigger{Count: 1}
	if v, ok := f["writer"]; ok {
		t.Writer = p.str(v, path+".writer")
	} else if n.Kind == yaml.MappingNode {
		p.errf(n, path+".writer", "missing: name the writer whose event %s", does)
	}
	if v, ok := f["event"]; ok {
		t.Event = oneOf(p, v, path+".event", Events)
	} else if n.Kind == yaml.MappingNode {
		p.errf(n, path+".event", "missing: expected one of %s", joinNames(Events))
	}
	if v, ok := f["or"]; ok {
		t.Or = oneOf(p, v, path+".or", Events)
		if t.Or != "" && t.Or == t.Event {
			p.errf(v, path+".or", "names the same event as event (%s): give another event, or leave or out", t.Or)
		}
	}
	if v, ok := f["count"]; ok {
		t.Count = int(p.integer(v, path+".count"))
	}
	if v, ok := f["delay"]; ok {
		t.Delay = p.duration(v, path+".delay")
	}
	return t
}
