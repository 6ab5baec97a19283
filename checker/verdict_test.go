package checker

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// TestAmbiguity resolves an ambiguous CAS from the ledger: applied, not applied, unknown.
// The next accepted write is at seq 3, so seq 2 must have landed for the chain to hold.
func TestAmbiguity(t *testing.T) {
	build := func(entry func(h *hb)) *hb {
		h := &hb{}
		h.claim("a", 5, k5, 0, 10, 0, "a0", history.OK, "seal")
		h.put("a", k5, 2, 8, "", "*", 200, "a0")
		h.op("a", 15, 1)
		h.sync("a", 5, k5, 20, 1, "a1", 1)
		h.put("a", k5, 21, 24, "a0", "", 200, "a1")
		h.cas("a", 5, k5, 30, 35, 2, "a1", history.Ambiguous)
		entry(h)
		h.claim("b", 5, k5, 50, 60, 3, "b3", history.OK, "seal")
		h.put("b", k5, 55, 58, "a2", "", 200, "b3")
		h.final.Recovered = []int64{1}
		return h
	}
	cases := []struct {
		name            string
		entry           func(h *hb)
		want            string
		applied, not, u int
		seq             Verdict
	}{
		{"ledger says applied", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31), Done: ms(33),
				Rule: "drop", Action: "drop-response", Forwarded: true, Status: 200, ETag: "a2"})
		}, ResolvedApplied, 1, 0, 0, Pass},
		{"ledger says refused", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31), Done: ms(33),
				Forwarded: true, Status: 412, Code: "PreconditionFailed"})
		}, ResolvedNotApplied, 0, 1, 0, Fail},
		{"ledger says 409 synthetic, not forwarded", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31), Done: ms(33),
				Rule: "c409", Action: "status", Delivered: true})
		}, ResolvedNotApplied, 0, 1, 0, Fail},
		{"no ledger entry", func(h *hb) {}, ResolvedUnknown, 0, 0, 1, Pass},
		{"forwarded without an answer", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "a", Method: "PUT", Key: k5, IfMatch: "a1", Time: ms(31),
				Forwarded: true, Err: "timeout"})
		}, ResolvedUnknown, 0, 0, 1, Pass},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Check(build(c.entry).input())
			s := r.Resolved
			if s.Applied != c.applied || s.NotApplied != c.not || s.Unknown != c.u || len(s.Events) != 1 || s.Events[0].Outcome != c.want {
				t.Fatalf("got %+v, want %s", s, c.want)
			}
			wantStatus(t, r, SeqMonotonic, c.seq)
		})
	}
}

