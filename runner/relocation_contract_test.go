package runner

import (
	"errors"
	"testing"

	"github.com/fencebench/fencebench/writers"
)

// TestARelocationsReturnIsHeldToItsContract: an error exactly when the relocation did not
// end, and no active source after a handoff or a stand-down.
func TestARelocationsReturnIsHeldToItsContract(t *testing.T) {
	boom := errors.New("transfer: fenced")
	for _, tc := range []struct {
		name   string
		res    writers.RelocationResult
		err    error
		src    writers.State
		broken bool
	}{
		{"handed off", writers.RelocationHandedOff, nil, writers.StateRelocated, false},
		{"resumed", writers.RelocationResumed, nil, writers.StateActive, false},
		{"stood down", writers.RelocationStoodDown, nil, writers.StateStoodDown, false},
		{"failed", writers.RelocationUnfinished, boom, writers.StateActive, false},
		{"resumed, then crashed", writers.RelocationResumed, nil, writers.StateCrashed, false},
		{"no error and no end", writers.RelocationUnfinished, nil, writers.StateActive, true},
		{"an end and an error", writers.RelocationResumed, boom, writers.StateActive, true},
		{"stood down, yet active", writers.RelocationStoodDown, nil, writers.StateActive, true},
		{"handed off, yet active", writers.RelocationHandedOff, nil, writers.StateActive, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if why := relocationBroken(tc.res, tc.err, tc.src); (why != "") != tc.broken {
				t.Fatalf("relocationBroken = %q, want broken %t", why, tc.broken)
			}
		})
	}
}
