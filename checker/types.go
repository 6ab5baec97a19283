package checker

import (
	"slices"
	"time"

	"github.com/fencebench/fencebench/history"
)

// Verdict is the three-valued judgement of an invariant or a scenario, plus error for a
// broken harness.
type Verdict string

// Verdicts, ordered from best to worst: a scenario's raw verdict is the worst of its parts.
const (
	Pass         Verdict = "pass"
	Inconclusive Verdict = "inconclusive"
	Fail         Verdict = "fail"
	// Error means the harness itself broke (or the input is malformed); it says nothing about
	// the protocol or the store.
	Error Verdict = "error"
)

// rank orders verdicts for "worst of": pass < inconclusive < fail < error.
func (v Verdict) rank() int {
	switch v {
	case "", Pass:
		return 0
	case Inconclusive:
		return 1
	case Fail:
		return 2
	default:
		return 3
	}
}

func worst(a, b Verdict) Verdict {
	if b.rank() > a.rank() {
		return b
	}
	if a == "" {
		return Pass
	}
	return a
}

// Invariant names, as the protocol's TLA+ models spell them: history's, which scenarios,
// explore and the reports name too.
const (
	NoAckedWriteLoss       = history.NoAckedWriteLoss
	MutualExclusion        = history.MutualExclusion
	AckAttribution         = history.AckAttribution
	FencedTerminal         = history.FencedTerminal
	SeqMonotonic           = history.SeqMonotonic
	NoSpuriousFencing      = history.NoSpuriousFencing
	TargetAcksAreDurable   = history.TargetAcksAreDurable
	HydrationIntegrity     = history.HydrationIntegrity
	OwnerNeverReadUnsealed = history.OwnerNeverReadUnsealed
	StoreLinearizable      = history.StoreLinearizable
	RecoverySeesAcked      = history.RecoverySeesAcked
	NoSpuriousFailure      = history.NoSpuriousFailure
	// HandoffResolves holds trivially unless Expect.Serving names a writer.
	HandoffResolves = history.HandoffResolves
	// TimeToFence is the liveness bound: judged only when Expect.MaxTimeToFence is set.
	TimeToFence = history.TimeToFence
	// TimeToAck is the acknowledgement bound: judged only when Expect.MaxTimeToAck is set.
	TimeToAck = history.TimeToAck
	// ServesAfterHeal: judged only when Expect.ServesAfterHeal is set.
	ServesAfterHeal = history.ServesAfterHeal
)

// Invariants lists every invariant Check always judges, in report order: every invariant of
// history.Invariants but the two bounds and ServesAfterHeal. TimeToFence and TimeToAck are
// added to a Result only when the scenario sets their bound, ServesAfterHeal when it asks for it.
var Invariants = slices.DeleteFunc(history.Invariants(), func(n history.Invariant) bool {
	return n == TimeToFence || n == TimeToAck || n == ServesAfterHeal
})

// Input is everything Check judges. The runner gathers it; Check reads it and nothing else.
type Input struct {
	// Events is the run's history, in any order (Check sorts a copy).
	Events []history.Event
	// Ledger is the L7 fault proxy's per-request ledger (empty when no proxy was in the path).
	Ledger []history.LedgerEntry
	// Final is the store's final state as the auditor saw it.
	Final Final
	// Expect is what the scenario declares about the run.
	Expect Expect
	// LinearizabilityTimeout bounds the store-linearizability search; 0 means 30s. On timeout
	// StoreLinearizable is inconclusive.
	LinearizabilityTimeout time.Duration
}

// Final is the final state, read by the runner after the run and handed over as data.
type Final struct {
	// Recovered is the auditor's recovered op set: the ground truth for durability. When it
	// is nil, the Ops of the last Audit event are used instead.
	Recovered []int64 `json:"recovered"`
	// AuditTerm is the term the auditor recovered at (for narratives).
	AuditTerm int64 `json:"audit_term,omitempty"`
	// FenceKeys is the final listing of fence objects.
	FenceKeys []Object `json:"fence_keys,omitempty"`
	// SegmentKeys is the final listing of segment files.
	SegmentKeys []string `json:"segment_keys,omitempty"`
}

