package fence

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/fencebench/fencebench/store"
)

// Store is the object-store surface the fence uses. store.Store satisfies it.
type Store interface {
	// Get returns body and ETag; a missing key yields an error wrapping store.ErrNotFound.
	Get(ctx context.Context, key string) (store.Object, error)
	// PutIfAbsent writes only if the key does not exist (If-None-Match: *).
	PutIfAbsent(ctx context.Context, key string, body []byte) (string, error)
	// PutIfMatch writes only if the key's ETag equals etag (If-Match).
	PutIfMatch(ctx context.Context, key string, body []byte, etag string) (string, error)
	// Delete removes a key unconditionally.
	Delete(ctx context.Context, key string) error
	// DeleteMany removes keys in a batch, reporting per-key failures.
	DeleteMany(ctx context.Context, keys []string) ([]store.KeyError, error)
	// List returns every key under a prefix in ascending byte order.
	List(ctx context.Context, prefix string) ([]store.Entry, error)
}

var _ Store = store.Store(nil)

// maxSameTermAttempts bounds equal-term arbitration. Losing it repeatedly to an equal-term
// writer is a legitimate loss, and the bound keeps two twins from livelocking.
const maxSameTermAttempts = 2

// Options configures one fence instance: one shard copy (allocation, node) at one term.
type Options struct {
	Store Store
	// Prefix is the shard's translog metadata prefix, "" or ending in "/". Fence keys are
	// Prefix + "fence__" + Invert(term).
	Prefix string
	// IndexUUID and ShardID are the shard identity every body carries and every read checks.
	IndexUUID string
	ShardID   int
	// AllocationID is this shard copy: what the instance records as owner, and what a guarded
	// instance must find recorded to adopt an existing key.
	AllocationID string
	// NodeID is the node this copy runs on; it tells this instance's writes from others'
	// when a lost response is resolved.
	NodeID string
	// Term is the primary term the instance acts at.
	Term int64
	// Guarded requires recorded ownership to adopt an existing key at this term: the
	// instance takes an equal-term key only if its content records this AllocationID. Every
	// translog instance and every relocation target is guarded; only the throwaway seal
	// instance of a new incarnation is not.
	Guarded bool
	// Variant selects a broken protocol variant for the bench; "" means Correct.
	Variant Variant
}

// Fence is one fence instance. Its methods are serialized: an instance never has two store
// writes in flight. Different instances (other writers) run concurrently.
type Fence struct {
	o   Options
	ops sync.Mutex // serializes protocol methods

	// Written only by the holder of ops, under smu; read under smu by accessors and without
	// it by the holder of ops.
	smu         sync.Mutex
	term        int64
	key         string
	token       string
	seq         int64
	fenced      *Error
	transferred bool
	// unresolved is the seq of the last advance whose outcome stayed unknown (0: none). A
	// retry at that seq that is refused may be refused by that very write, so the refusal is
	// checked by identity before it fences.
	unresolved int64
	target     string
}

// New validates o and returns an instance that holds nothing yet. It refuses a nil store, a
// negative term or shard id, a '|' in a string field, a prefix not ending in "/" and an
// unknown variant.
func New(o Options) (*Fence, error) {
	if o.Store == nil {
		return nil, errors.New("fence: nil store")
	}
	if o.Term < 0 || o.ShardID < 0 {
		return nil, fmt.Errorf("fence: negative term %d or shard id %d", o.Term, o.ShardID)
	}
	if o.Prefix != "" && !strings.HasSuffix(o.Prefix, "/") {
		return nil, fmt.Errorf("fence: prefix %q does not end in /", o.Prefix)
	}
	if _, err := Encode(Content{IndexUUID: o.IndexUUID, ShardID: o.ShardID, Term: o.Term,
		AllocationID: o.AllocationID, NodeID: o.NodeID}); err != nil {
		return nil, err
	}
	v, err := LookupVariant(string(o.Variant))
	if err != nil {
		return nil, err
	}
	o.Variant = v
	return &Fence{o: o, term: o.Term, key: Key(o.Prefix, o.Term)}, nil
}

// Fenced reports whether the instance is fenced (terminal) or stood down after a revert.
func (f *Fence) Fenced() bool {
	f.smu.Lock()
	defer f.smu.Unlock()
	return f.fenced != nil
}

