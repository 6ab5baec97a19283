package history

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"
)

// Kind says what an event records.
type Kind string

// Store calls, recorded at the client boundary by a recording store wrapper.
const (
	StoreGet         Kind = "store.get"
	StorePut         Kind = "store.put"
	StorePutIfAbsent Kind = "store.put-if-absent"
	StorePutIfMatch  Kind = "store.put-if-match"
	StoreDelete      Kind = "store.delete"
	StoreDeleteMany  Kind = "store.delete-many"
	StoreList        Kind = "store.list"
)

// StoreCall reports whether k is a store call recorded at the client boundary.
func (k Kind) StoreCall() bool { return strings.HasPrefix(string(k), "store.") }

// Client traffic.
const (
	// Op: a client submitted operation Ops[0] to Writer (the writer it believed primary).
	// Recorded when the writer accepted it into its buffer; Outcome fail when refused.
	Op Kind = "op"
	// Ack: Writer, at Term, acknowledged the operations in Ops after a sync whose fence CAS
	// reached Seq on Key. Recorded only when both the metadata upload and the CAS succeeded.
	// Invoke is the invoke time of that CAS (the moment the writer staked its claim to
	// ownership); Complete is the ack itself.
	Ack Kind = "ack"
)

// Protocol steps of a writer. Spans (Begin/End) carry an Outcome: ok, fail (a definite
// refusal that is not fencing), fenced, or ambiguous (retryable).
const (
	// Promote: promotion to primary at Term (seal -> restore read -> hydrate -> active).
	Promote Kind = "promote"
	// Claim: the seal/claim of fence Key at Term. Outcome ok means the writer now owns the
	// term's CAS chain (Token, Seq); it is an ownership acquisition. Detail "seal" (unguarded
	// throwaway instance) or "readopt" (a guarded instance's first advance).
	Claim Kind = "claim"
	// Sync: one sync attempt covering Ops: .tlog -> metadata -> CAS -> ack.
	Sync Kind = "sync"
	// CAS: the fence advance (If-Match) of a sync on Key at Term; Seq is the attempted seq,
	// Token the ETag obtained (ok) or presented (otherwise).
	CAS Kind = "cas"
	// Fenced: Writer learned it is fenced at Term; Err says why. Terminal for that writer.
	Fenced Kind = "fenced"
	// RestoreRead: Writer at Term read its restore point; Ops is the recovered op set and
	// Detail the metadata key it followed ("" when there was none). Term 0 is a recovering
	// copy that holds no term (it reads as a replica, never as an owner).
	RestoreRead Kind = "restore-read"
	// Transfer: a relocation source moved fence ownership of Key to the target allocation in
	// Detail (the target writer's id); Token is the ETag it retained for a revert.
	Transfer Kind = "transfer"
	// Handoff: the source handed the primary context to the target writer named in Detail.
	// Outcome fail means the handoff message (or its answer) was lost.
	Handoff Kind = "handoff"
	// Revert: an aborted relocation's source reverted with its retained token. Outcome ok
	// means it owns the chain again (an ownership acquisition); fail means it stands down.
	Revert Kind = "revert"
	// Adopt: a relocation target took over the fence at the same Term by recorded ownership.
	// Outcome ok is an ownership acquisition.
	Adopt Kind = "adopt"
	// Publish: a segment reference set was published to Key (Outcome ok) or the publish gate
	// refused it (Outcome fail, Err says why).
	Publish Kind = "publish"
	// Collect: garbage collection deleted segment file Key (Outcome ok), or the collection gate
	// refused a whole round (Outcome fail, Key empty, Err says why).
	Collect Kind = "collect"
	// Hydrate: Writer fetched segment file Key that the reference set it read lists. Outcome
	// fail with Status 404 means a listed file had vanished. Detail "relocation-target" marks
	// a same-term target hydrating without a seal, which is allowed; Detail "recovery" (at
	// Term 0) a copy recovering without a term.
	Hydrate Kind = "hydrate"
	// Crash, Pause, Resume: lifecycle of a simulated copy.
	Crash  Kind = "crash"
	Pause  Kind = "pause"
	Resume Kind = "resume"
	// Restart: Writer is a new incarnation of the crashed writer named in Detail, on the same
	// node: it reaches the store by the same path, so the ledger records its requests under
	// the first incarnation's name.
	Restart Kind = "restart"
	// StandDown: a relocation source stopped serving after a refused revert (not fenced),
	// or, with Detail "relocation-target", a relocation target gave its handoff up (its
	// hydration failed) without touching the fence. Term is the term it gave up, Err why.
	// The checker judges it like a fence: it must follow a supersession by another writer
	// after the writer's own latest grant (a target's, also a failed store call of its own),
	// and nothing is acknowledged or acquired at that term afterwards.
	StandDown Kind = "stand-down"
	// Audit: the final auditor's recovery at Term; Ops is the recovered op set, the durability
	// ground truth.
	Audit Kind = "audit"
	// Heal: every fault of the run was healed at Complete (the bench's own event, no Writer).
	// With expect.serves_after_heal the bench then gives each copy that is active an op of
	// its own and waits, for a bounded time, until every copy has left the steps that move
	// the chain (promoting, relocating; recovering, once a copy at the highest term served) and each op it gave
	// was acknowledged, or its copy fenced or crashed.
	Heal Kind = "heal"
	// Stuck: at the end of that wait, Writer was still in the state Detail names (promoting,
	// relocating, recovering, or active with the op it was given unacknowledged).
	Stuck Kind = "stuck"
)

// Fault windows.
const (
	FaultStart Kind = "fault-start" // Detail names the fault; Writer is the writer it hits
	FaultEnd   Kind = "fault-end"
)

// Outcome of a call or step.
type Outcome string

