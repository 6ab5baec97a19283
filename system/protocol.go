package system

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/store"
)

// Version names the protocol; a node answers init with the same string.
const Version = "fencebench-system/1"

// Message types. The bench sends init, write, promote, relocate and read, each with an id; a node
// answers each with the matching *_ok or error (in_reply_to the request's id) and may send
// events at any time.
const (
	TypeInit      = "init"
	TypeInitOK    = "init_ok"
	TypeWrite     = "write"
	TypeWriteOK   = "write_ok"
	TypePromote   = "promote"
	TypePromoteOK = "promote_ok"
	// TypeRelocate asks the owner to hand the shard to the node Target, which the bench
	// promotes at Term once the owner answered relocate_ok (capability relocate).
	TypeRelocate   = "relocate"
	TypeRelocateOK = "relocate_ok"
	TypeRead       = "read"
	TypeReadOK     = "read_ok"
	TypeError      = "error"
	TypeEvent      = "event"
)

// Error codes a node answers a request with.
const (
	// CodeFenced: the node knows it may no longer acknowledge (another copy superseded it).
	CodeFenced = string(history.SigFenced)
	// CodeNotOwner: the node does not own the shard (never promoted, or stood down) and did
	// not try the write.
	CodeNotOwner = "not_owner"
	// CodeUnknown: the outcome is not known (a timeout, a lost answer). The write may or may
	// not be durable; it is judged as such, never as a loss.
	CodeUnknown = "unknown"
	// CodeUnsupported: the node does not implement the request.
	CodeUnsupported = "unsupported"
)

// Codes lists every error code of the protocol.
var Codes = []string{CodeFenced, CodeNotOwner, CodeUnknown, CodeUnsupported}

// Events a node reports on its own (message type event, field event).
const (
	// EventOwner: the node now owns the shard at term (after a promotion, or an election it
	// won by itself).
	EventOwner = "owner"
	// EventFenced: the node learned it was superseded at term.
	EventFenced = string(history.SigFenced)
)

// EventNames lists every event of the protocol.
var EventNames = []string{EventOwner, EventFenced}

// Capabilities a node declares in init_ok. The bench refuses, before anything runs, a
// scenario step the system cannot take, naming the capability it lacks.
const (
	// CapPromote: the node takes promote at a term (a cluster manager assigns terms).
	CapPromote = "promote"
	// CapTakeover: a promote may name a term another copy already holds (equal-term twin).
	CapTakeover = "takeover"
	// CapSelfElect: leadership is the system's own business; the node reports owner events.
	CapSelfElect = "self-elect"
	// CapTerms: write_ok carries the term the write was acknowledged at, and the bench
	// checks that one copy at a time acknowledges per term.
	CapTerms = "terms"
	// CapRead: a fresh node answers read with every op id the store holds durably (required).
	CapRead = "read"
	// CapRelocate: the node takes relocate to a named node: it stands down (acknowledges
	// nothing more, and everything it acknowledged is durable), then the bench promotes the
	// target at the relocation's term.
	CapRelocate = "relocate"
)

// CapabilityNames lists every capability of the protocol.
var CapabilityNames = []string{CapPromote, CapTakeover, CapSelfElect, CapTerms, CapRead, CapRelocate}

// Message is one line of the protocol, in either direction. Which fields apply depends on
// Type; the others stay zero and are omitted.
type Message struct {
	Type      string `json:"type"`
	ID        int64  `json:"id,omitempty"`
	InReplyTo int64  `json:"in_reply_to,omitempty"`

	// init: the node's configuration. Endpoint is the node's own fault path to the store
	// (path-style addressing, SigV4 with AccessKey/SecretKey and Region); every key the node
	// touches must start with Prefix. CAFile, when set, is the only CA the endpoint's HTTPS
	// certificate may be verified against.
	Protocol  string `json:"protocol,omitempty"`
	Node      string `json:"node,omitempty"`
	Endpoint  string `json:"endpoint,omitempty"`
	Region    string `json:"region,omitempty"`
	Bucket    string `json:"bucket,omitempty"`
	Prefix    string `json:"prefix,omitempty"`
	AccessKey string `json:"access_key,omitempty"`
	SecretKey string `json:"secret_key,omitempty"`
	CAFile    string `json:"ca_file,omitempty"`

	// init_ok: what the system is and can do.
	Name         string   `json:"name,omitempty"`
	Version      string   `json:"version,omitempty"`
	Capabilities []string `json:"capabilities,omitempty"`

	// write, write_ok: the client op (write_ok repeats it).
	Op      int64  `json:"op,omitempty"`
	Payload string `json:"payload,omitempty"`
	// write_ok, promote, promote_ok, relocate, relocate_ok, read, event: the term (for
	// relocate, the term the bench will promote the target at).
	Term int64 `json:"term,omitempty"`
	// relocate: the node id the shard moves to.
	Target string `json:"target,omitempty"`
	// read_ok: every op id the store holds durably.
	Ops []int64 `json:"ops,omitempty"`

	// error: Code and Text; event: Event (and Text).
	Code  string `json:"code,omitempty"`
	Text  string `json:"text,omitempty"`
	Event string `json:"event,omitempty"`
}

// String describes a message without credentials.
func (m Message) String() string {
	c := m
	if c.AccessKey != "" || c.SecretKey != "" {
		c.AccessKey, c.SecretKey = "<redacted>", "<redacted>"
	}
	type plain Message // no String method: printing it does not recurse
	return fmt.Sprintf("%+v", plain(c))
}

