package reports

import (
	"net/url"
	"time"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

// Run is everything a report shows about one bench run. The runner fills it after the cells
// have been judged; [Write] renders it.
type Run struct {
	// ID is the run id; it names the results/<run-id>/ folder.
	ID string
	// Started is the wall-clock start of the run.
	Started time.Time
	// Duration is the wall-clock length of the whole run.
	Duration time.Duration
	// BenchVersion is the version of the bench that produced the run.
	BenchVersion string
	// Command is the command line that produced the run.
	Command string
	// Store identifies the object store the run exercised.
	Store StoreInfo
	// Cells are the cells the run executed, in execution order.
	Cells []Cell
}

// StoreInfo identifies the object store of a run. It holds no credentials by design; user
// information embedded in Endpoint is redacted before it is shown or written.
type StoreInfo struct {
	// Endpoint is the S3 endpoint URL.
	Endpoint string `json:"endpoint,omitempty"`
	// Server is the server's version string, as far as the store reveals it.
	Server string `json:"server,omitempty"`
	// Stack is how the store was provided: "local", "containers" or "external".
	Stack string `json:"stack,omitempty"`
	// Bucket is the bucket the run used.
	Bucket string `json:"bucket,omitempty"`
	// Prefix is the key prefix the run confined itself to.
	Prefix string `json:"prefix,omitempty"`
}

// redacted returns s with user information removed from the endpoint URL.
func (s StoreInfo) redacted() StoreInfo {
	s.Endpoint = redactEndpoint(s.Endpoint)
	return s
}

func redactEndpoint(ep string) string {
	u, err := url.Parse(ep)
	if err != nil || u.User == nil {
		return ep
	}
	u.User = url.User("REDACTED")
	return u.String()
}

// Cell is one scenario run with one protocol variant: the unit of a verdict, a folder and a
// JUnit testcase.
type Cell struct {
	// ID is the cell's folder name: the scenario name, or scenario--variant.
	ID string
	// Scenario is the scenario name.
	Scenario string
	// Description is the scenario's description.
	Description string
	// Variant is "correct" or the name of the broken protocol variant.
	Variant string
	// Kill marks a kill-matrix cell: a broken variant the bench must catch.
	Kill bool
	// Violates lists the invariants the variant must break (empty: any).
	Violates []string
	// Seed is the seed the cell ran with.
	Seed uint64
	// Client is the S3 client library: "minio-go" or "aws-sdk".
	Client string
	// Verdict is the final verdict, adjusted by the cell's expectation; for a kill cell pass
	// means the variant was killed.
	Verdict checker.Verdict
	// Result is the checker's judgement.
	Result checker.Result
	// Error is the harness error text, if any.
	Error string
	// Duration is the wall-clock length of the cell.
	Duration time.Duration
	// Rerun is the exact command that reruns this cell with its seed.
	Rerun string
	// Events is the cell's history.
	Events []history.Event
	// Ledger is the L7 fault proxy's request ledger.
	Ledger []history.LedgerEntry
	// Files lists the files persisted in the cell folder, by name, to link to.
	Files []string
}
