package writers

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// A target that never received the handoff message (it was lost) is a standby copy again
// once the source has reverted: not left reserved, so a later promotion takes it.
func TestLostHandoffMessageReturnsTheTargetToStandby(t *testing.T) {
	r, a, tg, res := relocateWith(t, fence.Correct, nil, false,
		RelocateOptions{LoseMessage: true, AnswerTimeout: 20 * time.Millisecond})
	if !res.Resumed || a.State() != StateActive {
		t.Fatalf("relocation with a lost message: %+v, source %s; want the source resumed", res, a.State())
	}
	if tg.State() != StateStandby {
		t.Fatalf("the target that never heard of the relocation is %s; want standby", tg.State())
	}
	if n := len(r.events(history.StandDown, "t")); n != 0 {
		t.Fatalf("the target recorded %d stand-downs; it never took part", n)
	}
	r.promote(tg, 4)
}

// A relocation abandoned while the source drains (the caller's context ends during the final
// sync) reports the drain's end, and the source serves again: it takes new ops and
// acknowledges them.
func TestAbandonedDrainLetsTheSourceServeAgain(t *testing.T) {
	r := memRig(t, func(c *Config) { c.SyncEvery, c.SyncInterval = 5, time.Hour })
	hs := newHold(r.st, isMetadataPut)
	a, tg := r.add("a", hs), r.add("t", nil)
	r.promote(a, 3)
	r.submit(a, 5)
	r.waitAcked(a, 5)
	r.submit(a, 2) // buffered until the drain
	hs.arm()
	rctx, cancel := context.WithCancel(ctx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := a.Relocate(rctx, tg, RelocateOptions{})
		done <- err
	}()
	hs.waitHit(t) // the drain's sync is writing its metadata file
	cancel()
	err := <-done
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "drain") {
		t.Fatalf("relocation abandoned during its drain: %v; want the drain's end", err)
	}
	close(hs.release)
	if a.State() != StateActive || tg.State() != StateStandby {
		t.Fatalf("source %s, target %s; want active and standby", a.State(), tg.State())
	}
	r.submit(a, 5)
	r.waitAcked(a, 12)
}