// Object is one object of a final listing.
type Object struct {
	Key  string `json:"key"`
	ETag string `json:"etag,omitempty"`
	Body string `json:"body,omitempty"`
}

// Fault is a fault the scenario declares, which the run must prove it fired.
type Fault struct {
	// Name is the L7 rule name (matched against LedgerEntry.Rule) or the fault name an L4 or
	// protocol fault records in its FaultStart event's Detail.
	Name string `json:"name"`
	// Layer is "l4", "l7" or "protocol". Any other value is looked up in both places.
	Layer string `json:"layer"`
	// Missed, when set, says that the protocol event the fault's step waited for never
	// happened ("a never reached restore-read"): the race the scenario set up went the other
	// way. A correct run expected to pass is then not gated by the fault that did not fire.
	Missed string `json:"missed,omitempty"`
}

// Expect is what the scenario declares.
//
// Verdict rule. Let failed be the set of invariants whose raw status is fail.
//
//   - A harness error, or an expectation that names an unknown invariant, gives error.
//   - Correct-protocol run (Verdict pass or empty, no Violated): the verdict is the worst raw
//     status; a writer listed in Fenced that never recorded a Fenced event makes it fail.
//   - Broken-variant run (Violated not empty): the run passes exactly when every listed
//     invariant failed. A listed invariant that did not fail gives fail ("variant survived:
//     expected X to fail, it passed"), or inconclusive when that invariant was itself
//     inconclusive. Unlisted failures are reported ("X also failed") but do not change the
//     verdict: a broken protocol often breaks several invariants, depending on timing.
//     Fenced is not checked (a variant may well leave a zombie unfenced).
//   - Verdict fail with Violated empty: the run passes when at least one invariant failed.
//   - Gating, applied last: when a declared fault never fired, fewer than MinAcked distinct ops
//     were acknowledged, or nothing was acknowledged (nor, in a run that sent no op,
//     published) and no fault was declared, a correct run's pass — or a variant's
//     "survived" fail, which then proves nothing — becomes inconclusive. A genuine
//     unexpected failure stays fail, and an expected failure that was shown (a variant
//     killed before it reached its later faults) stays pass; the gating
//     reasons are reported either way. A fault whose Missed is set (its step's event never
//     came) does not gate a correct run expected to pass: the reasons say the race went the
//     other way.
type Expect struct {
	// Verdict is Pass (the default when empty) or Fail.
	Verdict Verdict `json:"verdict,omitempty"`
	// Violated names the invariants a broken variant must break.
	Violated []history.Invariant `json:"violated,omitempty"`
	// Fenced names writers that must end fenced (correct-protocol runs only). One that never
	// was fails the run, or leaves it inconclusive while a step is Unrun.
	Fenced []string `json:"fenced,omitempty"`
	// Serving names the writer that must end holding the chain, judged by HandoffResolves
	// in every run (a broken variant may be expected to break it); "" judges nothing.
	Serving string `json:"serving,omitempty"`
	// MinAcked is the floor on distinct acknowledged ops.
	MinAcked int `json:"min_acked,omitempty"`
	// Retain is how many of its latest reference sets a collection keeps (the retention
	// bound): a fetch that finds a file missing after its collector published Retain sets
	// newer than the one read is past the bound and not judged by HydrationIntegrity. 0: no
	// bound is known, and only a file taken from its collector's newest set is judged so.
	Retain int `json:"retain,omitempty"`
	// Faults are the declared faults; each must have fired.
	Faults []Fault `json:"faults,omitempty"`
	// MaxTimeToFence, when positive, bounds the time from a writer's supersession to its
	// Fenced event, and judges TimeToFence.
	MaxTimeToFence time.Duration `json:"max_time_to_fence,omitempty"`
	// MaxTimeToAck, when positive, bounds the time from an op given to a writer serving
	// undisturbed to its acknowledgement, and judges TimeToAck (see ackTimeJudge.timeToAck).
	MaxTimeToAck time.Duration `json:"max_time_to_ack,omitempty"`
	// ServesAfterHeal judges ServesAfterHeal: once the bench healed every fault (a Heal
	// event), no copy is left in the middle of a step that moves the chain (a Stuck event),
	// and every op given to a copy after the heal is acknowledged unless that copy was then
	// fenced or crashed.
	ServesAfterHeal bool `json:"serves_after_heal,omitempty"`
	// TrafficEnd is when the clients stopped sending, on the history's clock (0: unknown). A
	// copy named by Serving that took the chain only then had nothing left to acknowledge.
	TrafficEnd time.Duration `json:"traffic_end,omitempty"`
	// Unrun names the steps that move the chain (a promotion, a relocation, a crash, a
	// restart, a resume) whose triggering event never came, each with the event it waited
	// for. Serving and Fenced assume they ran: while one is listed, HandoffResolves is
	// inconclusive where it would fail, and so is a writer expected fenced that never was;
	// each says which step never ran.
	Unrun []string `json:"unrun,omitempty"`
	// Lag is how far the run fell behind its own schedule (the latest a timer of the run woke,
	// in scenario time). Above LagTolerance the machine, not the protocol, may have kept a copy
	// from answering, serving or noticing in time: a failure of a liveness invariant
	// (HandoffResolves, TimeToFence) is then inconclusive. Safety invariants are judged alike
	// at any lag.
	Lag time.Duration `json:"lag,omitempty"`
	// Preflight is the key prefix under which the bench itself sent requests through a
	// writer's path before the run (the conditional-write probe): no store call in the
	// history made them, and the ledger's requests there are not held to one.
	Preflight string `json:"preflight,omitempty"`
	// LedgerActors names the writers whose store calls the history does not record (a
	// system's nodes): their write requests in the ledger stand for their syncs and CAS
	// steps, so TimeToFence can see such a writer keep acting after it was superseded.
	LedgerActors []string `json:"ledger_actors,omitempty"`
}

