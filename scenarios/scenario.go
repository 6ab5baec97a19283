package scenarios

import (
	"fmt"
	"time"

	"github.com/fencebench/fencebench/faults"
	"github.com/fencebench/fencebench/history"
)

// Scenario is one validated scenario file.
type Scenario struct {
	Name        string
	Description string
	Seed        uint64        // 0: draw one at run time (and record it)
	Duration    time.Duration // hard cap for the schedule
	Writers     []Writer
	Traffic     Traffic
	Client      string // "minio-go" or "aws-sdk"; "" lets the run choose
	Protocol    string // protocol variant; history.CorrectVariant by default
	Kills       []Kill // variants this scenario must kill (the kill matrix)
	Store       StoreSpec
	Steps       []Step
	Expect      Expect

	// Source is the file the scenario came from ("" for an embedded one: then
	// "catalogue/<name>.yaml"); Raw is its bytes, persisted with every run.
	Source string
	Raw    []byte
}

// Writer declares one simulated shard copy.
type Writer struct {
	ID   string
	Role string // "primary" (claims at start), "standby" (idle until promoted)
	Term int64  // the primary's term; 0 for a standby
	Pos  Pos
}

// Traffic is the client workload.
type Traffic struct {
	Clients      int
	Rate         float64 // ops per second across all clients
	SyncEvery    int     // a sync after this many buffered ops
	SyncInterval time.Duration
}

// Kill names a broken protocol variant this scenario must catch, and the invariants that
// must fail when it runs with it.
type Kill struct {
	Variant  string
	Violates []history.Invariant // empty: any safety invariant failing counts
	Pos      Pos
}

// StoreSpec says what the run expects of the store.
type StoreSpec struct {
	// AllowUnenforced runs even when the store fails the conditional-write probe (the
	// lying-store scenario); otherwise such a store is refused up front.
	AllowUnenforced bool
	// Drives, when above 1, runs the scenario on a local MinIO erasure-coded over that many
	// drives: the store steps (drive-offline, drive-online) act on them.
	Drives int
}

// Expect is what the checker must find.
type Expect struct {
	Verdict        string              // "pass" (default) or "fail"
	Violated       []history.Invariant // invariants that must fail (with Verdict fail)
	Fenced         []string            // writers that must end fenced
	Serving        string              // the writer that must end holding the chain ("" names none)
	MinAcked       int                 // floor on acknowledged ops
	FaultsMustFire string              // "all" (default) or "none"
	MaxTimeToFence time.Duration
	MaxTimeToAck   time.Duration
	// ServesAfterHeal: once every fault healed, the copies must settle and an active one
	// serve (the invariant ServesAfterHeal); generated schedules ask for it.
	ServesAfterHeal bool
}

// Pos is a position in a scenario file.
type Pos struct{ Line, Col int }

// Trigger kinds.
const (
	TriggerAt    = "at"
	TriggerAfter = "after"
)

// Step is one scheduled action: when it fires (At, or After a writer's protocol event), what
// it does (Action with its parameters), and optionally For, a window after which a fault heals
// itself.
type Step struct {
	Index   int
	Trigger string        // TriggerAt or TriggerAfter
	At      time.Duration // for TriggerAt
	After   *EventTrigger // for TriggerAfter
	For     time.Duration // 0: no window
	Action  Action        // one of Actions
	Params  Params
	Pos     Pos
}

// EventTrigger fires a step when Writer has emitted Event Count times (Count >= 1), then
// waits Delay. An http rule's release (until) may name a second event of the same writer,
// Or: whichever of the two reaches Count first releases the held requests, so a hold can
// wait for a protocol step that ends one of two ways (a revert that resumes or stands down).
type EventTrigger struct {
	Writer string
	Event  history.SignalKind // one of Events
	Or     history.SignalKind // "" or one of Events; until only
	Count  int
	Delay  time.Duration
}

// Params are an action's parameters; which fields apply depends on the action.
type Params struct {
	Writer string // the writer the action applies to
	// partition
	Mode string // "refuse" | "blackhole"
	// latency, slow-close, http delay; drive-slow: the wait before each operation on the drive
	Delay time.Duration
	// bandwidth
	KBps int64
	// flap
	On, Off time.Duration
	// http
	Rule faults.Rule
	// http: hold the requests the rule fires on until this event of a writer has happened
	// (its count-th occurrence; no delay), then the rule's delay more
	Until *EventTrigger
	// promote, restart
	Term int64
	Twin bool // promote at a term another writer already holds (equal-term twin)
	// restart
	As string // the new incarnation's writer id ("" = Writer + "'")
	// relocate
	Target      string
	AbortAt     history.AbortPoint // history.AbortNone, or where the relocation aborts
	LoseHandoff bool               // the fault it puts on the handoff, the answer lost: Step.HandoffFault
	LoseMessage bool               // lose_handoff: message, the message itself lost
	Prehydrate  bool               // the target hydrates while the source still serves, before the source blocks
	// recover: a third copy hydrating while the primary works
	From string
	// drive-offline, drive-online, drive-slow: the store drive (1-based)
	Drive int
	// store-restart: how long the store stays stopped
	Down time.Duration
}

// Events a step can wait for with `after`, in the order an error message lists them: every
// signal a writer emits (history.SignalKind) but cas, crashed, paused and resumed, which no
// scenario may wait for. internal/deps' vocabulary test holds this set, with those four, to
// the signals the writers emit.
var Events = []history.SignalKind{history.SigClaimed, history.SigAcked, history.SigSynced, history.SigFenced,
	history.SigRestoreRead, history.SigTransferred, history.SigDrained, history.SigHandedOff, history.SigAdopted,
	history.SigReverted, history.SigStoodDown, history.SigPublished, history.SigCollected, history.SigHydrated,
	history.SigPromoted, history.SigRecoveryStarted, history.SigEngineOpened, history.SigRecovered,
	history.SigRecoveryFailed, history.SigHydrating}

// Invariants lists the invariant names a scenario may expect to fail: every invariant the
// checker judges, in its report order (history.Invariants).
var Invariants = history.Invariants()

// WriterIDs returns the ids of every writer a scenario may refer to: the declared ones and
// the incarnations its restart steps create.
func (s *Scenario) WriterIDs() []string {
	var ids []string
	for _, w := range s.Writers {
		ids = append(ids, w.ID)
	}
	for _, st := range s.Steps {
		if st.Action == Restart {
			ids = append(ids, st.Params.As)
		}
	}
	return ids
}

// FaultName is the stable name of the fault a step injects, used for attestation: the HTTP
// rule's name, or "<action>@step<index>" for network and protocol faults.
func (st Step) FaultName() string {
	switch st.Spec().Layer {
	case faults.L7:
		return st.Params.Rule.Name
	case StoreLayer:
		if st.Params.Drive > 0 {
			return fmt.Sprintf("%s:drive%d@step%d", st.Action, st.Params.Drive, st.Index)
		}
		return fmt.Sprintf("%s@step%d", st.Action, st.Index)
	}
	return fmt.Sprintf("%s:%s@step%d", st.Action, st.Params.Writer, st.Index)
}