func TestExpectations(t *testing.T) {
	lossy := func() *hb {
		h, _ := base()
		h.final.Recovered = []int64{1, 2, 6}
		return h
	}
	cases := []struct {
		name     string
		build    func() *hb
		expect   func(e *Expect)
		want     Verdict
		mentions []string
	}{
		{"variant killed", lossy, func(e *Expect) { e.Verdict, e.Violated, e.Fenced = Fail, []string{NoAckedWriteLoss}, nil },
			Pass, []string{"variant killed"}},
		{"variant survived", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Violated = []string{NoAckedWriteLoss} },
			Fail, []string{"variant survived: expected NoAckedWriteLoss to fail, it passed"}},
		{"another invariant broke too", func() *hb {
			h := lossy()
			h.op("b", 160, 4)
			h.ack("b", 6, k6, 161, 162, 1, 4)
			return h
		}, func(e *Expect) { e.Violated = []string{NoAckedWriteLoss} },
			Pass, []string{"variant killed: NoAckedWriteLoss", "AckAttribution also failed"}},
		{"only a different invariant broke", func() *hb {
			h, _ := base()
			h.op("b", 160, 4)
			h.ack("b", 6, k6, 161, 162, 1, 4)
			h.final.Recovered = append(h.final.Recovered, 4)
			return h
		}, func(e *Expect) { e.Violated = []string{NoAckedWriteLoss} },
			Fail, []string{"variant survived: expected NoAckedWriteLoss to fail", "AckAttribution also failed"}},
		{"variant killed before a later fault fired", lossy,
			func(e *Expect) {
				e.Violated = []string{NoAckedWriteLoss}
				e.Faults = append(e.Faults, Fault{Name: "never-reached", Layer: "l7"})
			},
			Pass, []string{"variant killed: NoAckedWriteLoss", `declared fault "never-reached" (l7) never fired`}},
		{"variant survived because the fault never fired", func() *hb { h, _ := base(); return h },
			func(e *Expect) {
				e.Violated = []string{NoAckedWriteLoss}
				e.Faults = append(e.Faults, Fault{Name: "drop-cas", Layer: "l7"})
			},
			Inconclusive, []string{`declared fault "drop-cas" (l7) never fired`}},
		{"correct run whose race went the other way", func() *hb { h, _ := base(); return h },
			func(e *Expect) {
				e.Faults = append(e.Faults, Fault{Name: "pause-a", Layer: "protocol", Missed: "a never reached its restore-read event"})
			},
			Pass, []string{"all ", `the race went the other way: a never reached its restore-read event, so declared fault "pause-a" (protocol) did not fire`}},
		{"correct run whose timed fault never fired", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Faults = append(e.Faults, Fault{Name: "pause-a", Layer: "protocol"}) },
			Inconclusive, []string{`declared fault "pause-a" (protocol) never fired`}},
		{"variant whose race went the other way", func() *hb { h, _ := base(); return h },
			func(e *Expect) {
				e.Violated = []string{NoAckedWriteLoss}
				e.Faults = append(e.Faults, Fault{Name: "pause-a", Layer: "protocol", Missed: "a never reached its restore-read event"})
			},
			Inconclusive, []string{`declared fault "pause-a" (protocol) never fired: the race went the other way (a never reached its restore-read event)`}},
		{"expected fail with no list", lossy, func(e *Expect) { e.Verdict = Fail },
			Pass, []string{"a failure was expected: NoAckedWriteLoss failed"}},
		{"correct run with a loss", lossy, func(e *Expect) {}, Fail, []string{"NoAckedWriteLoss failed"}},
		{"writer expected fenced was not", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Fenced = []string{"a", "b"} }, Fail, []string{"expected b to end fenced"}},
		{"writer expected fenced was not, and the step that would have superseded it never ran", func() *hb { h, _ := base(); return h },
			func(e *Expect) {
				e.Fenced, e.Unrun = []string{"a", "b"}, []string{"steps[1] (promote): b never reached its synced event #3"}
			}, Inconclusive,
			[]string{"expected b to end fenced; it never was, but the schedule assumed a step that never ran (steps[1] (promote): b never reached its synced event #3)"}},
		{"a safety failure stands though a step never ran", func() *hb {
			h, _ := base()
			h.final.Recovered = []int64{1, 2, 6}
			return h
		}, func(e *Expect) {
			e.Fenced, e.Unrun = []string{"b"}, []string{"steps[1] (promote): b never reached its synced event #3"}
		}, Fail,
			[]string{"NoAckedWriteLoss failed", "expected b to end fenced"}},
		{"declared fault never fired", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Faults = append(e.Faults, Fault{Name: "drop-cas", Layer: "l7"}) },
			Inconclusive, []string{`"drop-cas" (l7) never fired`}},
		{"l7 fault fired", func() *hb {
			h, _ := base()
			h.ledger(history.LedgerEntry{Writer: "a", Method: "GET", Key: "x", Time: ms(1), Rule: "drop-cas", Forwarded: true, Status: 200})
			return h
		}, func(e *Expect) { e.Faults = append(e.Faults, Fault{Name: "drop-cas", Layer: "l7"}) }, Pass, nil},
		{"below the ack floor", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.MinAcked = 100 }, Inconclusive, []string{"only 5 ops acknowledged, below the floor of 100"}},
		{"a safety failure is not masked by gating", lossy,
			func(e *Expect) { e.MinAcked = 100 }, Fail, []string{"NoAckedWriteLoss failed", "below the floor"}},
		{"nothing exercised", func() *hb { return &hb{} }, func(e *Expect) {},
			Inconclusive, []string{"the run exercised nothing"}},
		{"a publication without traffic exercised the segments", func() *hb {
			h := &hb{}
			h.simple(history.Publish, "a", 5, "shard/segments/metadata/metadata__1", 20, 21, history.OK, "")
			h.final = Final{Recovered: []int64{}, AuditTerm: 6}
			return h
		}, func(e *Expect) {}, Pass, nil},
		{"a publication does not stand in for acknowledgements of ops sent", func() *hb {
			h := &hb{}
			h.op("a", 10, 1)
			h.simple(history.Publish, "a", 5, "shard/segments/metadata/metadata__1", 20, 21, history.OK, "")
			h.final = Final{Recovered: []int64{}, AuditTerm: 6}
			return h
		}, func(e *Expect) {}, Inconclusive, []string{"the run exercised nothing"}},
		{"unknown invariant in the expectation", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.Violated = []string{"NoSuchThing"} }, Error, []string{"unknown invariant"}},
		{"time to fence over the bound", func() *hb {
			// a keeps trying after b's claim: two more CAS attempts before its fence.
			h, _ := base()
			h.cas("a", 5, k5, 141, 142, 3, "a2", history.Ambiguous)
			h.cas("a", 5, k5, 143, 144, 3, "a2", history.Ambiguous)
			return h
		}, func(e *Expect) { e.MaxTimeToFence = ms(5) }, Fail, []string{"TimeToFence failed"}},
		{"a slow fence without retries is the machine's, not the protocol's", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.MaxTimeToFence = ms(5) }, Pass, nil},
		{"time to fence within the bound", func() *hb { h, _ := base(); return h },
			func(e *Expect) { e.MaxTimeToFence = ms(100) }, Pass, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := c.build()
			c.expect(&h.expect)
			r := Check(h.input())
			if r.Verdict != c.want {
				t.Fatalf("got %s, want %s: %s", r.Verdict, c.want, r.Narrative)
			}
			wantMentions(t, strings.Join(r.Reasons, "\n"), c.mentions...)
		})
	}
	t.Run("raw statuses survive the adjustment", func(t *testing.T) {
		h := lossy()
		h.expect.Violated = []string{NoAckedWriteLoss}
		h.expect.Fenced = nil
		r := Check(h.input())
		if r.Verdict != Pass || r.Raw != Fail || mustInvariant(t, r, NoAckedWriteLoss).Status != Fail {
			t.Fatalf("got verdict %s raw %s", r.Verdict, r.Raw)
		}
		if len(r.Lost) != 2 || r.Lost[0].Op != 3 || r.Lost[0].Writer != "a" {
			t.Fatalf("got lost %+v, want ops 3 and 4 by a", r.Lost)
		}
	})
}

