package faults

// OneWayFault lets requests through and stops the answers: the store receives and applies
// every request, and the client never hears back (it waits for its own deadline).
func OneWayFault(name string) Fault {
	return network(name, "drop answers", func(t interface{ DropAnswers() error }) error { return t.DropAnswers() })
}
