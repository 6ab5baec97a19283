package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/fencebench/fencebench/history"
)

// healJudge judges what the copies do once every fault healed: ServesAfterHeal.
type healJudge struct{ *index }

// servesAfterHeal judges the wait the bench records after its Heal event: every Stuck event
// (a copy still promoting, relocating or recovering, or active with an op unacknowledged, at
// the end of the bounded wait) is a violation, and so is an op given to a copy after the heal (an Op
// event invoked after it and not refused) that no Ack holds, unless its copy has a Fenced or
// Crash event after the op. Safety checks cannot see a copy that a failed step left blocked
// (a relocation source that never serves again, a promotion that never ends, a sync loop
// that stopped): no write is lost, the shard is simply unavailable for good.
func (x *healJudge) servesAfterHeal() InvariantResult {
	r := newResult(ServesAfterHeal)
	heal := int32(-1)
	for _, p := range x.order {
		if x.ev[p].Kind == history.Heal {
			heal = p
			break
		}
	}
	if heal < 0 {
		r.Status = Inconclusive
		r.Explanation = "not shown: the run recorded no heal (it ended before the wait that follows one)"
		return r
	}
	healed := x.ev[heal].Complete
	acked := map[int64]bool{}
	for _, p := range x.acks {
		for _, op := range x.ev[p].Ops {
			acked[op] = true
		}
	}
	var why []string
	var ids []int64
	for _, p := range x.order {
		e := &x.ev[p]
		switch {
		case e.Kind == history.Stuck:
			why = append(why, fmt.Sprintf("%s was still %s at %s", e.Writer, e.Detail, secs(e.Complete)))
			ids = append(ids, e.ID)
		case e.Kind == history.Op && e.Invoke >= healed && e.Outcome != history.Fail:
			for _, op := range e.Ops {
				if !acked[op] && !x.endedAfter(e.Writer, e.Invoke) {
					why = append(why, fmt.Sprintf("op %d, given to %s at %s, was never acknowledged, and %s was neither fenced nor crashed",
						op, e.Writer, secs(e.Invoke), e.Writer))
					ids = append(ids, e.ID)
				}
			}
		}
	}
	if len(why) == 0 {
		r.Explanation = fmt.Sprintf("every fault healed at %s; the copies settled and each op given after served", secs(healed))
		return r
	}
	r.Status, r.Violations = Fail, len(why)
	r.Explanation = why[0]
	r.Narrative = fmt.Sprintf("every fault healed at %s, but %s", secs(healed), strings.Join(why, "; "))
	r.Counterexample = append(x.idsOf(heal), ids...)
	return r
}

// endedAfter reports whether w (this incarnation) was fenced or crashed after t.
func (x *healJudge) endedAfter(w string, t time.Duration) bool {
	for _, ps := range [][]int32{x.fenced, x.crashes} {
		for _, p := range ps {
			if e := &x.ev[p]; e.Writer == w && e.Complete >= t {
				return true
			}
		}
	}
	return false
}
