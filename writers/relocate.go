package writers

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/fencebench/fencebench/fence"
	"github.com/fencebench/fencebench/history"
)

// RelocateOptions shape one relocation. What befalls its handoff message and the answer
// (lost, delayed) is no option: it is the handoff faults open on the source's link
// (Writer.Handoffs) when the message is sent.
type RelocateOptions struct {
	// Abort forces an abort at a point; see history.AbortPoint (history.AbortNone: none).
	Abort history.AbortPoint
	// TargetAcks is the number of ops the target must have acknowledged before the source
	// gives up, for history.AbortAfterTargetAcks; 0 means 1. The target must receive traffic.
	TargetAcks int64
	// AnswerTimeout is how long the source waits for the target's answer; 0 means 2s.
	AnswerTimeout time.Duration
	// Prehydrate makes the target hydrate the segment files while the source still serves
	// (the file copy of a peer recovery), before the source blocks and drains; the target
	// catches up at the handoff as always. Only retention protects this same-term hydration.
	Prehydrate bool
}

// RelocationResult says how a relocation ended, one of the Relocation* constants; the zero
// value, RelocationUnfinished, is what a relocation that returned an error gives.
type RelocationResult int

// String names the end ("unfinished", "handed off", "source resumed", "source stood down"), for
// test messages and logs.
func (r RelocationResult) String() string {
	return [...]string{"unfinished", "handed off", "source resumed", "source stood down"}[r]
}

// handoff is the primary context a relocation source hands to its target.
type handoff struct {
	from       string
	term       int64
	lineage    []string
	lastGen    int64
	seq, grant int64 // chain seq of the transfer; the source's grant, which the target carries on
	segGen     int64
	segRefs    []string
	// recoveries are the copies with an ongoing or finished recovery from the source.
	recoveries []*Writer
}

// Relocate moves the primary role from w (active) to target (standby) at w's term: w blocks
// new ops and drains (a final sync), transfers fence ownership to target's allocation
// (recording Transfer with the retained token), and hands the primary context over
// (Handoff). The target hydrates without sealing (Hydrate, Detail "relocation-target"),
// becomes active with a guarded fence instance, and adopts the chain on its first sync
// (Adopt). When the handoff fails — message or answer lost (a handoff fault on w's link),
// a timeout, an abort point — w reverts with the retained token (Revert): resumed, it serves
// again; refused, it stands down (StandDown). A lost answer leaves the target taking over,
// so the revert is refused if it already adopted; a message delayed past AnswerTimeout makes
// w give up while it is in flight, and the target then activates late.
func (w *Writer) Relocate(ctx context.Context, target *Writer, opts RelocateOptions) (RelocationResult, error) {
	var res RelocationResult
	if w.c.cfg.NoFence {
		return res, errors.New("relocate: a relocation needs the fence (NoFence is set)")
	}
	if target == w || target.c != w.c {
		return res, fmt.Errorf("relocate %s: invalid target", w.id)
	}
	if opts.AnswerTimeout <= 0 {
		opts.AnswerTimeout = 2 * time.Second
	}
	if opts.TargetAcks <= 0 {
		opts.TargetAcks = 1
	}
	ctx, cancel := w.bind(ctx)
	defer cancel()
	rl := &relocation{src: w, target: target, opts: opts}

	// 0. Optionally, the target's file copy while the source serves.
	if opts.Prehydrate {
		if err := rl.prehydrate(ctx); err != nil {
			return res, err
		}
	}

	// 1. Block new ops and drain.
	term, err := rl.blockAndDrain(ctx)
	if err != nil {
		return res, err
	}

	// 2. Transfer: the source's last act as owner, uncontested since it is drained.
	if err := rl.transfer(ctx); err != nil {
		target.setState(StateStandby)
		if fence.IsFenced(err) {
			w.becomeFenced(w.f.Key(), err)
		} else {
			w.leave(StateRelocating, StateActive)
		}
		return res, fmt.Errorf("relocate %s: transfer: %w", w.id, err)
	}

	// 3. Hand the primary context over.
	w.mu.Lock()
	h := handoff{from: w.id, term: term, lineage: slices.Clone(w.log.lineage), lastGen: w.log.lastGen,
		seq: w.f.Seq(), grant: w.role.grant, segGen: w.segs.gen, segRefs: slices.Clone(w.segs.refs), recoveries: slices.Clone(w.repl.recoveries)}
	// A recovery that started before this moment finds out that its primary relocated.
	w.repl.epoch++
	w.mu.Unlock()
	sp := w.begin(history.Event{Kind: history.Handoff, Term: term, Key: w.f.Key(), Detail: target.id})
	rl.h, rl.hf = h, w.link.now()
	herr := rl.handOver(ctx)
	if herr == nil {
		ev := sp.End(history.OK, nil)
		w.setState(StateRelocated)
		w.emit(history.SigHandedOff, ev, 0)
		res = RelocationHandedOff
		return res, nil
	}
	sp.End(history.Fail, herr)
	if ctx.Err() != nil {
		rl.release()
		return res, fmt.Errorf("relocate %s: %w", w.id, ctx.Err())
	}

	// 4. Abort: revert with the retained token.
	return rl.abort(ctx)
}

