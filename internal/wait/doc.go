// Package wait holds the bench's one cancellable pause.
//
// Guarantee: [For] returns true only after the full duration has passed while ctx was still
// live, and false as soon as ctx ends first; it leaves no timer running behind it.
package wait
