package netpath

import (
	"fmt"

	"github.com/fencebench/fencebench/faults"
)

// AddRule installs an faults.L7 rule on the path. It takes effect for requests arriving after it
// returns; traffic may flow meanwhile.
// faults.Misdirect is refused: the proxy does not carry it (the simulated stack does).
func (p *Path) AddRule(r faults.Rule) error {
	if r.Action == faults.Misdirect {
		return fmt.Errorf("faults: rule %s: misdirect is carried by the simulated stack only (--stack sim)", r.Name)
	}
	return p.rules.Add(r)
}

// RemoveRule uninstalls the named rule; requests already past matching are not affected. Its
// Fired count remains readable.
func (p *Path) RemoveRule(name string) error { return p.rules.Remove(name) }

// Fired reports how many times rules of that name fired on this path, over the path's
// lifetime (removed rules included): the attestation that a fault was actually injected.
func (p *Path) Fired(name string) int { return p.rules.Fired(name) }

// DropAnswers stops the answer direction of the path (a timeout toxic with timeout 0 on the
// downstream stream): requests still reach the store, which applies them, but no byte of its
// answer reaches the client and nothing is closed. Heal lifts it. The ledger records such an
// answer as delivered: the faults.L7 proxy handed it to the faults.L4 leg, which swallowed it.
func (p *Path) DropAnswers() error {
	return p.toxic("oneway_down", "timeout", "downstream", `{"timeout":0}`)
}
