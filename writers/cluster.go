package writers

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/internal/guard"
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/store"
)

// Config is what every writer of one run shares.
type Config struct {
	// Shard is the one shard the writers are copies of.
	Shard Shard
	// Recorder receives every event. Required.
	Recorder *history.Recorder
	// Variant is the protocol variant; "" means fence.Correct. Fence-layer variants are
	// passed to every fence instance; the writers themselves read
	// cas-concurrent-with-metadata, restore-before-claim, hydrate-before-seal,
	// target-ignores-recoveries, recovery-no-relocation-check, no-retention,
	// resume-stays-blocked and target-refuses-empty-shard.
	Variant fence.Variant
	// SyncEvery starts a sync once this many ops are buffered; 0 means 20.
	SyncEvery int
	// SyncInterval starts a sync of whatever is buffered at this period; 0 means 50ms.
	SyncInterval time.Duration
	// RetryBackoff is the first pause before retrying a sync or a protocol step whose
	// outcome was unknown; it doubles up to 16 times that. 0 means 10ms.
	RetryBackoff time.Duration
	// NoFence runs the sync pipeline without the fence CAS (.tlog -> metadata -> ack). It
	// exists only to measure what the CAS costs; it is not a protocol and acknowledges
	// writes no fence protects. Promotions still seal.
	NoFence bool
	// Segments shapes segment refreshes and collection.
	Segments SegmentPolicy
	// Guard receives the panics of the writers' goroutines (sync loops, traffic clients,
	// fetches, handoffs); nil means guard.Default.
	Guard *guard.Sink
	// Clock is the time the writers live in: every interval, backoff, timeout and traffic
	// rate above is in its scenario time. nil means real time.
	Clock *wait.Clock
}

// SegmentPolicy shapes the simulated segment flow.
type SegmentPolicy struct {
	// FilesPerRefresh is the number of segment files a refresh uploads; 0 means 2.
	FilesPerRefresh int
	// MaxRefs bounds a reference set: a refresh keeps the newest MaxRefs files (older ones
	// are "merged away" and become garbage); 0 means 6.
	MaxRefs int
	// Retain is how many of its own latest reference sets a collection keeps; 0 means
	// DefaultRetain.
	Retain int
}

// DefaultRetain is the reference sets a collection keeps unless the policy says otherwise.
const DefaultRetain = 2

func (c *Config) defaults() error {
	if c.Recorder == nil {
		return errors.New("writers: Config.Recorder is required")
	}
	if c.Shard.Prefix != "" && !strings.HasSuffix(c.Shard.Prefix, "/") {
		return fmt.Errorf("writers: shard prefix %q does not end in /", c.Shard.Prefix)
	}
	if c.Shard.IndexUUID == "" || strings.ContainsAny(c.Shard.IndexUUID, "/|") || c.Shard.ID < 0 {
		return fmt.Errorf("writers: invalid shard %+v", c.Shard)
	}
	v, err := fence.LookupVariant(string(c.Variant))
	if err != nil {
		return err
	}
	c.Variant = v
	if c.SyncEvery <= 0 {
		c.SyncEvery = 20
	}
	if c.SyncInterval <= 0 {
		c.SyncInterval = 50 * time.Millisecond
	}
	if c.RetryBackoff <= 0 {
		c.RetryBackoff = 10 * time.Millisecond
	}
	if c.Segments.FilesPerRefresh <= 0 {
		c.Segments.FilesPerRefresh = 2
	}
	if c.Segments.MaxRefs <= 0 {
		c.Segments.MaxRefs = 6
	}
	if c.Segments.Retain <= 0 {
		c.Segments.Retain = DefaultRetain
	}
	return nil
}

// Cluster is the set of writers of one run: the shared configuration, the signal bus, the
// op-id counter and the router that sends client traffic to whichever writer believes it is
// primary.
type Cluster struct {
	cfg Config
	bus *Bus

	nextOp   atomic.Int64
	allocSeq atomic.Int64
	// grants counts promotions: a recovery that sees it move knows the primary changed.
	grants atomic.Int64

	mu      sync.Mutex
	writers []*Writer
	byID    map[string]*Writer
	maxTerm int64

	// bg tracks goroutines that outlive the call that started them (a delayed or late
	// handoff delivery), so Close can wait for them.
	bg sync.WaitGroup
}