// Result is Check's judgement.
type Result struct {
	// Verdict is the scenario verdict, adjusted by the expectations and the gating rules.
	Verdict Verdict `json:"verdict"`
	// Raw is the worst raw invariant status, before expectations.
	Raw Verdict `json:"raw"`
	// Reasons says, one line each, why Verdict is what it is.
	Reasons []string `json:"reasons,omitempty"`
	// Error is the harness problem when Verdict is error.
	Error string `json:"error,omitempty"`
	// Invariants holds one entry per judged invariant, in the order of Invariants.
	Invariants []InvariantResult `json:"invariants,omitempty"`
	// Lost lists every acknowledged op missing from the recovered set, in ack order.
	Lost []LostWrite `json:"lost,omitempty"`
	// Liveness holds the reported liveness figures.
	Liveness Liveness `json:"liveness"`
	// Attestation says, per declared fault, whether and how often it fired.
	Attestation []FaultAttestation `json:"attestation,omitempty"`
	// Resolved counts how ambiguous protocol writes were resolved from the ledger.
	Resolved AmbiguityStats `json:"resolved"`
	// Acked is the number of distinct acknowledged ops; Events the number of events judged.
	Acked  int `json:"acked"`
	Events int `json:"events"`
	// Narrative is a short story of the run's verdict in plain words.
	Narrative string `json:"narrative"`
}

// Invariant returns the result for the named invariant, or false when it was not judged.
func (r Result) Invariant(name history.Invariant) (InvariantResult, bool) {
	for _, ir := range r.Invariants {
		if ir.Name == name {
			return ir, true
		}
	}
	return InvariantResult{}, false
}

// InvariantResult is the judgement of one invariant.
type InvariantResult struct {
	Name   history.Invariant `json:"name"`
	Status Verdict           `json:"status"`
	// Guarantee states the invariant in one sentence.
	Guarantee string `json:"guarantee"`
	// Explanation is one line on what was found.
	Explanation string `json:"explanation"`
	// Violations counts the distinct violations found (0 when it held).
	Violations int `json:"violations,omitempty"`
	// Counterexample holds the IDs of the events that prove the first violation.
	Counterexample []int64 `json:"counterexample,omitempty"`
	// LedgerEntries holds ledger entry IDs that prove it, for store-level checks.
	LedgerEntries []int64 `json:"ledger_entries,omitempty"`
	// Narrative tells the first violation in plain words.
	Narrative string `json:"narrative,omitempty"`
	// Witness, for StoreLinearizable, is a minimal non-linearizable part of the failing key's
	// history.
	Witness *Witness `json:"witness,omitempty"`
}

