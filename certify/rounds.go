package certify

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// DefaultRounds is the default of [Options.Rounds]; MaxRounds bounds it.
const (
	DefaultRounds = 1
	MaxRounds     = 100
)

// RoundResult is what one round of a probe with one client showed.
type RoundResult struct {
	Round    int               `json:"round"`
	Verdict  Verdict           `json:"verdict"`
	Cause    string            `json:"cause,omitempty"`
	Observed string            `json:"observed"`
	Facts    map[string]string `json:"facts,omitempty"`
	Duration time.Duration     `json:"duration"`
}

// severity orders verdicts from best to worst, as a trial does: pass, info, error, fail.
var severity = map[Verdict]int{Pass: 0, Info: 1, Error: 2, Fail: 3}

// aggregate folds the rounds of one probe with one client (in round order, round numbers
// from 1) into one result. Its verdict is the worst of any round, so one failing round fails
// the probe; its observation, details and facts are those of the round that decided it: the
// first round with the worst verdict. Duration is the time of all rounds together.
func aggregate(rounds []Result) Result {
	if len(rounds) == 0 {
		return Result{}
	}
	pick := 0
	for i, r := range rounds {
		if severity[r.Verdict] > severity[rounds[pick].Verdict] {
			pick = i
		}
	}
	out := rounds[pick]
	out.Rounds, out.Round, out.Duration, out.Failed, out.PerRound = len(rounds), pick+1, 0, 0, nil
	for i, r := range rounds {
		out.Duration += r.Duration
		if r.Verdict == Fail {
			out.Failed++
		}
		if len(rounds) > 1 {
			out.PerRound = append(out.PerRound, RoundResult{Round: i + 1, Verdict: r.Verdict, Cause: r.Cause, Observed: r.Observed,
				Facts: r.Facts, Duration: r.Duration})
		}
	}
	out.FailureRate = float64(out.Failed) / float64(len(rounds))
	var notes []string
	if flip := flipNote(rounds); flip != "" {
		out.Flipped = true
		notes = append(notes, flip)
	}
	if out.Class == Informational {
		if d := factsNote(rounds); d != "" {
			notes = append(notes, d)
		}
	}
	out.Variation = strings.Join(notes, "; ")
	return out
}

// flipNote says how the verdict flipped between rounds ("flipped: failed 2 of 5 rounds
// (rounds 2, 4)"), or "" when every round agreed.
func flipNote(rounds []Result) string {
	by := map[Verdict][]int{}
	for i, r := range rounds {
		by[r.Verdict] = append(by[r.Verdict], i+1)
	}
	if len(by) < 2 {
		return ""
	}
	var parts []string
	for _, v := range []Verdict{Fail, Error, Info, Pass} {
		if rs := by[v]; len(rs) > 0 {
			verb := map[Verdict]string{Fail: "failed", Error: "errored in", Info: "recorded in", Pass: "passed"}[v]
			parts = append(parts, fmt.Sprintf("%s %d of %d rounds (%s)", verb, len(rs), len(rounds), roundList(rs)))
		}
	}
	return "flipped: " + strings.Join(parts, ", ")
}

// factsNote says which facts of a probe differed between rounds ("observation differs
// between rounds: status=404 in rounds 1, 3; status=412 in round 2"), or "".
func factsNote(rounds []Result) string {
	keys := map[string]bool{}
	for _, r := range rounds {
		for k := range r.Facts {
			keys[k] = true
		}
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(keys)) {
		var order []string
		by := map[string][]int{}
		for i, r := range rounds {
			v, ok := r.Facts[k]
			if !ok {
				v = "(none)"
			}
			if by[v] == nil {
				order = append(order, v)
			}
			by[v] = append(by[v], i+1)
		}
		if len(order) < 2 {
			continue
		}
		for _, v := range order {
			parts = append(parts, fmt.Sprintf("%s=%s in %s", k, v, roundList(by[v])))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "observation differs between rounds: " + strings.Join(parts, "; ")
}

// roundList spells round numbers: "round 2", "rounds 1, 3".
func roundList(rs []int) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = fmt.Sprint(r)
	}
	if len(rs) == 1 {
		return "round " + s[0]
	}
	return "rounds " + strings.Join(s, ", ")
}

// Rate is the result's failure rate as failed rounds over rounds ("0/3"); a result that
// carries no round count (a report from before rounds) counts as one round.
func (x Result) Rate() string {
	n := x.Rounds
	if n == 0 {
		n = 1
	}
	return fmt.Sprintf("%d/%d", x.Failed, n)
}

// roundNote says which round a failed or errored result shows, when there were several
// ("round 2 of 5"), or "".
func (x Result) roundNote() string {
	if x.Rounds < 2 || (x.Verdict != Fail && x.Verdict != Error) {
		return ""
	}
	return fmt.Sprintf("round %d of %d", x.Round, x.Rounds)
}
