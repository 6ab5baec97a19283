package runner

import (
	"fmt"

	"github.com/fencebench/fencebench/history"
	"github.com/fencebench/fencebench/outcome"
	"github.com/fencebench/fencebench/writers"
)

// trafficCounts turns the clients' counts into the cell result's.
func trafficCounts(st writers.TrafficStats) *outcome.Traffic {
	return &outcome.Traffic{Sent: st.Sent, Accepted: st.Accepted, Refused: st.Refused,
		Unrouted: st.Unrouted, Skipped: st.Skipped}
}

// trafficAgrees checks the clients' counts against the history: every op a client sent is
// one Op event recorded before the heal probe's (the probe's own ops follow its Heal event),
// ok when the writer accepted it and fail when it refused. A difference means the history
// lost or invented a submission, so the checker would judge a history that is not the run's:
// a harness error, not a verdict.
func trafficAgrees(t *outcome.Traffic, events []history.Event) error {
	var ok, refused int64
	for _, e := range events {
		if e.Kind == history.Heal {
			break
		}
		if e.Kind != history.Op {
			continue
		}
		if e.Outcome == history.Fail {
			refused++
		} else {
			ok++
		}
	}
	if t.Sent != t.Accepted+t.Refused || ok != t.Accepted || refused != t.Refused {
		return fmt.Errorf("the clients sent %d ops (%d accepted, %d refused), the history holds %d accepted and %d refused submissions",
			t.Sent, t.Accepted, t.Refused, ok, refused)
	}
	return nil
}
