package scenarios

import (
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
)

// lose_handoff means one thing in the one fault model: with no abort point, the target's
// answer (true, answer) or the message itself (message) is lost, a handoff fault on the
// source's link named after the step; with an abort point, the abort decides the handoff's
// fate and the step puts no fault on it.
func TestLoseHandoffIsAHandoffFault(t *testing.T) {
	for _, tc := range []struct {
		relocate string
		want     *faults.Handoff
	}{
		{"{writer: a, target: b, lose_handoff: true}", &faults.Handoff{LoseAnswer: true}},
		{"{writer: a, target: b, abort: none, lose_handoff: true}", &faults.Handoff{LoseAnswer: true}},
		{"{writer: a, target: b}", nil},
		{"{writer: a, target: b, abort: before-target-writes, lose_handoff: true}", nil},
		{"{writer: a, target: b, abort: after-target-acks, lose_handoff: true}", nil},
		{"{writer: a, target: b, lose_handoff: answer}", &faults.Handoff{LoseAnswer: true}},
		{"{writer: a, target: b, lose_handoff: message}", &faults.Handoff{LoseMessage: true}},
		{"{writer: a, target: b, lose_handoff: false}", nil},
		{"{writer: a, target: b, abort: before-target-writes, lose_handoff: message}", nil},
	} {
		doc := "name: h\ndescription: a relocation whose handoff may lose its answer, to see what the loader makes of it.\n" +
			"duration: 2s\nwriters:\n  - {id: a, role: primary, term: 1}\n  - {id: b, role: standby}\n" +
			"traffic: {clients: 1, rate: 10/s}\nsteps:\n  - at: 500ms\n    relocate: " + tc.relocate + "\n"
		sc, err := Parse("h.yaml", []byte(doc), Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.relocate, err)
		}
		st := sc.Steps[0]
		f := st.HandoffFault()
		if tc.want == nil {
			if f != nil {
				t.Errorf("%s: handoff fault %s, want none", tc.relocate, f.Name())
			}
			continue
		}
		if f == nil {
			t.Errorf("%s: no handoff fault, want %+v", tc.relocate, *tc.want)
			continue
		}
		if f.Name() != st.FaultName() || f.Layer() != faults.Protocol {
			t.Errorf("%s: fault %s (%s), want %s (protocol)", tc.relocate, f.Name(), f.Layer(), st.FaultName())
		}
		l := &handoffs{}
		if err := faults.NewSet("a", l, nil).Open(f); err != nil {
			t.Fatal(err)
		}
		if l.got != *tc.want {
			t.Errorf("%s: the fault puts %+v on the handoffs, want %+v", tc.relocate, l.got, *tc.want)
		}
	}
}

// handoffs is a handoff link that keeps what the last fault opened on it does.
type handoffs struct{ got faults.Handoff }

func (l *handoffs) FaultHandoffs(_ string, loseMessage, loseAnswer bool, delay time.Duration) error {
	l.got = faults.Handoff{LoseMessage: loseMessage, LoseAnswer: loseAnswer, Delay: delay}
	return nil
}

func (l *handoffs) HealHandoffs(string) error { return nil }

// lose_handoff takes true, false, answer or message; anything else is refused with the file,
// line and field, and a lost message survives a round trip through the marshaller.
func TestLoseHandoffSpellings(t *testing.T) {
	doc := func(v string) string {
		return "name: h\ndescription: a relocation whose handoff may lose its message, to see what the loader makes of it.\n" +
			"duration: 2s\nwriters:\n  - {id: a, role: primary, term: 1}\n  - {id: b, role: standby}\n" +
			"traffic: {clients: 1, rate: 10/s}\nsteps:\n  - at: 500ms\n    relocate: {writer: a, target: b, lose_handoff: " + v + "}\n"
	}
	for _, bad := range []string{"both", "yes", "[message]"} {
		_, err := Parse("h.yaml", []byte(doc(bad)), Options{})
		if err == nil || !strings.Contains(err.Error(), "h.yaml:10") || !strings.Contains(err.Error(), "lose_handoff") {
			t.Errorf("lose_handoff: %s: error %v, want one naming h.yaml:10 and lose_handoff", bad, err)
		}
	}
	sc, err := Parse("h.yaml", []byte(doc("message")), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if pr := sc.Steps[0].Params; !pr.LoseMessage || pr.LoseHandoff {
		t.Fatalf("lose_handoff: message gave %+v", pr)
	}
	out, err := Marshal(sc)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Parse("h.yaml", out, Options{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if pr := again.Steps[0].Params; !pr.LoseMessage || pr.LoseHandoff {
		t.Fatalf("after a round trip, lose_handoff: message gave %+v:\n%s", pr, out)
	}
}
