package fence

import (
	"context"
	"fmt"
)

// gates reports whether the segment gates are enforced.
func (f *Fence) gates() bool { return f.o.Variant != NoSegmentGates }

// PublishAllowed is the segment publish gate: publishing a new reference set is skipped only
// if a strictly higher term exists. It fails open: when the fence cannot be read, publishing
// proceeds (collection failing closed is what keeps hydration safe). A missing own key is not
// supersession. reason explains a refusal or a fail-open decision.
func (f *Fence) PublishAllowed(ctx context.Context) (ok bool, reason string) {
	return f.gate(ctx, "publish", f.o.Variant != PublishFailsClosed)
}

// CollectAllowed is the segment and translog collection gate: deletion is skipped if a
// strictly higher term exists or if the fence cannot be read (fails closed).
func (f *Fence) CollectAllowed(ctx context.Context) (ok bool, reason string) {
	return f.gate(ctx, "collection", f.o.Variant == CollectionFailsOpen)
}

// gate refuses what when a strictly higher term exists; when the fence cannot be read it
// allows what only if failOpen.
func (f *Fence) gate(ctx context.Context, what string, failOpen bool) (ok bool, reason string) {
	if !f.gates() {
		return true, "segment gates disabled"
	}
	term := f.Term()
	h, found, err := HighestTerm(ctx, f.o.Store, f.o.Prefix)
	if err != nil {
		if failOpen {
			return true, fmt.Sprintf("fence unreadable (%v); %s fails open", err, what)
		}
		return false, fmt.Sprintf("fence unreadable (%v); %s fails closed", err, what)
	}
	if found && h > term {
		return false, fmt.Sprintf("superseded by term %d", h)
	}
	return true, ""
}