// FencedErr returns the error that fenced the instance, nil if it is not fenced.
func (f *Fence) FencedErr() error {
	f.smu.Lock()
	defer f.smu.Unlock()
	if f.fenced == nil {
		return nil
	}
	return f.fenced
}

// Token returns the ETag the instance presents on its next write, "" when it holds none.
// After a Transfer it is the retained ETag a Revert presents.
func (f *Fence) Token() string {
	f.smu.Lock()
	defer f.smu.Unlock()
	return f.token
}

// Seq returns the sequence number of the version the instance last wrote or adopted.
func (f *Fence) Seq() int64 {
	f.smu.Lock()
	defer f.smu.Unlock()
	return f.seq
}

// Term returns the instance's term.
func (f *Fence) Term() int64 {
	f.smu.Lock()
	defer f.smu.Unlock()
	return f.term
}

// Key returns the instance's fence key.
func (f *Fence) Key() string {
	f.smu.Lock()
	defer f.smu.Unlock()
	return f.key
}

// Variant returns the instance's protocol variant.
func (f *Fence) Variant() Variant { return f.o.Variant }

// Transferred reports whether the instance has transferred ownership and not reverted.
func (f *Fence) Transferred() bool {
	f.smu.Lock()
	defer f.smu.Unlock()
	return f.transferred
}

func (f *Fence) setToken(token string, seq int64) {
	f.smu.Lock()
	f.token, f.seq = token, seq
	f.smu.Unlock()
}

func (f *Fence) setTransferred(on bool, target string) {
	f.smu.Lock()
	f.transferred, f.target = on, target
	f.smu.Unlock()
}

// fence marks the instance fenced for good, drops its token and returns the verdict.
func (f *Fence) fence(op, reason string, cause error) error {
	e := &Error{Kind: ErrFenced, Op: op, Key: f.key, Reason: reason, Err: cause}
	f.smu.Lock()
	f.fenced, f.token = e, ""
	f.smu.Unlock()
	return e
}

func (f *Fence) retryable(op, reason string, cause error) error {
	return &Error{Kind: ErrRetryable, Op: op, Key: f.key, Reason: reason, Err: cause}
}

// ioErr turns a failed read, list or delete into an outcome: a configuration error is
// returned as is (a harness problem), anything else is retryable.
func (f *Fence) ioErr(op, what string, err error) error {
	if errors.Is(err, store.ErrConfig) {
		return fmt.Errorf("fence %s %s: %s: %w", op, f.key, what, err)
	}
	return f.retryable(op, what+" failed", err)
}

// stickyFence returns the fenced verdict if there is one. Fenced is terminal: with
// FencedNotSticky the verdict is forgotten instead, and the instance acts again.
func (f *Fence) stickyFence() error {
	if f.fenced == nil {
		return nil
	}
	if f.o.Variant == FencedNotSticky {
		f.smu.Lock()
		f.fenced, f.token = nil, ""
		f.smu.Unlock()
		return nil
	}
	return f.fenced
}

func (f *Fence) transferredErr(op string) error {
	return &Error{Kind: ErrTransferred, Op: op, Key: f.key,
		Reason: fmt.Sprintf("ownership was transferred to allocation %s; only Revert is allowed", f.target)}
}

// next is the seq a write following a version with seq s records. NoSeq always records 0, so
// successive bodies repeat and content-hash ETags come back (ABA).
func (f *Fence) next(s int64) int64 {
	if f.o.Variant == NoSeq {
		return 0
	}
	return s + 1
}

func (f *Fence) body(alloc string, seq int64) []byte {
	b, err := Encode(Content{IndexUUID: f.o.IndexUUID, ShardID: f.o.ShardID, Term: f.term,
		AllocationID: alloc, NodeID: f.o.NodeID, Seq: seq})
	if err != nil {
		// New and Transfer validate every field Encode checks.
		panic(err)
	}
	return b
}