// LostWrite is an acknowledged op missing from the auditor's recovered set.
type LostWrite struct {
	Op       int64         `json:"op"`
	Writer   string        `json:"writer"`
	Term     int64         `json:"term"`
	AckedAt  time.Duration `json:"acked_at"`
	AckEvent int64         `json:"ack_event"`
	// AfterAdopt marks an ack by a relocation target after it adopted the fence.
	AfterAdopt bool `json:"after_adopt,omitempty"`
}

// Liveness holds figures that are reported, and judged only against Expect.MaxTimeToFence.
type Liveness struct {
	// Fenced has one entry per writer that got fenced after being superseded.
	Fenced []FenceDelay `json:"fenced,omitempty"`
	// Zombies are writers that kept acting after being superseded and were never fenced,
	// crashed or stood down.
	Zombies []Zombie `json:"zombies,omitempty"`
	// Stuck are writers whose history ends in a run of ambiguous syncs with no ack.
	Stuck []Stuck `json:"stuck,omitempty"`
	// MaxTimeToFence is the largest Delay in Fenced.
	MaxTimeToFence time.Duration `json:"max_time_to_fence,omitempty"`
}

// FenceDelay is the time from a writer's supersession to its Fenced event.
type FenceDelay struct {
	Writer       string        `json:"writer"`
	Term         int64         `json:"term"`
	SupersededBy string        `json:"superseded_by"`
	SupersededAt time.Duration `json:"superseded_at"`
	// ActedAt is when the writer first acted (synced, CASed, claimed) after its supersession:
	// it learns its fate only then, so Delay runs from here.
	ActedAt  time.Duration `json:"acted_at,omitempty"`
	FencedAt time.Duration `json:"fenced_at"`
	Delay    time.Duration `json:"delay"`
	// Attempts counts its syncs and CAS steps from ActedAt to its fence.
	Attempts int `json:"attempts,omitempty"`
}

// Zombie is a superseded writer that was still acting at LastActive and never got fenced.
type Zombie struct {
	Writer       string        `json:"writer"`
	Term         int64         `json:"term"`
	SupersededBy string        `json:"superseded_by"`
	SupersededAt time.Duration `json:"superseded_at"`
	// ActedAt is the writer's first action after its supersession; the bound runs from here.
	ActedAt    time.Duration `json:"acted_at,omitempty"`
	LastActive time.Duration `json:"last_active"`
	// Attempts counts its syncs and CAS steps from ActedAt on.
	Attempts int `json:"attempts,omitempty"`
}

// Stuck is a writer whose history ends in Syncs ambiguous syncs spanning Tail, with no ack
// after them.
type Stuck struct {
	Writer string        `json:"writer"`
	Syncs  int           `json:"syncs"`
	Since  time.Duration `json:"since"`
	Tail   time.Duration `json:"tail"`
}

// FaultAttestation says whether a declared fault fired.
type FaultAttestation struct {
	Name  string `json:"name"`
	Layer string `json:"layer"`
	Fired bool   `json:"fired"`
	// Count is how many ledger entries (L7) or FaultStart events (L4, protocol) show it.
	Count int `json:"count"`
	// First is when it first fired.
	First time.Duration `json:"first,omitempty"`
	// Missed is Fault.Missed: why an event-triggered fault could not fire.
	Missed string `json:"missed,omitempty"`
}

// AmbiguityStats counts ambiguous protocol writes (CAS, Claim, Transfer, Revert, Adopt with
// outcome ambiguous) by how the ledger resolved them.
type AmbiguityStats struct {
	Applied    int `json:"applied"`
	NotApplied int `json:"not_applied"`
	Unknown    int `json:"unknown"`
	// Events lists each resolution, in history order.
	Events []Resolution `json:"events,omitempty"`
}

// Resolution is how one ambiguous event was resolved.
type Resolution struct {
	Event int64 `json:"event"`
	// Outcome is "applied", "not-applied" or "unknown".
	Outcome string `json:"outcome"`
	// Ledger holds the ledger entries that decided it.
	Ledger []int64 `json:"ledger,omitempty"`
}

// Resolution outcomes.
const (
	ResolvedApplied    = "applied"
	ResolvedNotApplied = "not-applied"
	ResolvedUnknown    = "unknown"
)