// Outcomes. An instantaneous event (an ack, a fault start) has OK.
const (
	OK        Outcome = "ok"
	Fail      Outcome = "fail"
	FencedOut Outcome = "fenced"
	Ambiguous Outcome = "ambiguous"
)

// Event is the single record of fencebench's history. Fields that do not apply are zero and
// omitted from JSON.
type Event struct {
	ID       int64         `json:"id"`
	Invoke   time.Duration `json:"invoke"`   // run-relative, monotonic
	Complete time.Duration `json:"complete"` // >= Invoke
	Writer   string        `json:"writer,omitempty"`
	Kind     Kind          `json:"kind"`
	Key      string        `json:"key,omitempty"`
	Term     int64         `json:"term,omitempty"`
	Token    string        `json:"token,omitempty"` // ETag presented or obtained
	Seq      int64         `json:"seq,omitempty"`
	Ops      []int64       `json:"ops,omitempty"`
	Outcome  Outcome       `json:"outcome,omitempty"`
	Err      string        `json:"err,omitempty"`
	Status   int           `json:"status,omitempty"` // HTTP status of a store call, when one arrived
	Code     string        `json:"code,omitempty"`   // S3 error code of a store call
	Detail   string        `json:"detail,omitempty"`
}

// String is a one-line rendering for logs and narratives.
func (e Event) String() string {
	s := fmt.Sprintf("#%d %s %s", e.ID, fmtDur(e.Invoke), e.Kind)
	if e.Writer != "" {
		s += " writer=" + e.Writer
	}
	if e.Term != 0 {
		s += fmt.Sprintf(" term=%d", e.Term)
	}
	if e.Key != "" {
		s += " key=" + e.Key
	}
	if e.Outcome != "" {
		s += " -> " + string(e.Outcome)
	}
	if e.Err != "" {
		s += " (" + e.Err + ")"
	}
	return s
}

func fmtDur(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// Recorder collects events from concurrent writers.
type Recorder struct {
	start time.Time
	now   func() time.Duration // the run's scenario time; nil is real time since start

	mu     sync.Mutex
	nextID int64
	events []Event
}

// NewRecorder starts a recorder whose clock reads zero now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// NewRecorderOn starts a recorder that stamps events with now, the run's scenario time (a
// compressed or virtual clock's reading), which must read zero about now and never go back.
func NewRecorderOn(now func() time.Duration) *Recorder {
	return &Recorder{start: time.Now(), now: now}
}

// Now is the run-relative time.
func (r *Recorder) Now() time.Duration {
	if r.now != nil {
		return r.now()
	}
	return time.Since(r.start)
}

// Start is the wall-clock instant the recorder's clock reads zero.
func (r *Recorder) Start() time.Time { return r.start }

// Record appends e, assigning its ID. A zero Invoke and Complete are set to now; a Complete
// before Invoke is a harness bug and panics.
func (r *Recorder) Record(e Event) Event {
	now := r.Now()
	if e.Invoke == 0 && e.Complete == 0 {
		e.Invoke, e.Complete = now, now
	}
	if e.Complete == 0 {
		e.Complete = now
	}
	if e.Complete < e.Invoke {
		panic(fmt.Sprintf("history: event completes before it is invoked: %v", e))
	}
	if e.Outcome == "" {
		e.Outcome = OK
	}
	r.mu.Lock()
	r.nextID++
	e.ID = r.nextID
	r.events = append(r.events, e)
	r.mu.Unlock()
	return e
}

// Span is an event in progress, from Begin to End.
type Span struct {
	r *Recorder
	e Event
}

// Begin stamps e's invoke time; End records it.
func (r *Recorder) Begin(e Event) *Span {
	e.Invoke = r.Now()
	return &Span{r: r, e: e}
}

// Event gives access to the pending event, to fill fields learned during the call.
func (s *Span) Event() *Event { return &s.e }

// End records the event with its outcome and error text.
func (s *Span) End(o Outcome, err error) Event {
	s.e.Complete = s.r.Now()
	if s.e.Complete < s.e.Invoke {
		s.e.Complete = s.e.Invoke
	}
	s.e.Outcome = o
	if err != nil {
		s.e.Err = err.Error()
	}
	return s.r.Record(s.e)
}

// Events returns a copy of everything recorded so far, ordered by invoke time (ties by ID).
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	out := append([]Event(nil), r.events...)
	r.mu.Unlock()
	Sort(out)
	return out
}

// Sort orders events by invoke time, then ID.
func Sort(ev []Event) {
	sort.SliceStable(ev, func(i, j int) bool {
		if ev[i].Invoke != ev[j].Invoke {
			return ev[i].Invoke < ev[j].Invoke
		}
		return ev[i].ID < ev[j].ID
	})
}

// Encode writes events as JSON Lines.
func Encode(w io.Writer, events []Event) error { return encodeLines(w, events) }

// Decode reads JSON Lines written by Encode. Unknown fields are an error naming the line, so
// a history from an incompatible bench is not silently misread.
func Decode(rd io.Reader) ([]Event, error) { return decodeLines[Event](rd, "history") }

// encodeLines writes one JSON document per line.
func encodeLines[T any](w io.Writer, items []T) error {
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	for i := range items {
		if err := enc.Encode(&items[i]); err != nil {
			return err
		}
	}
	return bw.Flush()
}

// decodeLines reads what encodeLines wrote, strictly: an unknown field or a malformed line is
// an error naming the line.
func decodeLines[T any](rd io.Reader, what string) ([]T, error) {
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 0, 64*1024), 16*1024*1024)
	var out []T
	line := 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		if len(b) == 0 {
			continue
		}
		var v T
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", what, line, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: line %d: %w", what, line+1, err)
	}
	return out, nil
}