// decode parses a body read from this instance's key and validates its identity.
func (f *Fence) decode(b []byte) (Content, error) {
	c, err := Decode(b)
	if err != nil {
		return c, err
	}
	if c.IndexUUID != f.o.IndexUUID || c.ShardID != f.o.ShardID {
		return c, fmt.Errorf("%w: %s holds index %s shard %d, this is index %s shard %d: two shards resolved the same key",
			ErrIdentity, f.key, c.IndexUUID, c.ShardID, f.o.IndexUUID, f.o.ShardID)
	}
	if c.Term != f.term {
		return c, fmt.Errorf("%w: %s holds term %d", ErrIdentity, f.key, c.Term)
	}
	return c, nil
}

func (f *Fence) identityErr(op string, err error) error {
	return &Error{Kind: ErrIdentity, Op: op, Key: f.key, Reason: "content does not belong to this shard and term", Err: err}
}

// outcome is the classification of a conditional write's result.
type outcome int

const (
	applied outcome = iota // the write landed
	refused                // 412: the precondition did not hold; nothing was written
	gone                   // If-Match answered 404: the key does not exist
	unknown                // the write may or may not have landed
	assumed                // a broken variant takes an unknown outcome as applied
	harness                // a configuration error: neither fenced nor retryable
)

// classify maps a conditional write's error to an outcome. It is the one place the
// classification variants are read.
func (f *Fence) classify(err error) outcome {
	switch {
	case err == nil:
		return applied
	case errors.Is(err, store.ErrConfig):
		return harness
	case errors.Is(err, store.ErrPreconditionFailed):
		return refused
	case errors.Is(err, store.ErrNotFound):
		// What a swept writer sees on If-Match: lost, so a zombie fails promptly.
		if f.o.Variant == NotFoundIsRetryable {
			return unknown
		}
		return gone
	case errors.Is(err, store.ErrConflict):
		// 409 ConditionalRequestConflict: another request on the key was in flight; this
		// request's precondition outcome is unknown, and only a re-read settles it.
		switch f.o.Variant {
		case ConflictIsFenced:
			return refused
		case ConflictIsSuccess:
			return assumed
		}
		return unknown
	default:
		switch f.o.Variant {
		case AmbiguousIsFenced:
			return refused
		case AmbiguousIsSuccess:
			return assumed
		}
		return unknown
	}
}

func (f *Fence) harnessErr(op string, err error) error {
	return fmt.Errorf("fence %s %s: %w", op, f.key, err)
}

// assume adopts the key's current version as if the unknown write had landed, without any
// identity check. Only broken variants get here.
func (f *Fence) assume(ctx context.Context, attempted int64) error {
	obj, err := f.o.Store.Get(ctx, f.key)
	if err != nil {
		f.setToken(f.token, attempted)
		return nil
	}
	seq := attempted
	if c, err := Decode(obj.Body); err == nil {
		seq = c.Seq
	}
	f.setToken(obj.ETag, seq)
	return nil
}

// resolve settles a write with an unknown outcome by reading the key back: the write is
// adopted only if the key now holds exactly this term, the attempted seq, the allocation the
// write recorded and this node. Anything else did not land as far as this instance can
// prove, which is retryable and never fenced.
func (f *Fence) resolve(ctx context.Context, op string, attempted int64, alloc string, cause error) error {
	obj, err := f.o.Store.Get(ctx, f.key)
	if err != nil {
		if errors.Is(err, store.ErrConfig) {
			return f.harnessErr(op, err)
		}
		return f.retryable(op, fmt.Sprintf("write outcome unknown and the read-back failed (%v)", err), cause)
	}
	c, derr := f.decode(obj.Body)
	if f.o.Variant == AdoptWithoutIdentity {
		seq := attempted
		if derr == nil {
			seq = c.Seq
		}
		f.setToken(obj.ETag, seq)
		return nil
	}
	if derr != nil {
		return f.identityErr(op, derr)
	}
	if c.Seq == attempted && c.AllocationID == alloc && c.NodeID == f.o.NodeID {
		f.setToken(obj.ETag, attempted)
		return nil
	}
	return f.retryable(op, fmt.Sprintf("write outcome unknown; the key holds allocation %s node %s seq %d, not this write (allocation %s seq %d)",
		c.AllocationID, c.NodeID, c.Seq, alloc, attempted), cause)
}

