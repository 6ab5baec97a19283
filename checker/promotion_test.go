package checker

import (
	"strings"
	"testing"

	"github.com/fencebench/fencebench/history"
)

// A promotion is a seal and a restore read: one recorded ok without an ok claim of its term,
// or without an ok restore read at it, within its span fails OwnerNeverReadUnsealed.
func TestAPromotionThatSucceedsWithoutItsSealOrItsReadFails(t *testing.T) {
	for _, tc := range []struct {
		name    string
		add     func(h *hb)
		want    Verdict
		missing string
	}{
		{"sealed, then read", func(h *hb) {
			h.claim("c", 5, k5, 11, 14, 0, "c0", history.OK, "seal")
			h.restore("c", 5, 15, 18)
		}, Pass, ""},
		{"no seal (and so no read after one)", func(h *hb) {}, Fail, "claim (its seal)"},
		{"the seal failed", func(h *hb) {
			h.claim("c", 5, k5, 11, 14, 0, "", history.Ambiguous, "seal")
		}, Fail, "claim (its seal)"},
		{"the seal at another term", func(h *hb) {
			h.claim("c", 4, k5, 11, 14, 0, "c0", history.OK, "seal")
		}, Fail, "claim (its seal)"},
		{"another writer's seal", func(h *hb) {
			h.claim("d", 5, k5, 11, 14, 0, "d0", history.OK, "seal")
		}, Fail, "claim (its seal)"},
		{"the seal outside the promotion", func(h *hb) {
			h.claim("c", 5, k5, 2, 4, 0, "c0", history.OK, "seal")
			h.restore("c", 5, 15, 18)
		}, Fail, "claim (its seal)"},
		{"no restore read", func(h *hb) { h.claim("c", 5, k5, 11, 14, 0, "c0", history.OK, "seal") }, Fail, "restore read"},
		{"the restore read failed", func(h *hb) {
			h.claim("c", 5, k5, 11, 14, 0, "c0", history.OK, "seal")
			h.simple(history.RestoreRead, "c", 5, "", 15, 18, history.Fail, "")
		}, Fail, "restore read"},
		{"a system's node (its reads are not recorded)", func(h *hb) {
			h.expect.LedgerActors = []string{"c"}
		}, Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.add(history.Event{Kind: history.Promote, Writer: "c", Term: 5, Key: k5, Invoke: ms(10), Complete: ms(30), Outcome: history.OK})
			tc.add(h)
			ir := invariantOf(t, h, OwnerNeverReadUnsealed)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Explanation, "without "+tc.missing) {
				t.Errorf("explanation %q does not name the missing %s", ir.Explanation, tc.missing)
			}
		})
	}
	// A promotion that failed holds nothing and is not judged here.
	h := &hb{}
	h.add(history.Event{Kind: history.Promote, Writer: "c", Term: 5, Key: k5, Invoke: ms(10), Complete: ms(30),
		Outcome: history.Fail, Err: "refused"})
	if ir := invariantOf(t, h, OwnerNeverReadUnsealed); ir.Status == Fail {
		t.Fatalf("a failed promotion without a seal failed: %s", ir.Narrative)
	}
}

// A promotion that succeeded hydrated at least the newest reference set published before its
// seal, and every file fetch of its last attempt succeeded (HydrationIntegrity).
func TestAPromotionThatHydratesLessThanTheStoreHeldFails(t *testing.T) {
	const (
		set4 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775803"
		set5 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775802"
		list = "run/idx/0/segments/metadata/metadata__"
	)
	get := func(h *hb, key string, at int) {
		h.ledger(history.LedgerEntry{Writer: "c", Method: "GET", Key: key, Time: ms(at), Done: ms(at + 1),
			Forwarded: true, Status: 200, Delivered: true})
	}
	fetch := func(h *hb, at int, o history.Outcome) {
		h.simple(history.Hydrate, "c", 5, "run/idx/0/segments/data/f1", at, at+2, o, "")
	}
	for _, tc := range []struct {
		name string
		add  func(h *hb)
		want Verdict
		why  string
	}{
		{"the newest set read, every file fetched", func(h *hb) {
			get(h, list, 15)
			get(h, set5, 16)
			fetch(h, 17, history.OK)
		}, Pass, ""},
		{"a newer set than the one published", func(h *hb) { get(h, set5, 16) }, Pass, ""},
		{"no set read", func(h *hb) { get(h, list, 15) }, Fail, "and the promotion read none"},
		{"an older set read", func(h *hb) { get(h, set4, 16) }, Fail, "read only the older"},
		{"the set's answer never delivered", func(h *hb) {
			h.ledger(history.LedgerEntry{Writer: "c", Method: "GET", Key: set5, Time: ms(16), Forwarded: true, Status: 200})
		}, Fail, "and the promotion read none"},
		{"a failed fetch after the last set read", func(h *hb) {
			get(h, set5, 16)
			fetch(h, 17, history.Fail)
		}, Fail, "failed"},
		{"a failed fetch, then the hydration started over", func(h *hb) {
			get(h, set5, 16)
			fetch(h, 17, history.Fail)
			get(h, set5, 21)
			fetch(h, 22, history.OK)
		}, Pass, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.add(history.Event{Kind: history.Publish, Writer: "a", Term: 4, Key: set5, Invoke: ms(2), Complete: ms(4), Outcome: history.OK})
			h.add(history.Event{Kind: history.Promote, Writer: "c", Term: 5, Key: k5, Invoke: ms(10), Complete: ms(30), Outcome: history.OK})
			h.claim("c", 5, k5, 11, 13, 0, "c0", history.OK, "seal")
			h.restore("c", 5, 13, 14)
			h.put("c", k5, 11, 12, "", "*", 200, "c0")
			tc.add(h)
			ir := invariantOf(t, h, HydrationIntegrity)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, tc.why) {
				t.Errorf("narrative %q does not say %q", ir.Narrative, tc.why)
			}
		})
	}
}

