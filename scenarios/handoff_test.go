package scenarios

import (
	"testing"
	"time"

	"github.com/fencebench/fencebench/faults"
)

// lose_handoff means one thing in the one fault model: with no abort point, the target's
// answer is lost (a handoff fault on the source's link, named after the step); with an abort
// point, the abort decides the handoff's fate and the step puts no fault on it.
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