// diagnose names the highest term present, for a fenced message. It is a read for the
// message only; no decision depends on it.
func (f *Fence) diagnose(ctx context.Context) string {
	h, found, err := HighestTerm(ctx, f.o.Store, f.o.Prefix)
	switch {
	case err != nil:
		return ""
	case !found:
		return " (no fence key is present)"
	case h > f.term:
		return fmt.Sprintf(" (superseded by term %d)", h)
	default:
		return fmt.Sprintf(" (highest term present: %d)", h)
	}
}

// Claim runs the claim (seal) procedure if the instance holds no token: refuse when a higher
// term exists, create the term's key or win it by equal-term arbitration, sweep every lower
// term, verify the own key, and re-list (a surviving lower term is retryable; a newer term
// withdraws a key this instance created and fences). nil means the instance owns the chain.
// On any failure the instance holds no token, so a retry re-runs the whole claim.
func (f *Fence) Claim(ctx context.Context) error {
	f.ops.Lock()
	defer f.ops.Unlock()
	if err := f.stickyFence(); err != nil {
		return err
	}
	if f.transferred {
		return f.transferredErr("claim")
	}
	if f.token != "" {
		return nil
	}
	return f.claim(ctx)
}

// Advance is validate-and-advance, called after the metadata upload and before the ack:
// claim if the instance holds no token, else write seq+1 with If-Match on the held token. A
// refused CAS or a vanished key fences; an unknown outcome is resolved by identity and is
// otherwise retryable. The ack is legitimate only when Advance returns nil.
func (f *Fence) Advance(ctx context.Context) error {
	return f.AdvanceAt(ctx, f.Term())
}

// AdvanceAt is Advance for a caller that names the term it acts at. A term other than the
// instance's fences it: an instance belongs to one copy at one term and never claims a term
// it was not built for.
func (f *Fence) AdvanceAt(ctx context.Context, term int64) error {
	f.ops.Lock()
	defer f.ops.Unlock()
	wasFenced := f.fenced != nil
	if err := f.stickyFence(); err != nil {
		return err
	}
	if f.transferred {
		return f.transferredErr("advance")
	}
	if term != f.term {
		if !wasFenced {
			return f.fence("advance", fmt.Sprintf("asked to act at term %d; this instance is for term %d", term, f.term), nil)
		}
		// Reachable only when fenced is not sticky: the forgotten verdict lets the
		// instance claim a term it was never granted.
		if term < 0 {
			return fmt.Errorf("fence: negative term %d", term)
		}
		f.smu.Lock()
		f.term, f.key, f.token, f.seq = term, Key(f.o.Prefix, term), "", 0
		f.smu.Unlock()
	}
	if f.token == "" {
		return f.claim(ctx)
	}
	return f.advance(ctx)
}

func (f *Fence) advance(ctx context.Context) error {
	const op = "advance"
	attempted := f.next(f.seq)
	etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(f.o.AllocationID, attempted), f.token)
	outcome := f.classify(err)
	earlier := f.unresolved == attempted
	f.unresolved = 0
	switch outcome {
	case applied:
		f.setToken(etag, attempted)
		return nil
	case refused:
		if earlier {
			// The previous attempt at this seq may have landed after all (its answer was lost
			// and its read-back failed); then this refusal is our own write, not a successor.
			if rerr := f.resolve(ctx, op, attempted, f.o.AllocationID, err); rerr == nil {
				return nil
			} else if !errors.Is(rerr, ErrRetryable) {
				return rerr
			}
		}
		return f.fence(op, "lost the CAS: the key moved past the held token"+f.diagnose(ctx), err)
	case gone:
		return f.fence(op, "key gone: the term's key was swept"+f.diagnose(ctx), err)
	case assumed:
		return f.assume(ctx, attempted)
	case harness:
		return f.harnessErr(op, err)
	default:
		rerr := f.resolve(ctx, op, attempted, f.o.AllocationID, err)
		if errors.Is(rerr, ErrRetryable) {
			f.unresolved = attempted
		}
		return rerr
	}
}

