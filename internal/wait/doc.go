// Package wait holds the bench's one cancellable pause and the clock a run lives in.
//
// Guarantees: [For] returns true only after the full duration has passed while ctx was still
// live, and false as soon as ctx ends first; it leaves no timer running behind it. A [Clock]
// converts scenario durations to real ones by one factor, its Speed, and a nil *Clock is real
// time, so [Clock.For] on a nil clock is [For].
package wait
