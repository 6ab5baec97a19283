// Package fencelog is the bench's own fencing protocol (package fence) with the smallest
// write log a user of it would put on top, as a [system.System]: the same code runs inside
// the bench's process or, through cmd fenceproc and [system.Serve], as a separate process
// driven over the process protocol, so the protocol boundary is tested with a protocol whose
// broken variants the catalogue already kills.
//
// The log, under the node's prefix (shard/meta/):
//
//	fence__<inv(term)>                             the fence objects (package fence)
//	log__<inv(term)>__<inv(seq)>__<allocation>     one per write: every op id of the log so far
//
// A promotion at term T seals T (fence.Claim: refuse a higher term, create T's key, sweep
// every lower term, verify, re-list), then reads its restore point: the first log object of
// the listing, the highest term and the highest seq. A write uploads the log object the next
// CAS will stand for (all ops so far plus the new ones: writes that arrive during a sync go
// together into the next), then advances the fence (If-Match);
// only when both succeeded is the write acknowledged, at T. A refused CAS or a swept key is
// fenced (terminal for the node); any other failure is an unknown outcome, retried for a few
// seconds before the write is answered unknown. A read claims a
// term above every term used (so no earlier owner can acknowledge afterwards) and returns its
// restore point, always with the correct protocol: it is the bench's ground truth.
//
// What it guarantees with the correct protocol: an acknowledged op is in every later restore
// point, since its log object was written before the CAS that acknowledged it, and a
// successor's seal sweeps the lower term before it reads, so no lower-term CAS (and no ack)
// can land after a successor's restore read. It supports commanded promotions at distinct
// terms (no equal-term takeover), and relocation: the owner stands down once its sync in
// flight ended, then the bench promotes the target.
//
// In process on the simulated stack the node makes its store calls on the path it is given
// (system.Config.Store) and waits on the scenario's clock (system.Config.Clock): its claim
// retries and its sync retries' pauses and budget are scenario time.
package fencelog

import (
	"context"
	"crypto/rand"
	"crypto/x509"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
	"github.com/fencebench/fencebench/system"
)

// Name and Version are what the nodes declare in their handshake.
const (
	Name    = "fencebench-fence"
	Version = "1"
)

// storeTimeout bounds every store call of a node: a blackholed request ends as an unknown
// outcome well within the bench's answer timeout.
const storeTimeout = 2 * time.Second

// System starts nodes running Variant of the protocol.
type System struct {
	Variant fence.Variant
	// Client is the S3 client library; "" means minio-go.
	Client store.Client
}

var _ system.System = System{}

// Start implements system.System.
func (s System) Start(ctx context.Context, cfg system.Config, emit func(system.Event)) (system.Node, system.Hello, error) {
	v, err := fence.LookupVariant(string(s.Variant))
	if err != nil {
		return nil, system.Hello{}, err
	}
	if cfg.Node == "" || strings.ContainsRune(cfg.Node, '|') {
		return nil, system.Hello{}, fmt.Errorf("node id %q cannot name a copy", cfg.Node)
	}
	sc := store.Config{Endpoint: cfg.Endpoint, Region: cfg.Region, Bucket: cfg.Bucket, AccessKey: cfg.AccessKey,
		SecretKey: cfg.SecretKey, PathStyle: true, Timeout: storeTimeout}
	if v == fence.SDKRetries {
		sc.MaxAttempts = 3
	}
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, system.Hello{}, err
		}
		sc.RootCAs = x509.NewCertPool()
		if !sc.RootCAs.AppendCertsFromPEM(pem) {
			return nil, system.Hello{}, fmt.Errorf("no certificate in %s", cfg.CAFile)
		}
	}
	client := s.Client
	if client == "" {
		client = store.ClientMinio
	}
	st := cfg.Store // in process on the simulated stack: the path itself
	if st == nil {
		if st, err = s3store.New(client, sc); err != nil {
			return nil, system.Hello{}, err
		}
	} else if v == fence.SDKRetries {
		return nil, system.Hello{}, errors.New("sdk-retries retries in the S3 client, which a simulated path has none of")
	}
	var b [6]byte
	_, _ = rand.Read(b[:])
	n := &node{st: st, meta: cfg.Prefix + "shard/meta/", id: cfg.Node, alloc: cfg.Node + "-" + hex.EncodeToString(b[:]),
		variant: v, emit: emit, clock: system.ClockOf(cfg)}
	return n, system.Hello{Name: Name, Version: Version + " (" + string(v) + ")",
		Capabilities: []string{system.CapPromote, system.CapTerms, system.CapRead, system.CapRelocate}}, nil
}