// claim runs the claim procedure. The caller holds ops.
func (f *Fence) claim(ctx context.Context) (err error) {
	const op = "claim"
	f.setToken("", 0)
	defer func() {
		// A failed claim holds nothing, so a retry re-runs the full claim including the
		// sweep verification.
		if err != nil && f.o.Variant != ReuseHalfClaimed {
			f.setToken("", 0)
		}
	}()
	// The term floor and the re-list are the two halves of "a higher term prevails".
	floor := f.o.Variant != NoTermFloor
	reverify := floor && f.o.Variant != NoReverify
	sweep := f.o.Variant != NoSweep
	survivors := sweep && f.o.Variant != NoSurvivorCheck

	// 1. Refuse when a higher term exists: a stale grant must never create its key.
	if floor {
		terms, err := listTerms(ctx, f.o.Store, f.o.Prefix)
		if err != nil {
			return f.ioErr(op, "list before claim", err)
		}
		if h, ok := highestAbove(terms, f.term); ok {
			return f.fence(op, fmt.Sprintf("superseded by term %d", h), nil)
		}
	}

	// 2. Create the term's key, or arbitrate for it when it exists.
	created := false
	etag, err := f.o.Store.PutIfAbsent(ctx, f.key, f.body(f.o.AllocationID, 0))
	switch f.classify(err) {
	case applied:
		f.setToken(etag, 0)
		created = true
	case refused:
		if err := f.arbitrate(ctx); err != nil {
			return err
		}
	case assumed:
		if err := f.assume(ctx, 0); err != nil {
			return err
		}
	case harness:
		return f.harnessErr(op, err)
	default:
		// If the create landed after all, the retry's create conflicts and arbitration finds
		// this copy recorded as owner: self-healing.
		return f.retryable(op, "create outcome unknown", err)
	}

	// 3. Sweep every lower term: the act that fences a lower-term incumbent.
	var sweepFailed []store.KeyError
	if sweep {
		terms, err := listTerms(ctx, f.o.Store, f.o.Prefix)
		if err != nil {
			return f.ioErr(op, "list before sweep", err)
		}
		if lower := keysBelow(terms, f.term); len(lower) > 0 {
			failed, err := f.o.Store.DeleteMany(ctx, lower)
			if err != nil {
				return f.ioErr(op, "sweep of lower terms", err)
			}
			sweepFailed = failed
		}
	}

	// 4. Verify the own key: gone means a successor swept it; another ETag means an
	// equal-term twin took it mid-claim.
	obj, err := f.o.Store.Get(ctx, f.key)
	if errors.Is(err, store.ErrNotFound) {
		return f.fence(op, "key gone: the term's key vanished before the claim was verified"+f.diagnose(ctx), err)
	}
	if err != nil {
		return f.ioErr(op, "verify read", err)
	}
	if obj.ETag != f.token {
		c, derr := f.decode(obj.Body)
		if derr != nil {
			return f.identityErr(op, derr)
		}
		reason := fmt.Sprintf("taken over mid-claim by allocation %s (node %s, seq %d)", c.AllocationID, c.NodeID, c.Seq)
		reason += f.withdraw(ctx, created, false)
		return f.fence(op, reason, nil)
	}

	// 5. Re-list: a surviving lower term means two terms could reach the ack path (retry);
	// a newer grant means this claim went stale while running (withdraw and fence).
	if reverify {
		terms, err := listTerms(ctx, f.o.Store, f.o.Prefix)
		if err != nil {
			return f.ioErr(op, "re-list after sweep", err)
		}
		if lower := keysBelow(terms, f.term); len(lower) > 0 && survivors {
			reason := fmt.Sprintf("sweep left term(s) %s; retry", termsOf(lower))
			if len(sweepFailed) > 0 {
				reason += fmt.Sprintf(" (batch delete reported %d failure(s): %v)", len(sweepFailed), sweepFailed[0])
			}
			return f.retryable(op, reason, nil)
		}
		if h, ok := highestAbove(terms, f.term); ok {
			reason := fmt.Sprintf("superseded mid-claim by term %d", h)
			reason += f.withdraw(ctx, created, true)
			return f.fence(op, reason, nil)
		}
	}
	return nil
}

// withdraw deletes the own key after a claim lost it, but only when this instance created it
// and a newer term superseded it: a key won by arbitration may already belong to a further
// equal-term claimant. It returns a note for the fenced message.
func (f *Fence) withdraw(ctx context.Context, created, superseded bool) string {
	if !(created && superseded) && f.o.Variant != WithdrawArbitrated {
		return ""
	}
	if err := f.o.Store.Delete(ctx, f.key); err != nil {
		return fmt.Sprintf("; withdrawing the key failed: %v", err)
	}
	return "; withdrew the key"
}

