package reports

import (
	"fmt"
	"strings"

	"github.com/fencebench/fencebench/outcome"
)

// preflightView is the store panel's account of a run's pre-flight.
type preflightView struct {
	// Verdict is "passed", "store unsafe" or "not judged".
	Verdict string `json:"verdict"`
	Class   string `json:"class"`
	// Probes are one line per racing probe run.
	Probes []preflightRow `json:"probes"`
	// Witness is the failed probe's witness, Error why the store could not be judged.
	Witness string `json:"witness,omitempty"`
	Error   string `json:"error,omitempty"`
}

// preflightRow is one racing probe of the pre-flight.
type preflightRow struct {
	Probe   string `json:"probe"`
	Summary string `json:"summary"`
	Class   string `json:"class"`
	Verdict string `json:"verdict"`
}

func preflightOf(pf *outcome.Preflight) *preflightView {
	if pf == nil {
		return nil
	}
	v := &preflightView{Verdict: "passed", Class: "pass", Error: pf.Error}
	switch u := pf.Unsafe(); {
	case u != nil:
		v.Verdict, v.Class, v.Witness = labelStoreUnsafe, "fail", u.Witness
	case pf.Error != "":
		v.Verdict, v.Class = "not judged", "error"
	}
	for _, p := range pf.Probes {
		racers := make([]string, len(p.Racers))
		for i, n := range p.Racers {
			racers[i] = fmt.Sprint(n)
		}
		row := preflightRow{Probe: p.ID + " " + p.Name, Class: "pass", Verdict: "pass",
			Summary: fmt.Sprintf("%d races of %s racers: %d wins, %d refused, %d without answer, %s", p.Races,
				strings.Join(racers, " and "), p.Wins, p.Refused, p.NoAnswer, fmtDur(p.Duration))}
		if len(p.Racers) == 0 {
			row.Summary = fmt.Sprintf("%d keys, one request at a time: %d 2xx, %d refused, %s", p.Races, p.Wins, p.Refused, fmtDur(p.Duration))
		}
		if p.Cut != "" {
			row.Summary += "; a slow store, judged on fewer keys within the pre-flight's time budget (" + p.Cut + ")"
		}
		if p.Witness != "" {
			row.Class, row.Verdict = "fail", labelStoreUnsafe
		}
		v.Probes = append(v.Probes, row)
	}
	return v
}