type node struct {
	st      store.Store
	meta    string
	id      string
	alloc   string
	variant fence.Variant
	emit    func(system.Event)
	clock   system.Clock // every wait of the node

	qmu     sync.Mutex // the writes waiting for the next sync
	queue   []*waiter
	syncing bool

	mu     sync.Mutex // one protocol step at a time
	f      *fence.Fence
	term   int64
	ops    []int64
	fenced bool
}

func (n *node) logPrefix() string { return n.meta + "log__" }

func (n *node) logKey(term, seq int64) string {
	return fmt.Sprintf("%s%s__%s__%s", n.logPrefix(), fence.Invert(term), fence.Invert(seq), n.alloc)
}

// Promote implements system.Node.
func (n *node) Promote(ctx context.Context, term int64) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.fenced {
		return &system.Error{Code: system.CodeFenced, Text: "fenced earlier: only a new incarnation may claim again"}
	}
	if n.f != nil && term <= n.term {
		if term == n.term {
			return nil
		}
		return &system.Error{Code: system.CodeNotOwner, Text: fmt.Sprintf("already owner at term %d", n.term)}
	}
	f, ops, err := n.seal(ctx, term, n.variant)
	if err != nil {
		if fence.IsFenced(err) {
			n.fenced = true
			n.emit(system.Event{Event: system.EventFenced, Term: term, Text: err.Error()})
			return &system.Error{Code: system.CodeFenced, Text: err.Error()}
		}
		return &system.Error{Code: system.CodeUnknown, Text: err.Error()}
	}
	n.f, n.term, n.ops = f, term, ops
	n.emit(system.Event{Event: system.EventOwner, Term: term})
	return nil
}

// seal claims term and reads the restore point (before the claim with the
// restore-before-claim variant).
func (n *node) seal(ctx context.Context, term int64, v fence.Variant) (*fence.Fence, []int64, error) {
	st, logs := n.st, n.logPrefix()
	f, err := fence.New(fence.Options{Store: st, Prefix: n.meta, IndexUUID: "fencelog", ShardID: 0,
		AllocationID: n.alloc, NodeID: n.id, Term: term, Variant: v})
	if err != nil {
		return nil, nil, err
	}
	var ops []int64
	var rerr error
	if v == fence.RestoreBeforeClaim {
		ops, rerr = restore(ctx, st, logs)
	}
	for attempt := 0; ; attempt++ {
		err = f.Claim(ctx)
		if err == nil || fence.IsFenced(err) || attempt == 4 || ctx.Err() != nil {
			break
		}
		n.clock.Sleep(ctx, 50*time.Millisecond)
	}
	if err != nil {
		return nil, nil, err
	}
	if v != fence.RestoreBeforeClaim {
		for attempt := 0; attempt < 3; attempt++ {
			if ops, rerr = restore(ctx, st, logs); rerr == nil {
				break
			}
		}
	}
	if rerr != nil {
		return nil, nil, fmt.Errorf("restore read: %w", rerr)
	}
	return f, ops, nil
}

// restore reads the first log object of the listing: the highest term's highest seq.
func restore(ctx context.Context, st store.Store, logs string) ([]int64, error) {
	es, err := st.List(ctx, logs)
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, nil
	}
	o, err := st.Get(ctx, es[0].Key)
	if err != nil {
		return nil, err
	}
	return parseOps(o.Body)
}

func parseOps(b []byte) ([]int64, error) {
	var ops []int64
	for _, f := range strings.Fields(string(b)) {
		v, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("log object: %w", err)
		}
		ops = append(ops, v)
	}
	return ops, nil
}