// arbitrate takes an existing equal-term key: read it, check identity and (when guarded)
// recorded ownership, and CAS seq+1 onto the version read. At most maxSameTermAttempts; a
// key that vanished is never re-created.
func (f *Fence) arbitrate(ctx context.Context) error {
	const op = "claim"
	guard := f.o.Guarded && f.o.Variant != NoReadoptionGuard && f.o.Variant != TargetClaimsBlindly
	var last error
	for range maxSameTermAttempts {
		obj, err := f.o.Store.Get(ctx, f.key)
		if errors.Is(err, store.ErrNotFound) {
			if f.o.Variant == RecreateOn404 {
				etag, err := f.o.Store.PutIfAbsent(ctx, f.key, f.body(f.o.AllocationID, 0))
				if err == nil {
					f.setToken(etag, 0)
					return nil
				}
				last = err
				continue
			}
			return f.fence(op, "key gone: found no equal-term fence to adopt"+f.diagnose(ctx), err)
		}
		if err != nil {
			return f.ioErr(op, "arbitration read", err)
		}
		c, err := f.decode(obj.Body)
		if err != nil {
			return f.identityErr(op, err)
		}
		if guard && c.AllocationID != f.o.AllocationID {
			return f.fence(op, fmt.Sprintf("not the recorded owner: the key is owned by allocation %s (node %s, seq %d), this is %s",
				c.AllocationID, c.NodeID, c.Seq, f.o.AllocationID), nil)
		}
		attempted := f.next(c.Seq)
		etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(f.o.AllocationID, attempted), obj.ETag)
		switch f.classify(err) {
		case applied:
			f.setToken(etag, attempted)
			return nil
		case refused:
			last = err
			continue
		case gone:
			return f.fence(op, "key gone: the equal-term key vanished during arbitration"+f.diagnose(ctx), err)
		case assumed:
			return f.assume(ctx, attempted)
		case harness:
			return f.harnessErr(op, err)
		default:
			return f.retryable(op, "arbitration write outcome unknown", err)
		}
	}
	return f.fence(op, fmt.Sprintf("lost equal-term arbitration %d times", maxSameTermAttempts), last)
}

// Transfer hands the chain to a relocation target at the same term: it writes the target's
// allocation as recorded owner (with this node and seq+1) under If-Match and retains the
// returned ETag. Afterwards the instance may only Revert. A refused CAS fences; an unknown
// outcome is resolved by identity (recorded allocation = target) and is otherwise retryable,
// in which case nothing was transferred as far as the instance knows.
func (f *Fence) Transfer(ctx context.Context, targetAllocation string) error {
	const op = "transfer"
	f.ops.Lock()
	defer f.ops.Unlock()
	if err := f.stickyFence(); err != nil {
		return err
	}
	if f.transferred {
		return f.transferredErr(op)
	}
	if targetAllocation == "" || strings.Contains(targetAllocation, "|") {
		return fmt.Errorf("fence: invalid target allocation %q", targetAllocation)
	}
	if f.token == "" {
		return f.fence(op, "does not own the chain: no token held", nil)
	}
	attempted := f.next(f.seq)
	etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(targetAllocation, attempted), f.token)
	switch f.classify(err) {
	case applied:
		f.setToken(etag, attempted)
	case refused:
		return f.fence(op, "lost the CAS: the key moved past the held token"+f.diagnose(ctx), err)
	case gone:
		return f.fence(op, "key gone: the term's key was swept"+f.diagnose(ctx), err)
	case assumed:
		if err := f.assume(ctx, attempted); err != nil {
			return err
		}
	case harness:
		return f.harnessErr(op, err)
	default:
		if f.o.Variant == NoAdoptionOnTransfer {
			return f.retryable(op, "transfer outcome unknown", err)
		}
		if err := f.resolve(ctx, op, attempted, targetAllocation, err); err != nil {
			return err
		}
	}
	f.setTransferred(true, targetAllocation)
	return nil
}