func TestHarnessErrors(t *testing.T) {
	cases := []struct {
		name string
		mod  func(h *hb)
		want string
	}{
		{"duplicate event id", func(h *hb) { h.ev = append(h.ev, h.ev[3]) }, "duplicate event ID"},
		{"completes before invoked", func(h *hb) { h.ev[2].Complete = h.ev[2].Invoke - 1 }, "completes at"},
		{"duplicate ledger id", func(h *hb) { h.led = append(h.led, h.led[0]) }, "duplicate ledger entry ID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h, _ := base()
			c.mod(h)
			r := Check(h.input())
			if r.Verdict != Error || !strings.Contains(r.Error, c.want) || len(r.Invariants) != 0 {
				t.Fatalf("got %s %q with %d invariants, want error mentioning %q", r.Verdict, r.Error, len(r.Invariants), c.want)
			}
			if r.Verdict.Exit() != 255 {
				t.Fatalf("got exit %d, want 255", r.Verdict.Exit())
			}
		})
	}
}

func TestLiveness(t *testing.T) {
	t.Run("zombie never fenced", func(t *testing.T) {
		h, id := base()
		h.dropEvent(id.aFenced)
		h.edit(id.aCas3, func(e *history.Event) { e.Outcome = history.Ambiguous })
		for i := 0; i < 4; i++ {
			h.simple(history.Sync, "a", 5, "", 200+10*i, 205+10*i, history.Ambiguous, "")
		}
		h.expect = Expect{MaxTimeToFence: ms(50)}
		r := Check(h.input())
		if len(r.Liveness.Zombies) != 1 || r.Liveness.Zombies[0].Writer != "a" {
			t.Fatalf("got zombies %+v, want a", r.Liveness.Zombies)
		}
		if len(r.Liveness.Stuck) != 1 || r.Liveness.Stuck[0].Syncs != 4 {
			t.Fatalf("got stuck %+v, want a with 4 syncs", r.Liveness.Stuck)
		}
		ir := wantStatus(t, r, TimeToFence, Fail)
		wantMentions(t, ir.Narrative, "a (term 5)", "never fenced")
	})
}
