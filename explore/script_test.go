package explore

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/scenarios"
)

// One schedule in four (that is not a shape alone, nor clean) gets a script: two to four
// request rules on one writer's requests on one kind of file (fence objects most often), armed together, each firing once at its own place in that
// writer's run of fence requests, in increasing order. The script is drawn from a stream of its
// own: without it the schedule is the one the seed drew before, step for step. A declared
// primary's script waits for a sync or an acknowledgement of its own (its first claim is the
// run's set-up); a relocation source's may wait for its drain or its transfer. No place answers
// a 412; on the simulated stack a place may misdirect a read of the fence.
func TestGenerateScripts(t *testing.T) {
	scripts, armedAtStart, atRelocation := 0, 0, 0
	acts, keys := map[string]int{}, map[string]int{}
	for seed := uint64(1); seed <= 2000; seed++ {
		o := GenOptions{Misdirect: seed%2 == 0}.normalized() // misdirected reads: the simulated stack's
		sc := newGen(seed, o).scenario()
		was := newGen(seed, o)
		was.scripts = rand.New(never{})
		before := was.scenario()
		if len(sc.Steps) == len(before.Steps) {
			continue
		}
		scripts++
		if strings.Contains(sc.Description, "Clean:") {
			t.Fatalf("seed %d: a clean schedule got a script", seed)
		}
		for i := range before.Steps {
			if !reflect.DeepEqual(sc.Steps[i], before.Steps[i]) {
				t.Fatalf("seed %d: step %d changed with the script:\n%+v\nwas\n%+v", seed, i, sc.Steps[i], before.Steps[i])
			}
		}
		added := sc.Steps[len(before.Steps):]
		if len(added) < 2 || len(added) > 4 || len(sc.Steps) > maxSteps {
			t.Fatalf("seed %d: a script of %d steps in a schedule of %d", seed, len(added), len(sc.Steps))
		}
		first := added[0]
		declared := false
		for _, d := range sc.Writers {
			declared = declared || d.ID == first.Params.Writer && d.Role == "primary"
		}
		if first.Trigger == scenarios.TriggerAt {
			armedAtStart++
			if declared || first.At != 0 {
				t.Fatalf("seed %d: a script armed at %v on %s (declared primary: %v)", seed, first.At, first.Params.Writer, declared)
			}
		} else if first.After == nil || first.After.Writer != first.Params.Writer ||
			declared && first.After.Event == history.SigClaimed {
			t.Fatalf("seed %d: a script armed by %+v on %s (declared primary: %v)", seed, first.After, first.Params.Writer, declared)
		} else if ev := first.After.Event; ev == history.SigDrained || ev == history.SigTransferred {
			atRelocation++
			source := false
			for _, st := range before.Steps {
				source = source || st.Action == scenarios.Relocate && st.Params.Writer == first.Params.Writer
			}
			if !source || first.Params.Rule.Key != scriptKey || first.After.Count != 1 {
				t.Fatalf("seed %d: a script armed at %s of %s, not the fence of a relocation source: %+v", seed, ev, first.After.Writer, first)
			}
		}
		keys[first.Params.Rule.Key]++
		nth := 0
		for _, st := range added {
			r := st.Params.Rule
			if r.Action == faults.Misdirect {
				// A misdirected read counts reads only: the first or second after the arming.
				if !o.Misdirect || r.Key != scriptKey || r.Method != "GET" || r.Nth < 1 || r.Nth > 2 || r.Count != 1 {
					t.Fatalf("seed %d: a script's misdirected read %+v (misdirect drawn: %v)", seed, r, o.Misdirect)
				}
				acts[httpKind(r)]++
				nth++
				continue
			}
			if st.Action != scenarios.HTTP || !strings.HasPrefix(r.Name, "script") || r.Key != first.Params.Rule.Key || r.Method != "" ||
				r.Count != 1 || r.Nth <= nth || r.Nth > nth+2 || st.Params.Writer != first.Params.Writer ||
				st.Trigger != first.Trigger || !reflect.DeepEqual(st.After, first.After) {
				t.Fatalf("seed %d: script step %+v after place %d, first %+v", seed, st, nth, first)
			}
			if r.Action == faults.SyntheticStatus && (r.Status == 412 || r.Status == 409) {
				t.Fatalf("seed %d: a script answers %d", seed, r.Status)
			}
			nth = r.Nth
			acts[httpKind(r)]++
		}
		if _, err := scenarios.Parse("script.yaml", mustMarshal(t, sc), scenarios.Options{Variants: variantNames()}); err != nil {
			t.Fatalf("seed %d: the schedule with its script does not load: %v", seed, err)
		}
	}
	if scripts < 300 || scripts > 600 {
		t.Fatalf("%d of 2000 schedules got a script, want about one in four of those not a shape alone", scripts)
	}
	if armedAtStart == 0 || atRelocation < 5 {
		t.Fatalf("%d scripts armed from the start, %d at a relocation source's drain or transfer", armedAtStart, atRelocation)
	}
	for _, f := range scriptFamilies {
		if keys[f.key] < 20 {
			t.Errorf("only %d scripts fault %s", keys[f.key], f.key)
		}
	}
	for _, a := range append(scriptActs, string(faults.Misdirect)) {
		if acts[a] == 0 {
			t.Errorf("no script place answers %s: %v", a, acts)
		}
	}
}