// relocation is one relocation under way: its source and target, its options, the primary
// context handed over and the handoff faults its message meets (the source's link when the
// message is sent). Its methods are the source's side of each step.
type relocation struct {
	src, target *Writer
	opts        RelocateOptions
	h           handoff
	hf          handoffFault
}

// held says the abort point holds the handoff message until the source has given up.
func (rl *relocation) held() bool { return rl.opts.Abort == history.AbortBeforeTargetWrites }

// prehydrate reserves the target at the source's term and hydrates it while the source
// serves. On failure the target is a standby copy again.
func (rl *relocation) prehydrate(ctx context.Context) error {
	w, target := rl.src, rl.target
	w.mu.Lock()
	st, term := w.role.state, w.role.term
	w.mu.Unlock()
	if st != StateActive {
		return fmt.Errorf("relocate %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	target.mu.Lock()
	if err := target.role.reserve(term); err != nil {
		target.mu.Unlock()
		return fmt.Errorf("relocate %s to %s: the target: %w", w.id, target.id, err)
	}
	target.mu.Unlock()
	if _, err := target.hydrate(ctx, term, "relocation-target"); err != nil {
		err = fmt.Errorf("relocate %s to %s: hydration: %w", w.id, target.id, err)
		if ctx.Err() != nil {
			// The relocation was abandoned, not given up by the target.
			target.leave(StateTarget, StateStandby)
		} else {
			target.giveUp(term, err)
		}
		return err
	}
	return nil
}

// giveUp is a relocation target's side of a handoff it cannot complete (its hydration
// failed): it never touched the fence, so it only stands down at term — recording StandDown
// with Detail "relocation-target" and why — and is a standby copy again, which may serve
// later under a grant at another term. The source learns of it from the handoff's answer, or
// its timeout, and reverts. A target no longer reserved (crashed, closed) records nothing.
func (w *Writer) giveUp(term int64, why error) {
	w.mu.Lock()
	if !w.role.leave(StateTarget, StateStandby) {
		w.mu.Unlock()
		return
	}
	w.role.gaveUp = term
	w.mu.Unlock()
	ev := w.record(history.Event{Kind: history.StandDown, Term: term, Key: w.c.cfg.Shard.FenceKey(term),
		Detail: "relocation-target", Err: why.Error()})
	w.emit(history.SigStoodDown, ev, 0)
}

// blockAndDrain blocks new ops on the source, drains it and reserves the target at the
// source's term (unless prehydrate did already). On failure the source serves again and the
// target is a standby copy again.
func (rl *relocation) blockAndDrain(ctx context.Context) (int64, error) {
	w, target, reserved := rl.src, rl.target, rl.opts.Prehydrate
	w.mu.Lock()
	if w.role.state != StateActive {
		st := w.role.state
		w.mu.Unlock()
		if reserved {
			target.leave(StateTarget, StateStandby)
		}
		return 0, fmt.Errorf("relocate %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	term := w.role.term
	w.role.become(StateRelocating)
	w.mu.Unlock()
	if err := w.loop.drain(ctx); err != nil {
		w.leave(StateRelocating, StateActive)
		if reserved {
			target.leave(StateTarget, StateStandby)
		}
		return 0, fmt.Errorf("relocate %s: drain: %w", w.id, err)
	}
	w.emit(history.SigDrained, history.Event{Writer: w.id, Term: term}, 0)

	target.mu.Lock()
	if reserved && target.role.state == StateTarget {
		target.mu.Unlock()
		return term, nil
	}
	if err := target.role.reserve(term); err != nil {
		target.mu.Unlock()
		w.leave(StateRelocating, StateActive)
		return 0, fmt.Errorf("relocate %s to %s: the target: %w", w.id, target.id, err)
	}
	target.mu.Unlock()
	return term, nil
}

// handOver sends the handoff message to the target (unless the link's faults lose it, or the
// abort point holds it) and waits for the answer; nil means the target answered that it took
// over.
func (rl *relocation) handOver(ctx context.Context) error {
	w, target, opts, hf, h := rl.src, rl.target, rl.opts, rl.hf, rl.h
	answer := make(chan error, 1)
	if !hf.loseMessage && !rl.held() {
		silent := hf.loseAnswer || opts.Abort == history.AbortAfterTargetAcks
		w.c.bg.Add(1)
		w.c.cfg.Guard.Go("the handoff to "+target.id, func() {
			if hf.delay > 0 && !w.c.cfg.Clock.For(target.life, hf.delay) {
				return
			}
			err := target.receiveHandoff(h)
			if !silent {
				answer <- err
			}
		}, w.c.bg.Done)
	}
	if opts.Abort == history.AbortAfterTargetAcks && !hf.loseMessage {
		// The answer is lost; the source gives up only after the target has served, or
		// stopped before it could (a lost message, below, falls to the answer timeout).
		return rl.awaitTargetAcks(ctx)
	}
	t := w.c.cfg.Clock.NewTimer(opts.AnswerTimeout)
	defer t.Stop()
	select {
	case err := <-answer:
		if err != nil {
			return fmt.Errorf("target refused the handoff: %w", err)
		}
		return nil
	case <-t.C:
		switch {
		case hf.loseMessage || rl.held():
			return errors.New("handoff message lost: no answer before the timeout")
		case hf.loseAnswer:
			return errors.New("handoff answer lost: no answer before the timeout")
		default:
			return errors.New("no handoff answer before the timeout")
		}
	case <-ctx.Done():
		return ctx.Err()
	}
}

// abort reverts with the retained token after a failed handoff, returns a target that never
// heard of the relocation to standby, and delivers a held message late.
func (rl *relocation) abort(ctx context.Context) (RelocationResult, error) {
	var res RelocationResult
	w, target, h := rl.src, rl.target, rl.h
	resumed, err := rl.revert(ctx)
	if err != nil {
		rl.release()
		return res, fmt.Errorf("relocate %s: revert: %w", w.id, err)
	}
	res = revertResult(resumed)
	if rl.hf.loseMessage && !rl.held() {
		// The target never heard of the relocation: it is a standby copy again.
		target.leave(StateTarget, StateStandby)
	}
	if rl.held() {
		// The message was only delayed: it reaches the target now, after the abort.
		w.c.bg.Add(1)
		w.c.cfg.Guard.Go("the delayed handoff to "+target.id, func() { _ = target.receiveHandoff(h) }, w.c.bg.Done)
	}
	return res, nil
}

// transfer hands the source's fence ownership to the target's allocation, recording
// Transfer with the retained token, retrying while the outcome is unknown (a read-back that
// came back garbled included). A refusal for the store's configuration (a 403) ends it only
// while every earlier attempt is known not to have landed: after an unknown one it tries
// again, or the source would serve on a chain its own write may have handed over, and fence
// itself at its next sync with nobody superseding it.
func (rl *relocation) transfer(ctx context.Context) error {
	w, target := rl.src, rl.target
	unknown := false
	for attempt := 1; ; attempt++ {
		sp := w.begin(history.Event{Kind: history.Transfer, Term: w.Term(), Key: w.f.Key(), Detail: target.id,
			Token: w.f.Token()})
		err := w.f.Transfer(ctx, target.alloc)
		if err == nil {
			sp.Event().Token, sp.Event().Seq = w.f.Token(), w.f.Seq()
		}
		ev := sp.End(fenceOutcome(err), err)
		if err == nil {
			w.emit(history.SigTransferred, ev, 0)
			return nil
		}
		unknown = unknown || retryable(err) || garbled(err)
		if !retryable(err) && !garbled(err) && !(unknown && untold(err)) || ctx.Err() != nil {
			return err
		}
		if !w.backoff(ctx, attempt) {
			return ctx.Err()
		}
	}
}

// revert presents the source's retained token. Resumed: the source owns the chain again and
// serves in a new generation band. Refused: it stands down. It tries again while the outcome
// is unknown (a read-back that came back garbled included) or the store refused the request
// for its configuration.
func (rl *relocation) revert(ctx context.Context) (bool, error) {
	w := rl.src
	term := w.Term()
	for attempt := 1; ; attempt++ {
		sp := w.begin(history.Event{Kind: history.Revert, Term: term, Key: w.f.Key(), Token: w.f.Token()})
		resumed, err := w.f.Revert(ctx)
		switch {
		case err == nil && resumed:
			sp.Event().Token, sp.Event().Seq = w.f.Token(), w.f.Seq()
			ev := sp.End(history.OK, nil)
			w.mu.Lock()
			if w.role.state == StateRelocating && w.c.cfg.Variant != fence.ResumeStaysBlocked {
				s := w.f.Seq()
				w.log.resume(s)
				w.segs.resume(s)
				w.role.become(StateActive)
			}
			w.mu.Unlock()
			w.emit(history.SigReverted, ev, 0)
			return true, nil
		case err == nil:
			reason := errors.New("revert refused: the key moved past the retained token")
			if ferr := w.f.FencedErr(); ferr != nil {
				reason = ferr
			}
			sp.End(history.Fail, reason)
			w.mu.Lock()
			w.log.drop()
			w.role.become(StateStoodDown)
			w.mu.Unlock()
			ev := w.record(history.Event{Kind: history.StandDown, Term: term, Key: w.f.Key(), Err: reason.Error()})
			w.emit(history.SigStoodDown, ev, 0)
			return false, nil
		}
		sp.End(fenceOutcome(err), err)
		if !retryable(err) && !untold(err) && !garbled(err) || ctx.Err() != nil {
			return false, err
		}
		if !w.backoff(ctx, attempt) {
			return false, ctx.Err()
		}
	}
}

// receiveHandoff is the target's side: hydrate without sealing, then become active with a
// guarded instance whose first sync adopts the chain by recorded ownership.
func (w *Writer) receiveHandoff(h handoff) error {
	if st := w.State(); st != StateTarget {
		return fmt.Errorf("handoff to %s: it is %s: %w", w.id, st, ErrNotServing)
	}
	hy, err := w.hydrate(w.life, h.term, "relocation-target")
	if err == nil && hy.key == "" && w.c.cfg.Variant == fence.TargetRefusesEmptyShard {
		err = errors.New("no published reference set to hydrate from")
	}
	if err != nil {
		err = fmt.Errorf("handoff to %s: hydration: %w", w.id, err)
		w.giveUp(h.term, err)
		return err
	}
	f, err := fence.New(w.fenceOptions(h.term, true, w.c.cfg.Variant))
	if err != nil {
		return err
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.role.state != StateTarget {
		return fmt.Errorf("handoff to %s: it became %s: %w", w.id, w.role.state, ErrNotServing)
	}
	w.f, w.role.target, w.role.grant = f, true, h.grant // the source's place in the term's grant order
	if w.c.cfg.Variant != fence.TargetIgnoresRecoveries {
		// The target replicates to every copy its source had started recovering.
		w.repl.follow(h.recoveries...)
	}
	w.log.grant(h.lineage, h.lastGen, h.seq)
	w.segs.gen = h.segGen
	if hy.key == "" {
		// Nothing published in the store yet: take the source's set as known.
		hy.refs = h.segRefs
	}
	w.segs.adopt(hy, h.term, h.seq)
	w.role.become(StateActive)
	w.startLoop()
	return nil
}

// How a relocation ends.
const (
	// RelocationUnfinished: the relocation returned an error before it ended.
	RelocationUnfinished RelocationResult = iota
	// RelocationHandedOff: the source heard the target's answer and stepped aside.
	RelocationHandedOff
	// RelocationResumed: the handoff failed and the source's revert succeeded; it serves again.
	RelocationResumed
	// RelocationStoodDown: the handoff failed and the revert was refused; the source stopped
	// serving.
	RelocationStoodDown
)

// revertResult is how a relocation whose handoff failed ends: resumed when the revert
// succeeded, stood down when it was refused.
func revertResult(resumed bool) RelocationResult {
	if resumed {
		return RelocationResumed
	}
	return RelocationStoodDown
}

// awaitTargetAcks is the source's wait when the abort point loses the handoff's answer after
// the target served: it gives up once the target has acknowledged opts.TargetAcks ops, or
// once the target stopped without doing so (it crashed, was fenced or gave the handoff up), so
// the source never waits for good on a target that will not serve.
func (rl *relocation) awaitTargetAcks(ctx context.Context) error {
	served, err := rl.src.c.bus.waitAckedOrStopped(ctx, rl.target.id, rl.opts.TargetAcks,
		history.SigCrashed, history.SigFenced, history.SigStoodDown)
	switch {
	case err != nil:
		return err
	case served:
		return errors.New("handoff answer lost (the target adopted and acknowledged)")
	}
	return errors.New("handoff answer lost (the target stopped before it acknowledged)")
}

// release returns the target to standby when the relocation ends without a handoff message
// that will reach it (lost, or held for an abort that did not finish): a target reserved for
// a message that never comes would otherwise wait as a target for good. A target that heard
// of the relocation answers for itself.
func (rl *relocation) release() {
	if rl.hf.loseMessage || rl.held() {
		rl.target.leave(StateTarget, StateStandby)
	}
}
