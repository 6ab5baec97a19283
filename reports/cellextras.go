package reports

import (
	"net/url"
	"slices"
	"sort"
	"strings"

	"github.com/fencebench/fencebench/checker"
	"github.com/fencebench/fencebench/history"
)

type livenessView struct {
	MaxTimeToFence string      `json:"max_time_to_fence,omitempty"`
	Fenced         []fencedRow `json:"fenced,omitempty"`
	Zombies        []zombieRow `json:"zombies,omitempty"`
	Stuck          []stuckRow  `json:"stuck,omitempty"`
}

type fencedRow struct {
	Writer       string `json:"writer"`
	Term         int64  `json:"term"`
	SupersededBy string `json:"superseded_by"`
	SupersededAt string `json:"superseded_at"`
	FencedAt     string `json:"fenced_at"`
	Delay        string `json:"delay"`
}

type zombieRow struct {
	Writer       string `json:"writer"`
	Term         int64  `json:"term"`
	SupersededBy string `json:"superseded_by"`
	SupersededAt string `json:"superseded_at"`
	LastActive   string `json:"last_active"`
}

type stuckRow struct {
	Writer string `json:"writer"`
	Syncs  int    `json:"syncs"`
	Since  string `json:"since"`
	Tail   string `json:"tail"`
}

type ambiguityView struct {
	Applied     int             `json:"applied"`
	NotApplied  int             `json:"not_applied"`
	Unknown     int             `json:"unknown"`
	Resolutions []resolutionRow `json:"resolutions,omitempty"`
	More        int             `json:"more,omitempty"`
}

type resolutionRow struct {
	Event   eventRow `json:"event"`
	Outcome string   `json:"outcome"`
	Ledger  string   `json:"ledger,omitempty"`
}

type fileLink struct {
	Name string `json:"name"`
	Href string `json:"href"`
}

type kindCountView struct {
	Kind  string `json:"kind"`
	Count int    `json:"count"`
}

func livenessRows(l checker.Liveness) livenessView {
	var v livenessView
	if l.MaxTimeToFence > 0 {
		v.MaxTimeToFence = fmtDur(l.MaxTimeToFence)
	}
	for _, f := range l.Fenced {
		v.Fenced = append(v.Fenced, fencedRow{Writer: f.Writer, Term: f.Term, SupersededBy: f.SupersededBy,
			SupersededAt: fmtAt(f.SupersededAt), FencedAt: fmtAt(f.FencedAt), Delay: fmtDur(f.Delay)})
	}
	for _, z := range l.Zombies {
		v.Zombies = append(v.Zombies, zombieRow{Writer: z.Writer, Term: z.Term, SupersededBy: z.SupersededBy,
			SupersededAt: fmtAt(z.SupersededAt), LastActive: fmtAt(z.LastActive)})
	}
	for _, s := range l.Stuck {
		v.Stuck = append(v.Stuck, stuckRow{Writer: s.Writer, Syncs: s.Syncs, Since: fmtAt(s.Since), Tail: fmtDur(s.Tail)})
	}
	return v
}

func ambiguityRows(s checker.AmbiguityStats, ix map[int64]*history.Event) ambiguityView {
	v := ambiguityView{Applied: s.Applied, NotApplied: s.NotApplied, Unknown: s.Unknown}
	for i, r := range s.Events {
		if i == maxResolutionRows {
			v.More = len(s.Events) - i
			break
		}
		row := resolutionRow{Outcome: r.Outcome, Ledger: fmtOps(r.Ledger)}
		if e := ix[r.Event]; e != nil {
			row.Event = toEventRow(e)
		} else {
			row.Event = eventRow{ID: r.Event, Kind: "?", Missing: true}
		}
		v.Resolutions = append(v.Resolutions, row)
	}
	return v
}

func fileLinks(files []string) []fileLink {
	order := []string{"scenario.yaml", "history.jsonl", "ledger.jsonl", "result.json", "store.log"}
	rank := func(f string) int {
		if i := slices.Index(order, f); i >= 0 {
			return i
		}
		return len(order)
	}
	fs := slices.Clone(files)
	sort.SliceStable(fs, func(i, j int) bool { return rank(fs[i]) < rank(fs[j]) })
	var out []fileLink
	for _, f := range fs {
		if f == "" || f == "report.html" {
			continue
		}
		segs := strings.Split(f, "/")
		for i := range segs {
			segs[i] = url.PathEscape(segs[i])
		}
		out = append(out, fileLink{Name: f, Href: strings.Join(segs, "/")})
	}
	return out
}

func kindCounts(ev []history.Event) []kindCountView {
	m := map[string]int{}
	for i := range ev {
		m[string(ev[i].Kind)]++
	}
	var out []kindCountView
	for _, kc := range sortedCounts(m) {
		out = append(out, kindCountView{Kind: kc.key, Count: kc.n})
	}
	return out
}

// shortKey drops the run and shard part of an object key (everything before translog/ or
// segments/), which is the same for every key of a cell; the full key stays in a tooltip.
func shortKey(k string) string {
	for _, marker := range []string{"/translog/", "/segments/"} {
		if i := strings.Index(k, marker); i >= 0 {
			return "…" + k[i:]
		}
	}
	return k
}