// Config is what a node is told at init.
type Config struct {
	Node      string
	Endpoint  string
	Region    string
	Bucket    string
	Prefix    string
	AccessKey string
	SecretKey string
	CAFile    string

	// Store and Clock are given only to a node started in the bench's process on the
	// simulated stack (InProcess with --stack sim), and never cross a process boundary.
	// Store is then the node's fault path itself, a store.Store over the simulated store
	// (Endpoint and the credentials are empty): the node makes its store calls on it. Clock
	// is the scenario's time: the node waits on it, not on the wall clock (every sleep,
	// every deadline), so the run's time stands still while the node works and jumps ahead
	// while everyone waits.
	Store store.Store
	Clock Clock
}

// Clock is the time a node inside the bench's process lives in.
type Clock interface {
	// Now is the time passed since the clock started.
	Now() time.Duration
	// Sleep waits d; false when ctx ended first.
	Sleep(ctx context.Context, d time.Duration) bool
}

// ClockOf is cfg's clock: the scenario's, or the wall clock when none was given.
func ClockOf(cfg Config) Clock {
	if cfg.Clock != nil {
		return cfg.Clock
	}
	return wallClock{time.Now()}
}

type wallClock struct{ start time.Time }

func (c wallClock) Now() time.Duration { return time.Since(c.start) }

func (wallClock) Sleep(ctx context.Context, d time.Duration) bool { return wait.For(ctx, d) }

// String describes a configuration without credentials.
func (c Config) String() string {
	return fmt.Sprintf("node=%s endpoint=%s bucket=%s prefix=%s", c.Node, c.Endpoint, c.Bucket, c.Prefix)
}

func (c Config) message() Message {
	return Message{Type: TypeInit, Protocol: Version, Node: c.Node, Endpoint: c.Endpoint, Region: c.Region,
		Bucket: c.Bucket, Prefix: c.Prefix, AccessKey: c.AccessKey, SecretKey: c.SecretKey, CAFile: c.CAFile}
}

func configOf(m Message) Config {
	return Config{Node: m.Node, Endpoint: m.Endpoint, Region: m.Region, Bucket: m.Bucket, Prefix: m.Prefix,
		AccessKey: m.AccessKey, SecretKey: m.SecretKey, CAFile: m.CAFile}
}

// Hello is a node's answer to init.
type Hello struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
}

// Has reports whether the node declared capability c.
func (h Hello) Has(c string) bool { return slices.Contains(h.Capabilities, c) }

// Event is something a node reports on its own.
type Event struct {
	Node  string
	Event string // EventOwner or EventFenced
	Term  int64
	Text  string
}

// Error is a node's answer that a request did not succeed, with one of Codes.
type Error struct {
	Code string
	Text string
}

func (e *Error) Error() string {
	if e.Text == "" {
		return e.Code
	}
	return e.Code + ": " + e.Text
}

// CodeOf returns the protocol code of err ("" when err is not an *Error).
func CodeOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return ""
}

// ErrCrashed is the outcome of a request in flight when its node was killed: unknown.
var ErrCrashed = errors.New("the node was killed before it answered")

// HarnessError is a node that broke the protocol: it exited, printed something that is not
// the protocol, answered what was never asked, or stayed silent past the answer timeout. It
// names the node and, for a bad line, its number; it is never a verdict about the system.
type HarnessError struct {
	Node string
	Line int // the stdout line at fault, 0 when no line is
	Msg  string
}

func (e *HarnessError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("node %s: stdout line %d: %s", e.Node, e.Line, e.Msg)
	}
	return fmt.Sprintf("node %s: %s", e.Node, e.Msg)
}

// IsHarness reports whether err is (or wraps) a HarnessError.
func IsHarness(err error) bool {
	var h *HarnessError
	return errors.As(err, &h)
}

// Node is one copy of a system, as the bench drives it: the protocol's requests as method
// calls. A [Proc] is a Node in another process; a Go system implements Node directly and
// runs in the bench's process ([Launcher] InProcess) or behind [Serve] as a process.
//
// Answers: a nil error is the *_ok message; an *Error is the node's error message. Any other
// error from a Proc is the harness's (HarnessError, ErrCrashed, a context's end).
type Node interface {
	// Write is a client write of op; on success it returns the term it was acknowledged at
	// (0 when the system declares no terms).
	Write(ctx context.Context, op int64, payload string) (term int64, err error)
	// Promote makes the node the owner at term (commanded systems).
	Promote(ctx context.Context, term int64) error
	// Read returns every op id the store holds durably, as a fresh node recovering at term
	// (above every term used) would.
	Read(ctx context.Context, term int64) ([]int64, error)
}

// Relocator is a Node that takes relocate (capability relocate). Relocate hands the shard to
// the node target, which the bench promotes at term once Relocate returned nil: it returns
// once the node stood down, so that it acknowledges no write after it and every write it
// acknowledged before is durable. An error means the shard did not move (the bench does not
// promote the target); a node that stood down anyway answers its later writes not_owner.
type Relocator interface {
	Relocate(ctx context.Context, term int64, target string) error
}

// System starts the nodes of a Go system inside the bench's process. emit reports the node's
// own events; the node stops when ctx ends.
type System interface {
	Start(ctx context.Context, cfg Config, emit func(Event)) (Node, Hello, error)
}
