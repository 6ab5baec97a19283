package history

import (
	"io"
	"time"
)

// LedgerEntry is one request as the L7 fault proxy saw it: what the client sent, what fault
// rule (if any) fired, what the store answered and whether the client received that answer.
// The ledger is ground truth for resolving ambiguous operations: an entry with a 2xx Status
// and Delivered false is a write the store applied and the client never heard about.
type LedgerEntry struct {
	ID          int64         `json:"id"`
	Time        time.Duration `json:"time"` // run-relative, when the request arrived
	Done        time.Duration `json:"done"` // run-relative, when the proxy finished with it
	Writer      string        `json:"writer"`
	Method      string        `json:"method"`
	Key         string        `json:"key"` // object key without the bucket ("" for bucket-level calls)
	Query       string        `json:"query,omitempty"`
	Keys        []string      `json:"keys,omitempty"` // DeleteObjects: the keys the batch named, as sent
	IfMatch     string        `json:"if_match,omitempty"`
	IfNoneMatch string        `json:"if_none_match,omitempty"`
	Rule        string        `json:"rule,omitempty"`   // name of the rule that fired
	Action      string        `json:"action,omitempty"` // its action
	Forwarded   bool          `json:"forwarded"`        // the store received the request
	Copies      int           `json:"copies,omitempty"` // times the store received it (duplicate: 2)
	Status      int           `json:"status,omitempty"` // the store's status (0: none)
	ETag        string        `json:"etag,omitempty"`   // the store's ETag, quotes stripped
	Code        string        `json:"code,omitempty"`   // the store's S3 error code
	// Injected is the status the fault proxy answered in the store's place (a status rule),
	// 0 when it did not: the store never saw such a request, and its Status stays 0.
	Injected  int    `json:"injected,omitempty"`
	Delivered bool   `json:"delivered"` // the client received the store's answer
	Err       string `json:"err,omitempty"`
	// Refused says why the fault proxy answered the request itself with an S3 error instead of
	// forwarding it (a signature that does not verify, a key outside the run's prefix); the
	// store never saw it.
	Refused string `json:"refused,omitempty"`
}

// Applied reports whether the store accepted the request (a 2xx answer).
func (l LedgerEntry) Applied() bool { return l.Forwarded && l.Status >= 200 && l.Status < 300 }

// EncodeLedger writes entries as JSON Lines.
func EncodeLedger(w io.Writer, entries []LedgerEntry) error { return encodeLines(w, entries) }

// DecodeLedger reads JSON Lines written by EncodeLedger, as strictly as Decode.
func DecodeLedger(rd io.Reader) ([]LedgerEntry, error) { return decodeLines[LedgerEntry](rd, "ledger") }