// NewCluster validates cfg and returns an empty cluster.
func NewCluster(cfg Config) (*Cluster, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	return &Cluster{cfg: cfg, bus: NewBus(), byID: map[string]*Writer{}}, nil
}

// Config returns the cluster's configuration with defaults applied.
func (c *Cluster) Config() Config { return c.cfg }

// Bus is the cluster's signal bus.
func (c *Cluster) Bus() *Bus { return c.bus }

// Recorder is the cluster's recorder.
func (c *Cluster) Recorder() *history.Recorder { return c.cfg.Recorder }

// NextOp returns a fresh op id: unique and increasing across the run, shared with Traffic.
func (c *Cluster) NextOp() int64 { return c.nextOp.Add(1) }

// WriterSpec describes a shard copy to add.
type WriterSpec struct {
	// ID names the writer in every event; unique in the cluster; must not contain "|".
	ID string
	// NodeID is the node the copy runs on; "" means ID. It must not contain "|", which a
	// fence body cannot hold.
	NodeID string
	// Store is the writer's own client (the runner's client over the writer's fault path).
	// The writer wraps it in a RecordingStore and its pause gate.
	Store store.Store
}

// AddWriter adds a standby copy with a fresh allocation id.
func (c *Cluster) AddWriter(spec WriterSpec) (*Writer, error) {
	if spec.ID == "" || strings.ContainsAny(spec.ID, "|/ ") {
		return nil, fmt.Errorf("writers: invalid writer id %q", spec.ID)
	}
	if spec.Store == nil {
		return nil, fmt.Errorf("writers: writer %s has no store", spec.ID)
	}
	if spec.NodeID == "" {
		spec.NodeID = spec.ID
	}
	if strings.Contains(spec.NodeID, "|") {
		// Every fence body this copy writes names its node; one a body cannot hold would fail
		// each of its promotions and handoffs.
		return nil, fmt.Errorf("writers: writer %s: invalid node id %q: it must not contain '|'", spec.ID, spec.NodeID)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.byID[spec.ID]; dup {
		return nil, fmt.Errorf("writers: duplicate writer id %q", spec.ID)
	}
	w := newWriter(c, spec, fmt.Sprintf("%s-alloc%d", spec.ID, c.allocSeq.Add(1)))
	c.writers = append(c.writers, w)
	c.byID[spec.ID] = w
	return w, nil
}

// Writer returns the writer with id, or nil.
func (c *Cluster) Writer(id string) *Writer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.byID[id]
}

// Writers returns every writer in the order they were added.
func (c *Cluster) Writers() []*Writer {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]*Writer(nil), c.writers...)
}

// Primaries is the router's view: every writer that currently believes it is primary
// (active, including one that is paused or already superseded without knowing it), in the
// order they were added. A zombie stays here until it learns it is fenced.
func (c *Cluster) Primaries() []*Writer {
	var out []*Writer
	for _, w := range c.Writers() {
		if w.BelievesPrimary() {
			out = append(out, w)
		}
	}
	return out
}

// MaxTerm is the highest term any writer of the cluster was promoted at.
func (c *Cluster) MaxTerm() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.maxTerm
}

func (c *Cluster) noteTerm(t int64) {
	c.mu.Lock()
	if t > c.maxTerm {
		c.maxTerm = t
	}
	c.mu.Unlock()
}

// Settle waits until no writer has buffered ops or a sync in flight (a paused or partitioned
// writer never settles: bound ctx). It returns ctx's error if ctx ended first.
func (c *Cluster) Settle(ctx context.Context) error {
	for _, w := range c.Writers() {
		if err := w.Settle(ctx); err != nil {
			return err
		}
	}
	return nil
}

// Close stops every writer (without recording a crash) and waits for every goroutine the
// cluster started. Traffic must be stopped first.
func (c *Cluster) Close() {
	for _, w := range c.Writers() {
		w.Close()
	}
	c.bg.Wait()
}
