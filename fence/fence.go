package fence

import (
	"context"
	"errors"
	"fmt"
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

// stickyFence returns the fenced verdict if there is one. Fenced is terminal, at any term:
// only a new instance (a new incarnation of the copy) may claim again.
func (f *Fence) stickyFence() error {
	if f.fenced == nil {
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
