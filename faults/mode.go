package faults

import "fmt"

// PartitionMode selects how [github.com/fencebench/fencebench/faults/netpath.Path.Partition] cuts a path.
type PartitionMode int

const (
	// Refuse stops the path's proxy: new connections are refused and open ones are closed, so
	// the client fails fast with a connection error.
	Refuse PartitionMode = iota + 1
	// Blackhole keeps connections open (and accepts new ones) but lets no byte through in either
	// direction: the client waits until its own deadline.
	Blackhole
)

// String names the mode ("refuse", "blackhole").
func (m PartitionMode) String() string {
	switch m {
	case Refuse:
		return "refuse"
	case Blackhole:
		return "blackhole"
	}
	return fmt.Sprintf("PartitionMode(%d)", int(m))
}
