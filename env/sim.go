package env

import (
	"github.com/fencebench/fencebench/internal/wait"
	"github.com/fencebench/fencebench/store"
	"github.com/fencebench/fencebench/store/s3store"
)

// Sim is the simulated stack: an in-memory store with the conditional-write semantics the
// store contract suite holds MinIO to, inside the bench's process, on scenario time. By
// default that time is virtual: it stands still while the bench has work to do at the current
// instant and jumps to the next wake-up once it has none, so a loaded machine runs a schedule
// slower but never differently. The runner reaches it through simulated fault paths (package
// sim) instead of Toxiproxy and the HTTP fault proxy.
type Sim struct {
	Mem *store.Mem
	// Speed is 0 for virtual time (the default), else the factor of a clock that runs Speed
	// times faster than real time (1: real time), to watch a schedule unfold at a set pace.
	Speed float64
}

// NewSim returns a simulated stack over an empty in-memory store.
func NewSim(speed float64) *Sim { return &Sim{Mem: store.NewMem(), Speed: speed} }

// Config implements Env: the simulated store has no endpoint and no credentials.
func (s *Sim) Config() store.Config {
	return store.Config{Endpoint: "sim://memory", Bucket: "sim", PathStyle: true}
}

// Upstream implements Env: there is no network between the bench and the store.
func (s *Sim) Upstream() string { return "" }

// Info implements Env.
func (s *Sim) Info() store.Info {
	return store.Info{Stack: "sim", Endpoint: "sim://memory", Server: "in-memory store (simulated stack)", Bucket: "sim"}
}

// LogPath implements Env.
func (s *Sim) LogPath() string { return "" }

// Alive implements Env: the store lives as long as the process.
func (s *Sim) Alive() bool { return true }

// Store is the simulated store itself, for the callers that read it directly (the auditor,
// the pre-flight, the prefix claim).
func (s *Sim) Store() store.Store { return s.Mem }

// Clock is the scenario time the stack runs on.
func (s *Sim) Clock() *wait.Clock {
	if s.Speed <= 0 {
		return wait.Virtual()
	}
	return wait.Scaled(s.Speed)
}

// Direct is an Env whose store the bench holds in its own process.
type Direct interface {
	Store() store.Store
}

// Client returns a direct client of e's store (no fault path): the in-process store itself,
// or a new client of the named adapter.
func Client(e Env, client store.Client) (store.Store, error) {
	if d, ok := e.(Direct); ok {
		return d.Store(), nil
	}
	return s3store.New(client, e.Config())
}
