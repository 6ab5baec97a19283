package faults

// OneWayFault lets requests through and stops the answers: the store receives and applies
// every request, and the client never hears back (it waits for its own deadline).
func OneWayFault(name string) Fault {
	return network(name, "drop answers", func(t interface{ DropAnswers() error }) error { return t.DropAnswers() })
}

// DropAnswers stops the answer direction of the path (a timeout toxic with timeout 0 on the
// downstream stream): requests still reach the store, which applies them, but no byte of its
// answer reaches the client and nothing is closed. Heal lifts it. The ledger records such an
// answer as delivered: the L7 proxy handed it to the L4 leg, which swallowed it.
func (p *Path) DropAnswers() error {
	return p.toxic("oneway_down", "timeout", "downstream", `{"timeout":0}`)
}