// Revert aborts a relocation: it writes the own allocation back with If-Match on the token
// retained from Transfer. Success means nothing wrote since the transfer, so the target never
// took over: resumed is true and the instance owns the chain again. A refused CAS or a
// vanished key means the target adopted or a higher term swept the key: the instance stands
// down (resumed false, err nil, and it is fenced from then on). An unknown outcome is
// resolved by identity; unresolved it is ErrRetryable. A fenced instance, or one holding no
// token, answers (false, nil). After a Transfer that returned ErrRetryable, Revert presents
// the token held before the transfer: it resumes if the transfer never landed.
func (f *Fence) Revert(ctx context.Context) (resumed bool, err error) {
	const op = "revert"
	f.ops.Lock()
	defer f.ops.Unlock()
	if f.fenced != nil || f.token == "" {
		return false, nil
	}
	token := f.token
	if f.o.Variant == RevertWithFreshToken {
		if obj, err := f.o.Store.Get(ctx, f.key); err == nil {
			token = obj.ETag
		}
	}
	attempted := f.next(f.seq)
	etag, err := f.o.Store.PutIfMatch(ctx, f.key, f.body(f.o.AllocationID, attempted), token)
	switch f.classify(err) {
	case applied:
		f.setToken(etag, attempted)
	case refused, gone:
		// Standing down is the expected answer when the target took over; it is not an
		// error. The instance still never writes again.
		f.fence(op, "stood down: the key moved past the retained token (the target adopted, or a higher term swept it)"+f.diagnose(ctx), err)
		return false, nil
	case assumed:
		if err := f.assume(ctx, attempted); err != nil {
			return false, err
		}
	case harness:
		return false, f.harnessErr(op, err)
	default:
		if err := f.resolve(ctx, op, attempted, f.o.AllocationID, err); err != nil {
			return false, err
		}
	}
	f.setTransferred(false, "")
	return true, nil
}

// gates reports whether the segment gates are enforced.
func (f *Fence) gates() bool { return f.o.Variant != NoSegmentGates }

// PublishAllowed is the segment publish gate: publishing a new reference set is skipped only
// if a strictly higher term exists. It fails open: when the fence cannot be read, publishing
// proceeds (collection failing closed is what keeps hydration safe). A missing own key is not
// supersession. reason explains a refusal or a fail-open decision.
func (f *Fence) PublishAllowed(ctx context.Context) (ok bool, reason string) {
	if !f.gates() {
		return true, "segment gates disabled"
	}
	term := f.Term()
	h, found, err := HighestTerm(ctx, f.o.Store, f.o.Prefix)
	if err != nil {
		if f.o.Variant == PublishFailsClosed {
			return false, fmt.Sprintf("fence unreadable (%v); publish fails closed", err)
		}
		return true, fmt.Sprintf("fence unreadable (%v); publish fails open", err)
	}
	if found && h > term {
		return false, fmt.Sprintf("superseded by term %d", h)
	}
	return true, ""
}

// CollectAllowed is the segment and translog collection gate: deletion is skipped if a
// strictly higher term exists or if the fence cannot be read (fails closed).
func (f *Fence) CollectAllowed(ctx context.Context) (ok bool, reason string) {
	if !f.gates() {
		return true, "segment gates disabled"
	}
	term := f.Term()
	h, found, err := HighestTerm(ctx, f.o.Store, f.o.Prefix)
	if err != nil {
		if f.o.Variant == CollectionFailsOpen {
			return true, fmt.Sprintf("fence unreadable (%v); collection fails open", err)
		}
		return false, fmt.Sprintf("fence unreadable (%v); collection fails closed", err)
	}
	if found && h > term {
		return false, fmt.Sprintf("superseded by term %d", h)
	}
	return true, ""
}

func highestAbove(terms map[int64]string, term int64) (int64, bool) {
	var h int64
	found := false
	for t := range terms {
		if t > term && (!found || t > h) {
			h, found = t, true
		}
	}
	return h, found
}

func keysBelow(terms map[int64]string, term int64) []string {
	var ts []int64
	for t := range terms {
		if t < term {
			ts = append(ts, t)
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i] > ts[j] })
	keys := make([]string, len(ts))
	for i, t := range ts {
		keys[i] = terms[t]
	}
	return keys
}

func termsOf(keys []string) string {
	parts := make([]string, len(keys))
	for i, k := range keys {
		t, _ := ParseKey(k)
		parts[i] = fmt.Sprint(t)
	}
	return strings.Join(parts, ", ")
}
