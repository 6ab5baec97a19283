package fence

import (
	"errors"
	"fmt"
)

// Outcome sentinels. Every error a Fence method returns for a protocol outcome is an *Error
// wrapping exactly one of them; store configuration errors (store.ErrConfig) are returned
// wrapped but unclassified, because they are a harness problem, not a protocol outcome.
var (
	// ErrFenced is returned when this instance has lost the chain for good: a strictly higher
	// term exists, it is not the recorded owner of an equal-term key, its key is gone, the
	// store refused its CAS, or an equal-term twin took the key mid-claim. It is terminal: the
	// instance never writes again, at any term, and every later call returns it too.
	ErrFenced = errors.New("fenced")
	// ErrRetryable is returned when an outcome is unknown or transient (a timeout, a lost
	// response that identity resolution could not attribute to this instance, a sweep that
	// left a lower term behind). Nothing was lost; the caller retries later.
	ErrRetryable = errors.New("retryable")
	// ErrIdentity is returned when the object at a fence key carries another shard's identity,
	// a term other than its key's, or unparseable content. It is a loud I/O error that means
	// two shards resolved the same key or the store is corrupt; it is never a fencing verdict.
	ErrIdentity = errors.New("fence identity mismatch")
	// ErrTransferred is returned by Claim, Advance and Transfer on an instance that
	// transferred ownership to a relocation target and has not reverted: the only call it
	// may still make is Revert. It is not terminal.
	ErrTransferred = errors.New("ownership transferred")
)

// Error describes one protocol outcome.
type Error struct {
	Kind   error  // ErrFenced, ErrRetryable, ErrIdentity or ErrTransferred
	Op     string // "claim", "advance", "transfer", "revert"
	Key    string // the fence key the instance works on
	Reason string // why, in words: "superseded by term 7", "not the recorded owner ..."
	Err    error  // the store error behind the outcome, if any
}

func (e *Error) Error() string {
	s := fmt.Sprintf("fence %s %s: %v: %s", e.Op, e.Key, e.Kind, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap exposes the outcome sentinel and the underlying store error to errors.Is/As.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Kind}
	}
	return []error{e.Kind, e.Err}
}

// IsFenced reports whether err says the instance is fenced.
func IsFenced(err error) bool { return errors.Is(err, ErrFenced) }

// IsRetryable reports whether err is a transient, retryable outcome.
func IsRetryable(err error) bool { return errors.Is(err, ErrRetryable) }
