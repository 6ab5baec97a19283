package certify

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/fencebench/fencebench/store"
)

// Probe is one check of the store's conditional-write semantics.
type Probe struct {
	// ID is the probe's number in §6 of the object-store design notes, with its group letter:
	// "A1", "B9", ...
	ID string
	// Title names the probe in a few words.
	Title string
	// Class says whether failing the probe disqualifies the store.
	Class Class
	// Asserts says what the probe checks (or records).
	Asserts string
	run     func(ctx context.Context, t *trial)
}

func (p Probe) result(c store.Client) Result {
	return Result{ID: p.ID, Title: p.Title, Class: p.Class, Client: string(c), Asserts: p.Asserts}
}

// Probes returns every probe, in the order a run executes them.
func Probes() []Probe {
	return []Probe{
		{ID: "A1", Title: "create on an existing key is refused", Class: Hard, run: probeA1,
			Asserts: "plain PUT, then PUT If-None-Match: * answers 412 (409 accepted), never 200; GET returns the original content and ETag"},
		{ID: "A2", Title: "stale If-Match is refused", Class: Hard, run: probeA2,
			Asserts: "PUT v1 (E1), PUT v2 (E2), then PUT If-Match: E1 answers 412 (409 accepted); GET returns v2"},
		{ID: "A3", Title: "bogus ETag is refused", Class: Hard, run: probeA3,
			Asserts: `PUT If-Match: "00000000000000000000000000000000" on an existing key answers 412 (409 accepted); content intact`},
		{ID: "A4", Title: "create on a fresh key succeeds", Class: Hard, run: probeA4,
			Asserts: "PUT If-None-Match: * on a fresh key answers 200 with an ETag; GET returns the body and that ETag"},
		{ID: "A5", Title: "If-Match on a missing key never creates it", Class: Hard, run: probeA5,
			Asserts: "PUT If-Match on a missing key answers 404 or 412 (recorded which), never 200; no object appears"},
		{ID: "A6", Title: "If-Match with the current ETag succeeds", Class: Informational, run: probeA6,
			Asserts: "PUT If-Match: <current ETag> answers 200; the new ETag differs from the old one and equals what GET and LIST show"},
		{ID: "B9", Title: "N-way create race has exactly one winner", Class: Hard, run: probeB9,
			Asserts: "N racers (own connections) PUT If-None-Match: * on one fresh key: exactly one 2xx, every other answer 412 or 409, GET returns the winner's nonce; repeated per N over the configured keys"},
		{ID: "B10", Title: "N-way CAS race from one ETag has exactly one winner", Class: Hard, run: probeB10,
			Asserts: "N racers (own connections) PUT If-Match: E0 on one key: exactly one 2xx, every other answer 412 or 409, GET returns the winner's nonce; repeated per N over the configured keys"},
		{ID: "B11", Title: "CAS chain is linearizable", Class: Hard, run: probeB11,
			Asserts: "M writers loop GET, then PUT If-Match of value+1 with a nonce and a prev pointer: the 2xx count equals the final counter, the prev chain has no fork and holds every acknowledged write, and porcupine finds the history linearizable for a CAS register"},
		{ID: "C14", Title: "identical content gives the identical ETag", Class: Informational, run: probeC14,
			Asserts: "records whether PUT X (E), PUT Y, PUT X gives E again (the ABA hazard)"},
		{ID: "C15", Title: "ABA exploit, and the seq field that defeats it", Class: Informational, run: probeC15,
			Asserts: "records whether a stale If-Match: E(X) succeeds after X, Y, X; requires that with a seq field in the body the same sequence is refused and seq'd writes never reuse an ETag"},
		{ID: "D17", Title: "read-after-CAS from a second client", Class: Informational, run: probeD17,
			Asserts: "after each successful If-Match write, a second client's GET and LIST show the new ETag (zero stale reads over the configured iterations)"},
		{ID: "D18", Title: "a 412 is explained by an immediate GET", Class: Informational, run: probeD18,
			Asserts: "after a refused If-Match or If-None-Match: *, an immediate GET shows a state that explains the refusal (no phantom 412)"},
		{ID: "E19", Title: "DELETE If-Match with a stale ETag", Class: Informational, run: probeE19,
			Asserts: "records whether DELETE If-Match: <stale> is honoured (412, object kept) or ignored (2xx, object deleted); the protocol never deletes conditionally"},
		{ID: "E20", Title: "DeleteObjects per-key reporting", Class: Informational, run: probeE20,
			Asserts: "records DELETE If-Match on a missing key and DeleteObjects with a stale <ETag>; requires the bench's DeleteMany to report no per-key failure for existing and missing keys and to delete the existing ones"},
		{ID: "F24", Title: "lost response is ambiguous and settled by read-back", Class: Informational, run: probeF24,
			Asserts: "a create whose response the client's fault path drops is reported as ambiguous (never as success or 412) and a read-back finds the client's own nonce; records what a retrying client answers instead"},
	}
}

// Select returns the probes with the given IDs (case-insensitive), in run order; no IDs
// means every probe.
func Select(ids []string) ([]Probe, error) {
	all := Probes()
	if len(ids) == 0 {
		return all, nil
	}
	want := map[string]bool{}
	for _, id := range ids {
		id = strings.ToUpper(strings.TrimSpace(id))
		if !slices.ContainsFunc(all, func(p Probe) bool { return p.ID == id }) {
			known := make([]string, len(all))
			for i, p := range all {
				known[i] = p.ID
			}
			return nil, fmt.Errorf("certify: unknown probe %q (known: %s)", id, strings.Join(known, ", "))
		}
		want[id] = true
	}
	var out []Probe
	for _, p := range all {
		if want[p.ID] {
			out = append(out, p)
		}
	}
	return out, nil
}