func formatOps(ops []int64) []byte {
	var b strings.Builder
	for _, op := range ops {
		b.WriteString(strconv.FormatInt(op, 10))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// Write implements system.Node. Writes that arrive while a sync is in flight wait for it and
// go together into the next one (a group commit): one log object and one CAS for all of them.
// Each batch has its own leader, the first write queued after the previous batch was taken:
// a batch's answers are handed out before the next batch touches the store, so no later
// fencing overtakes an earlier acknowledgement.
func (n *node) Write(ctx context.Context, op int64, _ string) (int64, error) {
	w := &waiter{op: op, arrived: n.clock.Now(), done: make(chan result, 1), lead: make(chan struct{})}
	n.qmu.Lock()
	n.queue = append(n.queue, w)
	if !n.syncing {
		n.syncing = true
		close(w.lead)
	}
	n.qmu.Unlock()
	select {
	case r := <-w.done:
		return r.term, r.err
	case <-w.lead:
	}
	n.qmu.Lock()
	batch := n.queue
	n.queue = nil
	n.qmu.Unlock()
	ops := make([]int64, len(batch))
	for i, b := range batch {
		ops[i] = b.op
	}
	// The batch is retried until its oldest write has waited retryBudget, no longer.
	term, err := n.sync(ctx, ops, batch[0].arrived+retryBudget)
	for _, b := range batch {
		b.done <- result{term, err}
	}
	n.qmu.Lock()
	if len(n.queue) > 0 {
		close(n.queue[0].lead)
	} else {
		n.syncing = false
	}
	n.qmu.Unlock()
	r := <-w.done
	return r.term, r.err
}

type waiter struct {
	op      int64
	arrived time.Duration // on the node's clock
	done    chan result
	lead    chan struct{} // closed when this write leads the next batch
}

type result struct {
	term int64
	err  error
}

// retryBudget bounds how long a write may wait, its sync's retries of unknown outcomes
// included, before the write is answered unknown (well within the bench's answer timeout).
const retryBudget = 8 * time.Second

// sync syncs ops, retrying an attempt whose outcome is unknown (a timeout, a 5xx, a lost
// answer) with a growing pause until one is decided or the deadline has passed, as a copy
// that keeps its unacknowledged ops until a sync fully succeeds would.
func (n *node) sync(ctx context.Context, ops []int64, deadline time.Duration) (int64, error) {
	pause := 50 * time.Millisecond
	for {
		term, err := n.syncOnce(ctx, ops)
		if system.CodeOf(err) != system.CodeUnknown || n.clock.Now()+pause > deadline || ctx.Err() != nil {
			return term, err
		}
		n.clock.Sleep(ctx, pause)
		pause = min(2*pause, 500*time.Millisecond)
	}
}

// syncOnce uploads the log object the next CAS stands for, then advances the fence: the ops
// are acknowledged only when both succeeded.
func (n *node) syncOnce(ctx context.Context, ops []int64) (int64, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.fenced:
		return 0, &system.Error{Code: system.CodeFenced, Text: "fenced earlier"}
	case n.f == nil:
		return 0, &system.Error{Code: system.CodeNotOwner, Text: "not promoted"}
	}
	next := append(slices.Clone(n.ops), ops...)
	key := n.logKey(n.term, n.f.Seq()+1)
	if _, err := n.st.Put(ctx, key, formatOps(next)); err != nil {
		return 0, &system.Error{Code: system.CodeUnknown, Text: "log upload: " + err.Error()}
	}
	err := n.f.Advance(ctx)
	switch {
	case err == nil:
		n.ops = next
		return n.term, nil
	case fence.IsFenced(err):
		n.fenced = true
		n.emit(system.Event{Event: system.EventFenced, Term: n.term, Text: err.Error()})
		return 0, &system.Error{Code: system.CodeFenced, Text: err.Error()}
	default:
		return 0, &system.Error{Code: system.CodeUnknown, Text: err.Error()}
	}
}

// Relocate implements system.Relocator: the node stands down once the sync in flight (if any)
// has ended, so every write it acknowledged is in a log object its fence stands for, and it
// answers every later write not_owner. The target's promotion at term seals the fence; the
// relocation itself writes nothing.
func (n *node) Relocate(_ context.Context, term int64, target string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case n.fenced:
		return &system.Error{Code: system.CodeFenced, Text: "fenced earlier"}
	case n.f == nil:
		return &system.Error{Code: system.CodeNotOwner, Text: "not the owner: nothing to hand over"}
	case term <= n.term:
		return &system.Error{Code: system.CodeNotOwner, Text: fmt.Sprintf("relocation to %s at term %d, not above this node's %d", target, term, n.term)}
	}
	n.f = nil
	return nil
}

// Read implements system.Node: a claim at term (the correct protocol), then its restore point.
func (n *node) Read(ctx context.Context, term int64) ([]int64, error) {
	if term <= 0 {
		return nil, errors.New("read needs a term above every term used")
	}
	_, ops, err := n.seal(ctx, term, fence.Correct)
	if err != nil {
		return nil, err
	}
	return ops, nil
}