// A recovery attempt that succeeded is held to the same: the reference sets published before it
// began, and every fetch of its last hydration attempt (HydrationIntegrity).
func TestARecoveryThatHydratesLessThanTheStoreHeldFails(t *testing.T) {
	const set5 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775802"
	for _, tc := range []struct {
		name string
		read bool
		o    history.Outcome
		want Verdict
	}{
		{"read the newest set and fetched its file", true, history.OK, Pass},
		{"read no set", false, history.OK, Fail},
		{"its file fetch failed", true, history.Fail, Fail},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.add(history.Event{Kind: history.Publish, Writer: "a", Term: 4, Key: set5, Invoke: ms(2), Complete: ms(4), Outcome: history.OK})
			h.add(history.Event{Kind: history.RestoreRead, Writer: "c", Detail: "recovery from a", Invoke: ms(10), Complete: ms(30), Outcome: history.OK})
			h.ledger(history.LedgerEntry{Writer: "c", Method: "GET", Key: "run/idx/0/segments/metadata/metadata__", Time: ms(11),
				Forwarded: true, Status: 200, Delivered: true})
			if tc.read {
				h.ledger(history.LedgerEntry{Writer: "c", Method: "GET", Key: set5, Time: ms(12), Forwarded: true, Status: 200, Delivered: true})
				h.simple(history.Hydrate, "c", 0, "run/idx/0/segments/data/f1", 13, 15, tc.o, "recovery")
			}
			ir := invariantOf(t, h, HydrationIntegrity)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "c's recovery") {
				t.Errorf("narrative %q does not name the recovery", ir.Narrative)
			}
		})
	}
}

// A promotion's restore read holds every op acknowledged before it began, whatever the final
// auditor sees (NoAckedWriteLoss).
func TestARestoreReadMissingAnAcknowledgedOpFails(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []int64
		at   int // when the read began
		want Verdict
	}{
		{"holds both ops", []int64{1, 2}, 40, Pass},
		{"misses op 2", []int64{1}, 40, Fail},
		{"began before op 2 was acknowledged", []int64{1}, 25, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.op("a", 5, 1, 2)
			h.ack("a", 5, k5, 10, 12, 1, 1)
			h.ack("a", 5, k5, 20, 30, 2, 2)
			h.restore("c", 6, tc.at, tc.at+5, tc.ops...)
			h.final.Recovered = []int64{1, 2}
			ir := invariantOf(t, h, NoAckedWriteLoss)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "op 2, acknowledged by a") {
				t.Errorf("narrative %q does not name the op", ir.Narrative)
			}
		})
	}
}

// A handoff that succeeded is held to its target's last hydration attempt: every fetch after
// the last reference set the target read succeeded (HydrationIntegrity).
func TestAHandoffWhoseTargetMissedAFetchFails(t *testing.T) {
	const set5 = "run/idx/0/segments/metadata/metadata__9223372036854775802__9223372036854775802"
	for _, tc := range []struct {
		name   string
		o      history.Outcome
		handed history.Outcome
		want   Verdict
	}{
		{"every fetch succeeded", history.OK, history.OK, Pass},
		{"a fetch failed", history.Fail, history.OK, Fail},
		{"a fetch failed and the handoff failed too", history.Fail, history.Fail, Pass},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := &hb{}
			h.ledger(history.LedgerEntry{Writer: "t", Method: "GET", Key: set5, Time: ms(12), Forwarded: true, Status: 200, Delivered: true})
			h.simple(history.Hydrate, "t", 5, "run/idx/0/segments/data/f1", 13, 15, tc.o, "relocation-target")
			h.add(history.Event{Kind: history.Handoff, Writer: "a", Term: 5, Key: k5, Detail: "t", Invoke: ms(10), Complete: ms(30), Outcome: tc.handed})
			ir := invariantOf(t, h, HydrationIntegrity)
			if ir.Status != tc.want {
				t.Fatalf("status %s, want %s: %s %s", ir.Status, tc.want, ir.Explanation, ir.Narrative)
			}
			if tc.want == Fail && !strings.Contains(ir.Narrative, "t's fetch of") {
				t.Errorf("narrative %q does not name the target's fetch", ir.Narrative)
			}
		})
	}
}
